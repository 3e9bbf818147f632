package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// pgRenewLease is a worker's heartbeat: while it holds a run it moves the
// lease's end (wake_at, the due index's key: a run whose lease ended is
// claimable again) to now + lease. One statement, fenced by the token; it
// touches one indexed column, once per heartbeat, never per step.
const pgRenewLease = pgClock + `
UPDATE _sky_durable_runs r
   SET claimed_at = clock.now, wake_at = clock.now + CAST(? AS BIGINT) * INTERVAL '1 millisecond'
  FROM clock
 WHERE r.id = ? AND r.lease_token = ?`

func (s *Store) RenewLease(ctx context.Context, f store.Fence, lease time.Duration, now time.Time) error {
	n, err := s.exec(ctx, s.d, "heartbeat", pgRenewLease, clockArg(now), lease.Milliseconds(), f.RunID, f.Token)
	return store.LeaseChecked(n, err)
}

// pgReleaseRunSets are the columns an operator's release sets (ReleaseRun,
// BulkAct).
const pgReleaseRunSets = `status = CASE WHEN r.last_error <> '' THEN ` + store.SQLFailed + ` ELSE ` + store.SQLWaiting + ` END,
       wake_at = clock.now, claimed_at = NULL, lease_token = NULL, updated_at = clock.now`

// pgReleaseRun frees a running run whatever its token (an operator knows
// its worker is dead): as Release, but the attempt the dead worker took
// stays counted, as a crash does.
// It records the release, by the operator (the last parameter), with the
// worker that held the run as its detail.
var pgReleaseRun = pgClock + `,
released AS (
  UPDATE _sky_durable_runs r
     SET ` + pgReleaseRunSets + `, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ? AND r.status = ` + store.SQLRunning + `
  RETURNING r.id, r.history_count, r.claimed_by, r.attempts),
` + pgTrim("trimmed", "released") + `
` + pgRecord(`released s`, `clock.now`, `'released'`, `CAST(? AS TEXT)`, `s.attempts`, `s.claimed_by`, `''`)

func (s *Store) ReleaseRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "release", pgReleaseRun, clockArg(now), runID, store.ActorOf(ctx))
	return n == 1, err
}
