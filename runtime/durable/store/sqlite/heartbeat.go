package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// sqliteRenewLease is a worker's heartbeat (see the PostgreSQL store): it
// moves the end of the lease (wake_at) to now + lease.
const sqliteRenewLease = `
UPDATE _sky_durable_runs SET claimed_at = ?, wake_at = ?
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning

func (s *Store) RenewLease(ctx context.Context, f store.Fence, lease time.Duration, now time.Time) error {
	n, err := s.exec(ctx, s.d, "heartbeat", sqliteRenewLease, ms(now), ms(now.Add(lease)), f.RunID, f.Token)
	return store.LeaseChecked(n, err)
}

// sqliteReleaseRun frees a running run whatever its token; the dead
// worker's attempt stays counted. It records the release by the operator
// (the first parameter), with the worker that held the run as its detail.
var sqliteReleaseRun = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("'released'", "?", "attempts", "claimed_by", "''", "?") + `,
       status = CASE WHEN last_error <> '' THEN ` + store.SQLFailed + ` ELSE ` + store.SQLWaiting + ` END,
       wake_at = ?, claimed_at = NULL, lease_token = NULL, updated_at = ?
 WHERE id = ? AND status = ` + store.SQLRunning

func (s *Store) ReleaseRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "release", sqliteReleaseRun, store.ActorOf(ctx), ms(now), ms(now), ms(now), runID)
	return n == 1, err
}
