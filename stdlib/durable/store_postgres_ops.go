package durable

import (
	"context"
	"time"
)

// pgCompactBatch compacts one batch in one statement (so one short
// transaction): it locks up to LIMIT finished, not yet compacted runs older
// than the retention, oldest first, on the partial index
// _sky_durable_runs_compactable, skipping rows another transaction holds;
// deletes their journal and signal rows; and stamps them compacted_at, which
// takes them out of that index. A live run is never selected: its status is
// not done or cancelled, and a finished run never becomes live again.
const pgCompactBatch = pgClock + `,
picked AS (
  SELECT r.id FROM _sky_durable_runs r, clock
   WHERE r.status IN ('done','cancelled') AND r.compacted_at IS NULL
     AND r.updated_at < clock.now - CAST(? AS BIGINT) * INTERVAL '1 millisecond'
   ORDER BY r.updated_at
   LIMIT ?
   FOR UPDATE OF r SKIP LOCKED),
journal AS (DELETE FROM _sky_durable_journal j USING picked WHERE j.run_id = picked.id RETURNING 1),
signals AS (DELETE FROM _sky_durable_signals s USING picked WHERE s.run_id = picked.id RETURNING 1),
stamped AS (
  UPDATE _sky_durable_runs r SET compacted_at = clock.now
    FROM picked, clock
   WHERE r.id = picked.id
  RETURNING 1)
SELECT (SELECT COUNT(*) FROM stamped), (SELECT COUNT(*) FROM journal) + (SELECT COUNT(*) FROM signals)`

func (s *pgStore) compactBatch(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, int64, error) {
	var runs, rows int64
	s.hook("compact", pgCompactBatch)
	err := s.d.QueryRow(ctx, pgCompactBatch, clockArg(now), olderThan.Milliseconds(), limit).Scan(&runs, &rows)
	return runs, rows, err
}

const pgListSignals = `SELECT name, payload, delivered, created_at FROM _sky_durable_signals WHERE run_id = ? ORDER BY created_at, name`

func (s *pgStore) listSignals(ctx context.Context, runID string) ([]SignalInfo, error) {
	s.hook("signals", pgListSignals)
	return queryAll(ctx, s.d, pgListSignals, []any{runID}, func(scan func(...any) error) (SignalInfo, error) {
		var si SignalInfo
		err := scan(&si.Name, &si.Payload, &si.Delivered, &si.CreatedAt)
		return si, err
	})
}
