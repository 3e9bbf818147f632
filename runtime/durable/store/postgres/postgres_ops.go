package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// pgCompactBatch compacts one batch in one statement (so one short
// transaction): it locks up to LIMIT finished, not yet compacted runs last
// updated before the cutoff, oldest first, skipping rows another
// transaction holds; deletes their journal and signal rows; and stamps them
// compacted_at, which takes them out of the partial index
// _sky_durable_runs_compactable. That index is on created_at, not
// updated_at: it holds the runs from their start, and an index of live runs on
// updated_at would make every change of a run a non-HOT update. A run is updated after it is created, so
// created_at < cutoff bounds the index scan, and each batch starts where
// the previous one ended (created_at >= from): the entries of runs compacted
// by earlier batches stay in the index as dead tuples until VACUUM, and
// rescanning them from the start would make each batch slower than the last. The cutoff is a scalar subquery
// and the deletes take an array of ids, so both are index conditions (a join
// on the CTE lets the planner pick a sequential scan of the signals). A live run is never selected:
// its status is not done or cancelled, and a finished run never becomes live
// again.
const pgCompactBatch = pgClock + `,
cutoff AS (SELECT clock.now - CAST(? AS BIGINT) * INTERVAL '1 millisecond' AS at FROM clock),
picked AS (
  SELECT r.id, r.created_at FROM _sky_durable_runs r
   WHERE r.status IN (` + store.SQLCompactable + `) AND r.compacted_at IS NULL
     AND r.created_at >= COALESCE(CAST(? AS TIMESTAMPTZ), '-infinity')
     AND r.created_at < (SELECT at FROM cutoff) AND r.updated_at < (SELECT at FROM cutoff)
     AND ` + store.ScopeRunsID + `
   ORDER BY r.created_at
   LIMIT ?
   FOR UPDATE OF r SKIP LOCKED),
ids AS (SELECT ARRAY(SELECT id FROM picked) AS ids),
journal AS (DELETE FROM _sky_durable_journal j WHERE j.run_id = ANY (CAST((SELECT ids FROM ids) AS TEXT[])) RETURNING 1),
signals AS (DELETE FROM _sky_durable_signals s WHERE s.run_id = ANY (CAST((SELECT ids FROM ids) AS TEXT[])) RETURNING 1),
history AS (DELETE FROM _sky_durable_history h WHERE h.run_id = ANY (CAST((SELECT ids FROM ids) AS TEXT[])) RETURNING 1),
stamped AS (
  UPDATE _sky_durable_runs r SET compacted_at = clock.now
    FROM picked, clock
   WHERE r.id = picked.id
  RETURNING 1)
SELECT (SELECT COUNT(*) FROM stamped), (SELECT COUNT(*) FROM journal) + (SELECT COUNT(*) FROM signals),
       (SELECT MAX(created_at) FROM picked)`

func (s *Store) CompactBatch(ctx context.Context, olderThan time.Duration, limit int, from, now time.Time, scope store.Scope) (int64, int64, time.Time, error) {
	var runs, rows int64
	var last *time.Time
	var fromArg any
	if !from.IsZero() {
		fromArg = from
	}
	s.hook("compact", pgCompactBatch)
	err := s.d.QueryRow(ctx, pgCompactBatch, append(append([]any{clockArg(now), olderThan.Milliseconds(), fromArg}, scope.Args()...), limit)...).Scan(&runs, &rows, &last)
	if last == nil {
		return runs, rows, from, err
	}
	return runs, rows, *last, err
}

const pgListSignals = `SELECT name, payload, delivered, created_at FROM _sky_durable_signals WHERE run_id = ? ORDER BY created_at, name`

func (s *Store) ListSignals(ctx context.Context, runID string) ([]store.SignalInfo, error) {
	s.hook("signals", pgListSignals)
	return store.QueryAll(ctx, s.d, pgListSignals, []any{runID}, func(scan func(...any) error) (store.SignalInfo, error) {
		var si store.SignalInfo
		err := scan(&si.Name, &si.Payload, &si.Delivered, &si.CreatedAt)
		return si, err
	})
}
