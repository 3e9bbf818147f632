package postgres

import (
	"context"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// The bulk actions (store.BulkStore): one statement per batch and per
// shape (store.BulkShape), so each cached plan keeps its index. A batch
// selects the next runs in (created_at, id) order after its cursor, a
// range of the shape's index, and updates them by key (= ANY (ARRAY(...)),
// as ListRuns does); the update tests the status again, so a run that moved
// meanwhile (a claim, a cancel) is left as it is. It returns every selected
// run with whether it changed, oldest first: the last is the next cursor.

// pgBulkError is the error text test of a bulk filter, after its shape's
// condition (strpos of "" is 1, so an empty text keeps every run).
const pgBulkError = ` AND strpos(r.last_error, ?) > 0`

// pgBulkCount counts the runs of a bulk filter, by shape.
var pgBulkCount = bulkStatements(func(shape store.BulkShape) string {
	return `SELECT COUNT(*) FROM _sky_durable_runs r WHERE ` + shape.Where() + pgBulkError
})

// pgBulkRetry, pgBulkCancel and pgBulkRelease are one batch of each action,
// by shape; a cancel also cancels the descendants of the runs it ended
// (pgCancelDescendants, as CancelRun).
var (
	pgBulkRetry = bulkStatements(func(shape store.BulkShape) string {
		return bulkUpdate(shape, pgRetrySets, store.SQLRetryable, "", "changed", bulkEvent{`'retried'`, pgPriorAttempts, `''`})
	})
	pgBulkRelease = bulkStatements(func(shape store.BulkShape) string {
		return bulkUpdate(shape, pgReleaseRunSets, store.SQLRunning, "", "changed", bulkEvent{`'released'`, `s.attempts`, `s.claimed_by`})
	})
	pgBulkCancel = bulkStatements(func(shape store.BulkShape) string {
		return bulkUpdate(shape, pgCancelSets, store.SQLClaimable, ",\n"+pgCancelDescendants, "ended", bulkEvent{store.SQLCancelled, `s.attempts`, `''`})
	})
)

func bulkStatements(build func(shape store.BulkShape) string) (out [3]string) {
	for _, shape := range store.BulkShapes {
		out[shape] = build(shape)
	}
	return out
}

// bulkEvent is the history event a bulk action records on each run it
// changes, by the operator (the statement's last parameter), as the
// single-run action does: its kind, attempt and detail, over the updated
// row s.
type bulkEvent struct{ kind, attempt, detail string }

// bulkUpdate is one batch: select in the order of the shape's index,
// update with sets the selected runs still in one of statuses as the CTE
// named cte (then more CTEs), record ev on each, and return each selected
// run, oldest first, with whether it changed.
func bulkUpdate(shape store.BulkShape, sets, statuses, more, cte string, ev bulkEvent) string {
	return `WITH RECURSIVE ` + pgClockCTE + `,
picked AS (
  SELECT r.id, r.created_at FROM _sky_durable_runs r
   WHERE ` + shape.Where() + pgBulkError + `
   ORDER BY ` + shape.Order() + `
   LIMIT CAST(? AS INT)),
` + cte + ` AS (
  UPDATE _sky_durable_runs r
     SET ` + sets + `, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ANY (ARRAY(SELECT id FROM picked)) AND r.status IN (` + statuses + `)
  RETURNING r.id, r.history_count, r.attempts, r.claimed_by)` + more + `,
` + pgTrim(cte+"_trim", cte) + `,
` + cte + `_history AS (
  ` + pgRecord(cte+` s`, `clock.now`, ev.kind, `CAST(? AS TEXT)`, ev.attempt, ev.detail, `''`) + `)
SELECT p.id, p.created_at, c.id IS NOT NULL FROM picked p LEFT JOIN ` + cte + ` c ON c.id = p.id
 ORDER BY p.created_at, p.id`
}

// bulkArgs are a bulk statement's filter arguments: the shape's, then
// pgBulkError's.
func bulkArgs(f store.BulkFilter, from store.Cursor) []any {
	return append(store.ShapeOf(f).Args(f, from, func(t time.Time) any { return t }), f.ErrorContains)
}

func (s *Store) CountRuns(ctx context.Context, f store.BulkFilter) (int64, error) {
	sql := pgBulkCount[store.ShapeOf(f)]
	s.hook("bulk", sql)
	var n int64
	err := s.d.QueryRow(ctx, sql, bulkArgs(f, store.Cursor{CreatedAt: f.CreatedAfter})...).Scan(&n)
	return n, err
}

func (s *Store) BulkAct(ctx context.Context, op store.Op, f store.BulkFilter, from store.Cursor, limit int, now time.Time) (store.BulkBatch, error) {
	var sql string
	switch op {
	case store.OpRetry:
		sql = pgBulkRetry[store.ShapeOf(f)]
	case store.OpRelease:
		sql = pgBulkRelease[store.ShapeOf(f)]
	case store.OpCancel:
		sql = pgBulkCancel[store.ShapeOf(f)]
	default:
		return store.BulkBatch{}, store.ErrNoBulkOp(op)
	}
	args := append(append([]any{clockArg(now)}, bulkArgs(f, from)...), limit, store.ActorOf(ctx))
	var b store.BulkBatch
	run := func(ctx context.Context, q *db.DB) error {
		s.hook("bulk", sql)
		rows, err := store.QueryAll(ctx, q, sql, args, func(scan func(...any) error) (store.BulkRow, error) {
			var r store.BulkRow
			return r, scan(&r.ID, &r.CreatedAt, &r.Changed)
		})
		b = store.BatchOf(rows)
		return err
	}
	if op == store.OpCancel {
		// The descendants' recursive walk is planned without JIT, as
		// CancelRun's.
		return b, s.withoutJIT(ctx, run)
	}
	return b, run(ctx, s.d)
}
