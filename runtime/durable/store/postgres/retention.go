package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// pgTakeTurn moves a job's next turn on when it is due: the insert takes
// a job's first turn, the update a later one; a concurrent caller waits for
// the winner's row lock, then sees its next_at and gets no row.
const pgTakeTurn = pgClock + `
INSERT INTO _sky_durable_turns (job, next_at)
SELECT ?, clock.now + CAST(? AS BIGINT) * INTERVAL '1 millisecond' FROM clock
ON CONFLICT (job) DO UPDATE SET next_at = EXCLUDED.next_at
 WHERE _sky_durable_turns.next_at <= (SELECT now FROM clock)
RETURNING 1`

func (s *Store) TakeTurn(ctx context.Context, job string, every time.Duration, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "turn", pgTakeTurn, clockArg(now), job, every.Milliseconds())
	return n == 1, err
}

// pgNoRun says signal s names no run: a probe of the runs' primary key,
// written as a scalar subquery, not NOT EXISTS: PostgreSQL turns NOT EXISTS
// into an anti join, and with many signals to check it hashes every run (a
// sequential scan of the runs) instead of probing.
const pgNoRun = `(SELECT r.id FROM _sky_durable_runs r WHERE r.id = s.run_id) IS NULL`

// pgOrphanSignals walks the signals from the oldest (their created_at
// index) and keeps those whose run id no run has: the cost is the signals
// older than the last orphan listed.
const pgOrphanSignals = `
SELECT s.run_id, s.name, octet_length(s.payload), s.created_at FROM _sky_durable_signals s
 WHERE ` + pgNoRun + ` AND ` + store.ScopeSignals + `
 ORDER BY s.created_at
 LIMIT ?`

func (s *Store) ListOrphanSignals(ctx context.Context, limit int, scope store.Scope) ([]store.OrphanSignal, error) {
	s.hook("orphan signals", pgOrphanSignals)
	return store.QueryAll(ctx, s.d, pgOrphanSignals, append(scope.Args(), limit), func(scan func(...any) error) (store.OrphanSignal, error) {
		var o store.OrphanSignal
		err := scan(&o.RunID, &o.Name, &o.Bytes, &o.CreatedAt)
		return o, err
	})
}

// pgExpireOrphanSignals deletes the oldest orphan signals sent before the
// cutoff (a range of the created_at index). A run started with such an id
// after the check would not see its signal: it came more than the TTL
// before the run.
const pgExpireOrphanSignals = pgClock + `
DELETE FROM _sky_durable_signals d
 WHERE (d.run_id, d.name) IN (
  SELECT s.run_id, s.name FROM _sky_durable_signals s
   WHERE s.created_at < (SELECT now FROM clock) - CAST(? AS BIGINT) * INTERVAL '1 millisecond'
     AND ` + pgNoRun + `
   ORDER BY s.created_at
   LIMIT ?)`

func (s *Store) ExpireOrphanSignals(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, error) {
	return s.exec(ctx, s.d, "expire signals", pgExpireOrphanSignals, clockArg(now), olderThan.Milliseconds(), limit)
}
