package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// sqliteTakeTurn moves a job's next turn on when it is due (the insert
// takes a job's first turn); SQLite's single writer makes it atomic.
const sqliteTakeTurn = `
INSERT INTO _sky_durable_turns (job, next_at) VALUES (?, ?)
ON CONFLICT (job) DO UPDATE SET next_at = excluded.next_at
 WHERE _sky_durable_turns.next_at <= ?`

func (s *Store) TakeTurn(ctx context.Context, job string, every time.Duration, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "turn", sqliteTakeTurn, job, ms(now.Add(every)), ms(now))
	return n == 1, err
}

// sqliteOrphanSignals: see pgOrphanSignals.
const sqliteOrphanSignals = `
SELECT s.run_id, s.name, length(CAST(s.payload AS BLOB)), s.created_at FROM _sky_durable_signals s
 WHERE NOT EXISTS (SELECT 1 FROM _sky_durable_runs r WHERE r.id = s.run_id) AND ` + store.ScopeSignals + `
 ORDER BY s.created_at
 LIMIT ?`

func (s *Store) ListOrphanSignals(ctx context.Context, limit int, scope store.Scope) ([]store.OrphanSignal, error) {
	s.hook("orphan signals", sqliteOrphanSignals)
	return store.QueryAll(ctx, s.d, sqliteOrphanSignals, append(scope.Args(), limit), func(scan func(...any) error) (store.OrphanSignal, error) {
		var o store.OrphanSignal
		var created int64
		err := scan(&o.RunID, &o.Name, &o.Bytes, &created)
		o.CreatedAt = store.FromMs(created)
		return o, err
	})
}

// sqliteExpireOrphanSignals: see pgExpireOrphanSignals.
const sqliteExpireOrphanSignals = `
DELETE FROM _sky_durable_signals
 WHERE (run_id, name) IN (
  SELECT s.run_id, s.name FROM _sky_durable_signals s
   WHERE s.created_at < ?
     AND NOT EXISTS (SELECT 1 FROM _sky_durable_runs r WHERE r.id = s.run_id)
   ORDER BY s.created_at
   LIMIT ?)`

func (s *Store) ExpireOrphanSignals(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, error) {
	return s.exec(ctx, s.d, "expire signals", sqliteExpireOrphanSignals, ms(now.Add(-olderThan)), limit)
}
