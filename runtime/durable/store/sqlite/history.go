package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// A run's history on SQLite (migration 0011, store/history.go): the
// statement that changes a run also counts the event on the run row and
// writes it to history_note (sqliteNote), and the trigger of migration 0011
// inserts it (and drops the event the bound drops) within that statement: no
// statement more.

// sqliteNote is the SET items recording one event with the given SQL
// expressions (evaluated on the row before the update): kind, actor (NULL:
// the run's worker, claimed_by), attempt, detail, step and time (ms).
func sqliteNote(kind, actor, attempt, detail, step, at string) string {
	return `history_count = history_count + 1,
       history_note = json_array(` + kind + `, ` + actor + `, ` + attempt + `, ` + detail + `, ` + step + `, ` + at + `)`
}

// sqliteDoneNote records "done" in a run with a history only (PostgreSQL's
// pgDoneCount): history_count grows only then, and the trigger inserts only
// when it grows.
const sqliteDoneNote = `history_count = history_count + (history_count > 0),
       history_note = json_array(` + store.SQLDone + `, NULL, attempts, '', '', ?)`

// sqliteRecordPriorDone is PostgreSQL's pgRecordPriorDone.
const sqliteRecordPriorDone = `
UPDATE _sky_durable_runs SET history_count = 1, history_note = json_array(` + store.SQLDone + `, NULL, attempts, '', '', updated_at)
 WHERE id = ? AND history_count = 0 AND status = ` + store.SQLDone

// sqliteRecordEvent records one event of an operator's action that has no
// statement of its own to carry it (signal replace, fork, rewind).
var sqliteRecordEvent = `
UPDATE _sky_durable_runs SET ` + sqliteNote("?", "?", "attempts", "?", "?", "?") + `
 WHERE id = ?`

// recordEvent runs sqliteRecordEvent on q.
func (s *Store) recordEvent(ctx context.Context, q *db.DB, runID string, kind store.EventKind, actor, detail, step string, now time.Time) error {
	_, err := s.exec(ctx, q, "history", sqliteRecordEvent, string(kind), actor, detail, step, ms(now), runID)
	return err
}

const sqliteReadHistory = `SELECT pos, at, kind, actor, attempt, detail, step FROM _sky_durable_history WHERE run_id = ? ORDER BY pos`

func (s *Store) ReadHistory(ctx context.Context, runID string) ([]store.Event, error) {
	s.hook("history", sqliteReadHistory)
	return store.QueryAll(ctx, s.d, sqliteReadHistory, []any{runID}, func(scan func(...any) error) (store.Event, error) {
		var e store.Event
		var kind string
		var at int64
		err := scan(&e.Pos, &at, &kind, &e.Actor, &e.Attempt, &e.Detail, &e.Step)
		e.Kind, e.At = store.EventKind(kind), store.FromMs(at)
		return e, err
	})
}
