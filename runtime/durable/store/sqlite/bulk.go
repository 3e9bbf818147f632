package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// The bulk actions (store.BulkStore), one statement per batch and shape on
// the shape's index (INDEXED BY); see the PostgreSQL store. SQLite's single
// writer means the runs a batch selects are the runs it changes: the update
// returns them, and their last is the next cursor.

// sqliteBulkError is the error text test of a bulk filter, after its
// shape's condition (instr of "" is 1).
const sqliteBulkError = ` AND instr(r.last_error, ?) > 0`

// sqliteBulkIndex is the index each shape walks.
var sqliteBulkIndex = [...]string{
	store.BulkByStatus:   "_sky_durable_runs_status_list",
	store.BulkByWorkflow: "_sky_durable_runs_workflow_status_list",
	store.BulkByParent:   "_sky_durable_runs_parent",
}

func sqliteBulkFrom(shape store.BulkShape) string {
	return ` FROM _sky_durable_runs r INDEXED BY ` + sqliteBulkIndex[shape] + ` WHERE ` + shape.Where() + sqliteBulkError
}

// sqliteBulkArgs are the arguments of sqliteBulkFrom.
func sqliteBulkArgs(f store.BulkFilter, from store.Cursor) []any {
	return append(store.ShapeOf(f).Args(f, from, func(t time.Time) any { return ms(t) }), f.ErrorContains)
}

// sqliteBulkUpdate is one batch of an action: it sets a.sets on the runs
// selected that are in a.statuses (the action's, as its single-run
// statement), returning them.
func sqliteBulkUpdate(shape store.BulkShape, a sqliteBulkAction) string {
	return `UPDATE _sky_durable_runs SET ` + a.note + `,
       ` + a.sets + `
 WHERE id IN (SELECT r.id` + sqliteBulkFrom(shape) + ` ORDER BY ` + shape.Order() + ` LIMIT ?)
   AND status IN (` + a.statuses + `)
RETURNING id, created_at`
}

// sqliteBulkAction is what an action records in the history (note: its
// parameters are the operator and the time, as the single-run action's)
// and sets (with times parameters, each the time) on the runs in statuses.
type sqliteBulkAction struct {
	note     string
	sets     string
	times    int
	statuses string
}

var sqliteBulkActions = map[store.Op]sqliteBulkAction{
	store.OpRetry:   {sqliteNote("'retried'", "?", "attempts", "''", "''", "?"), sqliteBulkRetrySets, 2, store.SQLRetryable},
	store.OpCancel:  {sqliteNote(store.SQLCancelled, "?", "attempts", "''", "''", "?"), sqliteBulkCancelSets, 1, store.SQLClaimable},
	store.OpRelease: {sqliteNote("'released'", "?", "attempts", "claimed_by", "''", "?"), sqliteBulkReleaseSets, 2, store.SQLRunning},
}

// The columns each action sets (as RetryRun, CancelRun, ReleaseRun); each
// parameter is the time.
const (
	sqliteBulkRetrySets = `status = ` + store.SQLWaiting + `, attempts = 0, wake_at = ?, claimed_at = NULL, lease_token = NULL,
       waiting_signal = NULL, updated_at = ?`
	sqliteBulkCancelSets  = `status = ` + store.SQLCancelled + `, claimed_at = NULL, lease_token = NULL, updated_at = ?`
	sqliteBulkReleaseSets = `status = CASE WHEN last_error <> '' THEN ` + store.SQLFailed + ` ELSE ` + store.SQLWaiting + ` END,
       wake_at = ?, claimed_at = NULL, lease_token = NULL, updated_at = ?`
)

func (s *Store) CountRuns(ctx context.Context, f store.BulkFilter) (int64, error) {
	shape := store.ShapeOf(f)
	sql := `SELECT COUNT(*)` + sqliteBulkFrom(shape)
	s.hook("bulk", sql)
	var n int64
	err := s.d.QueryRow(ctx, sql, sqliteBulkArgs(f, store.Cursor{CreatedAt: f.CreatedAfter})...).Scan(&n)
	return n, err
}

func (s *Store) BulkAct(ctx context.Context, op store.Op, f store.BulkFilter, from store.Cursor, limit int, now time.Time) (store.BulkBatch, error) {
	a, ok := sqliteBulkActions[op]
	if !ok {
		return store.BulkBatch{}, store.ErrNoBulkOp(op)
	}
	shape := store.ShapeOf(f)
	sql := sqliteBulkUpdate(shape, a)
	args := []any{store.ActorOf(ctx), ms(now)}
	for range a.times {
		args = append(args, ms(now))
	}
	args = append(append(args, sqliteBulkArgs(f, from)...), limit)
	var b store.BulkBatch
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		s.hook("bulk", sql)
		rows, err := store.QueryAll(ctx, tx, sql, args, func(scan func(...any) error) (store.BulkRow, error) {
			var r store.BulkRow
			var created int64
			err := scan(&r.ID, &created)
			r.CreatedAt, r.Changed = store.FromMs(created), true
			return r, err
		})
		b = store.BatchOf(rows)
		if err != nil || op != store.OpCancel || len(rows) == 0 {
			return err
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		js, _ := json.Marshal(ids)
		_, err = s.exec(ctx, tx, "bulk", sqliteCancelChildren, string(js), ms(now))
		return err
	})
	return b, err
}
