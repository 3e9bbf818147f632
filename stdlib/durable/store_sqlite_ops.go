package durable

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
)

// sqlitePickCompactable lists one batch of finished, not yet compacted runs
// older than the retention, oldest first, on the partial index
// _sky_durable_runs_compactable.
const sqlitePickCompactable = `
SELECT id FROM _sky_durable_runs
 WHERE status IN ('done','cancelled') AND compacted_at IS NULL AND updated_at < ?
 ORDER BY updated_at
 LIMIT ?`

const sqliteDeleteJournalOf = `DELETE FROM _sky_durable_journal WHERE run_id IN (SELECT value FROM json_each(?))`

const sqliteDeleteSignalsOf = `DELETE FROM _sky_durable_signals WHERE run_id IN (SELECT value FROM json_each(?))`

const sqliteStampCompactedOf = `UPDATE _sky_durable_runs SET compacted_at = ?
 WHERE id IN (SELECT value FROM json_each(?)) AND status IN ('done','cancelled')`

// compactBatch compacts one batch in one transaction (SQLite holds its
// single writer lock for it, so batches keep that lock short).
func (s *sqliteStore) compactBatch(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, int64, error) {
	var runs, rows int64
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		runs, rows = 0, 0
		s.hook("compact", sqlitePickCompactable)
		ids, err := queryAll(ctx, tx, sqlitePickCompactable, []any{ms(now.Add(-olderThan)), limit}, func(scan func(...any) error) (string, error) {
			var id string
			return id, scan(&id)
		})
		if err != nil || len(ids) == 0 {
			return err
		}
		idsJSON, _ := json.Marshal(ids)
		for _, sql := range []string{sqliteDeleteJournalOf, sqliteDeleteSignalsOf} {
			n, err := s.exec(ctx, tx, "compact", sql, string(idsJSON))
			if err != nil {
				return err
			}
			rows += n
		}
		runs, err = s.exec(ctx, tx, "compact", sqliteStampCompactedOf, ms(now), string(idsJSON))
		return err
	})
	return runs, rows, err
}

const sqliteListSignals = `SELECT name, payload, delivered, created_at FROM _sky_durable_signals WHERE run_id = ? ORDER BY created_at, name`

func (s *sqliteStore) listSignals(ctx context.Context, runID string) ([]SignalInfo, error) {
	s.hook("signals", sqliteListSignals)
	return queryAll(ctx, s.d, sqliteListSignals, []any{runID}, func(scan func(...any) error) (SignalInfo, error) {
		var si SignalInfo
		var created int64
		err := scan(&si.Name, &si.Payload, &si.Delivered, &created)
		si.CreatedAt = fromMs(created)
		return si, err
	})
}
