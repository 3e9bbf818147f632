package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// sqlitePickCompactable lists one batch of finished, not yet compacted runs
// last updated before the cutoff, oldest first, on the partial index
// _sky_durable_runs_compactable (created_at; a run is updated after it is
// created, so created_at < cutoff bounds the scan).
const sqlitePickCompactable = `
SELECT id, created_at FROM _sky_durable_runs INDEXED BY _sky_durable_runs_compactable
 WHERE status IN (` + store.SQLCompactable + `) AND compacted_at IS NULL
   AND created_at >= ? AND created_at < ? AND updated_at < ? AND ` + store.ScopeID + `
 ORDER BY created_at
 LIMIT ?`

const sqliteDeleteJournalOf = `DELETE FROM _sky_durable_journal WHERE run_id IN (SELECT value FROM json_each(?))`

const sqliteDeleteSignalsOf = `DELETE FROM _sky_durable_signals WHERE run_id IN (SELECT value FROM json_each(?))`

const sqliteDeleteHistoryOf = `DELETE FROM _sky_durable_history WHERE run_id IN (SELECT value FROM json_each(?))`

const sqliteStampCompactedOf = `UPDATE _sky_durable_runs SET compacted_at = ?
 WHERE id IN (SELECT value FROM json_each(?)) AND status IN (` + store.SQLCompactable + `)`

// CompactBatch compacts one batch in one transaction (SQLite holds its
// single writer lock for it, so batches keep that lock short).
func (s *Store) CompactBatch(ctx context.Context, olderThan time.Duration, limit int, from, now time.Time, scope store.Scope) (int64, int64, time.Time, error) {
	var runs, rows int64
	last := from
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		runs, rows, last = 0, 0, from
		cutoff := ms(now.Add(-olderThan))
		s.hook("compact", sqlitePickCompactable)
		type picked struct {
			id      string
			created int64
		}
		found, err := store.QueryAll(ctx, tx, sqlitePickCompactable, append(append([]any{max(ms(from), 0), cutoff, cutoff}, scope.Args()...), limit), func(scan func(...any) error) (picked, error) {
			var p picked
			return p, scan(&p.id, &p.created)
		})
		if err != nil || len(found) == 0 {
			return err
		}
		ids := make([]string, len(found))
		for i, p := range found {
			ids[i] = p.id
		}
		last = store.FromMs(found[len(found)-1].created)
		idsJSON, _ := json.Marshal(ids)
		for _, sql := range []string{sqliteDeleteJournalOf, sqliteDeleteSignalsOf} {
			n, err := s.exec(ctx, tx, "compact", sql, string(idsJSON))
			if err != nil {
				return err
			}
			rows += n
		}
		// The history goes too, not counted: the rows are the journal's and the mailbox's.
		if _, err := s.exec(ctx, tx, "compact", sqliteDeleteHistoryOf, string(idsJSON)); err != nil {
			return err
		}
		runs, err = s.exec(ctx, tx, "compact", sqliteStampCompactedOf, ms(now), string(idsJSON))
		return err
	})
	return runs, rows, last, err
}

const sqliteListSignals = `SELECT name, payload, delivered, created_at FROM _sky_durable_signals WHERE run_id = ? ORDER BY created_at, name`

func (s *Store) ListSignals(ctx context.Context, runID string) ([]store.SignalInfo, error) {
	s.hook("signals", sqliteListSignals)
	return store.QueryAll(ctx, s.d, sqliteListSignals, []any{runID}, func(scan func(...any) error) (store.SignalInfo, error) {
		var si store.SignalInfo
		var created int64
		err := scan(&si.Name, &si.Payload, &si.Delivered, &created)
		si.CreatedAt = store.FromMs(created)
		return si, err
	})
}
