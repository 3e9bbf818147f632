package postgres

import (
	"context"
	"strconv"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// A run's history on PostgreSQL (migration 0013, store/history.go): the
// statement that changes a run also counts the event on the run row
// (history_count = history_count + 1, a column no index holds, so the
// update stays HOT) and inserts it from its RETURNING rows, in CTEs: no
// statement and no round trip more. The pre-update values an event needs
// (the attempt a suspension ends) are read from the statement's snapshot,
// which every CTE shares and no CTE's write changes, by primary key.

// pgRecord is the INSERT of one event for each row s of from (a FROM item
// whose rows carry the run's id and its counted history_count), at time
// at, with the given kind, actor, attempt, detail and step expressions.
func pgRecord(from, at, kind, actor, attempt, detail, step string) string {
	return `INSERT INTO _sky_durable_history (run_id, pos, at, kind, actor, attempt, detail, step)
  SELECT s.id, s.history_count, ` + at + `, ` + kind + `, ` + actor + `, ` + attempt + `, ` + detail + `, ` + step + `
    FROM clock, ` + from
}

// pgTrim is the CTE name deleting, for each row s of src (id,
// history_count) whose history outgrew the bound, the event the bound
// drops: one primary-key probe, and none while the history is short.
func pgTrim(name, src string) string {
	return name + ` AS (
  DELETE FROM _sky_durable_history h USING ` + src + ` s
   WHERE s.history_count > ` + strconv.Itoa(store.HistoryFirst+store.HistoryLast) + `
     AND h.run_id = s.id AND h.pos = s.history_count - ` + strconv.Itoa(store.HistoryLast) + `)`
}

// pgPriorAttempts is the attempt count a run had before the statement
// (its snapshot's row), for the events of statements that reset it.
const pgPriorAttempts = `(SELECT o.attempts FROM _sky_durable_runs o WHERE o.id = s.id)`

// pgClaimHistory are the claim's CTEs recording its claim, after
// "claimed" (which counts it when the run was claimed before or has a
// history: the first claim of a run is not recorded). A run whose lease
// was not released (status running in the snapshot, when the claim locked
// the row version of its snapshot) was reclaimed from its worker.
var pgClaimHistory = `,
claim_history AS (
  ` + pgRecord(`claimed s LEFT JOIN _sky_durable_runs o ON o.id = s.id WHERE s.history_count > 0`, `s.now`,
	`CASE WHEN o.status = `+store.SQLRunning+` AND o.xmin = s.locked THEN 'reclaimed' ELSE 'claimed' END`, `s.claimed_by`, `s.attempts`,
	`CASE WHEN o.status = `+store.SQLRunning+` AND o.xmin = s.locked THEN o.claimed_by ELSE '' END`, `''`) + `),
` + pgTrim("claim_trim", "claimed")

// pgDoneCount is what a completion adds to history_count: a run with no
// event yet (finished in the attempt that first claimed it, never suspended
// or failed) records no "done" either, a row and an index entry spared on
// the commonest path; Engine.History derives that run's done from its row.
const pgDoneCount = `CASE WHEN r.history_count > 0 THEN 1 ELSE 0 END`

// pgDoneHistory are the CTEs recording the completion of "done" (of a run
// with a history: pgDoneCount).
var pgDoneHistory = `,
done_history AS (
  ` + pgRecord(`done s WHERE s.history_count > 0`, `clock.now`, store.SQLDone, `s.claimed_by`, `s.attempts`, `''`, `''`) + `),
` + pgTrim("done_trim", "done")

// pgRecordPriorDone writes the "done" a run with no history did not
// record (pgDoneCount), before an operator's event on the finished run (a
// rewind) would hide it: at the run's completion, by its worker.
const pgRecordPriorDone = `WITH counted AS (
  UPDATE _sky_durable_runs r SET history_count = 1
   WHERE r.id = ? AND r.history_count = 0 AND r.status = ` + store.SQLDone + `
  RETURNING r.id, r.updated_at, COALESCE(r.claimed_by, '') AS claimed_by, r.attempts)
INSERT INTO _sky_durable_history (run_id, pos, at, kind, actor, attempt, detail, step)
SELECT s.id, 1, s.updated_at, ` + store.SQLDone + `, s.claimed_by, s.attempts, '', '' FROM counted s`

// pgRecordEvent records one event of an operator's action that has no
// statement of its own to carry it (signal replace, fork, rewind): run id,
// kind, actor, detail, step.
var pgRecordEvent = pgClock + `,
counted AS (
  UPDATE _sky_durable_runs r SET history_count = r.history_count + 1
   WHERE r.id = ?
  RETURNING r.id, r.history_count, r.attempts),
` + pgTrim("trimmed", "counted") + `
` + pgRecord(`counted s`, `clock.now`, `CAST(? AS TEXT)`, `CAST(? AS TEXT)`, `s.attempts`, `CAST(? AS TEXT)`, `CAST(? AS TEXT)`)

// recordEvent runs pgRecordEvent on q.
func (s *Store) recordEvent(ctx context.Context, q *db.DB, runID string, kind store.EventKind, actor, detail, step string, now time.Time) error {
	_, err := s.exec(ctx, q, "history", pgRecordEvent, clockArg(now), runID, string(kind), actor, detail, step)
	return err
}

const pgReadHistory = `SELECT pos, at, kind, actor, attempt, detail, step FROM _sky_durable_history WHERE run_id = ? ORDER BY pos`

func (s *Store) ReadHistory(ctx context.Context, runID string) ([]store.Event, error) {
	s.hook("history", pgReadHistory)
	return store.QueryAll(ctx, s.d, pgReadHistory, []any{runID}, func(scan func(...any) error) (store.Event, error) {
		var e store.Event
		var kind string
		err := scan(&e.Pos, &e.At, &kind, &e.Actor, &e.Attempt, &e.Detail, &e.Step)
		e.Kind = store.EventKind(kind)
		return e, err
	})
}
