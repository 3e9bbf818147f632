package store

import (
	"context"
	"time"

	"skydurable/runtime/task"
)

// BulkStore is what the operator's bulk actions (`sky durable retry|cancel|
// release` with filters, the dashboard's "on every matching run") ask of the
// database: count the runs a filter selects, and apply an action to them one
// batch at a time, each batch one statement (one short transaction on
// SQLite for a cancel, which also cancels the descendants) on an index.
type BulkStore interface {
	// CountRuns counts the runs f selects.
	CountRuns(ctx context.Context, f BulkFilter) (int64, error)
	// BulkAct applies op (OpRetry, OpCancel or OpRelease, with the effect of
	// RetryRun, CancelRun or ReleaseRun on each run) to up to limit runs f
	// selects that come after from in (created_at, id) order, oldest
	// first. A run whose status changed since it was selected (to one op
	// does not take) is left as it is. It reports how many runs it
	// selected and changed, and the position of the last one selected,
	// where the next batch starts; fewer selected than limit means none is
	// left.
	BulkAct(ctx context.Context, op Op, f BulkFilter, from Cursor, limit int, now time.Time) (BulkBatch, error)
}

// BulkFilter selects runs for a bulk action: one status, on the status
// index (with Workflow, the workflow and status index; with Parent, the
// parent index), created in [CreatedAfter, CreatedBefore); ErrorContains
// keeps the runs whose last error contains it (case-sensitive; "" keeps
// all), testing the rows the index walk reads, as Scope does.
type BulkFilter struct {
	Status        Status
	Workflow      string
	Parent        string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	ErrorContains string
	Scope         Scope
}

// Until is CreatedBefore, or when zero a time after every run's creation.
func (f BulkFilter) Until() time.Time {
	if f.CreatedBefore.IsZero() {
		return time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return f.CreatedBefore
}

// BulkBatch is what one BulkAct did.
type BulkBatch struct {
	Selected, Changed int
	// Last is the position of the last run selected (zero when none).
	Last Cursor
}

// BulkShape names the index a bulk statement walks, from its filter: the
// stores build one statement per shape so each cached plan keeps its index.
type BulkShape int

// The bulk statements' shapes.
const (
	BulkByStatus   BulkShape = iota // (status, created_at, id)
	BulkByWorkflow                  // (workflow, status, created_at, id)
	BulkByParent                    // (parent_id, created_at, id), status and workflow tested on its rows
)

// BulkShapes lists every shape, for the stores' statement tables.
var BulkShapes = []BulkShape{BulkByStatus, BulkByWorkflow, BulkByParent}

// ShapeOf is the shape of f's statement.
func ShapeOf(f BulkFilter) BulkShape {
	switch {
	case f.Parent != "":
		return BulkByParent
	case f.Workflow != "":
		return BulkByWorkflow
	}
	return BulkByStatus
}

// Where is the shape's condition on the runs table (alias r), the same in
// both dialects: its equality columns, then the range from a cursor to
// Until, written as row comparisons that begin with the equality columns.
// Only the shape's index matches those, so even a generic plan (which does
// not know how rare the status is) walks that index from the cursor, rather
// than the (created_at, id) listing index testing each run's status. The
// filter's Scope is tested on the rows the walk reads.
func (s BulkShape) Where() string {
	scope := " AND " + ScopeRunsID
	switch s {
	case BulkByParent:
		return "r.parent_id = ? AND r.status = ? AND (CAST(? AS TEXT) = '' OR r.workflow = ?)" +
			" AND (r.parent_id, r.created_at, r.id) > (?, ?, ?) AND (r.parent_id, r.created_at) < (?, ?)" + scope
	case BulkByWorkflow:
		return "r.workflow = ? AND r.status = ?" +
			" AND (r.workflow, r.status, r.created_at, r.id) > (?, ?, ?, ?) AND (r.workflow, r.status, r.created_at) < (?, ?, ?)" + scope
	}
	return "r.status = ? AND (r.status, r.created_at, r.id) > (?, ?, ?) AND (r.status, r.created_at) < (?, ?)" + scope
}

// Order is the order of the shape's index, oldest first, its equality
// columns first.
func (s BulkShape) Order() string {
	switch s {
	case BulkByParent:
		return "r.parent_id, r.created_at, r.id"
	case BulkByWorkflow:
		return "r.workflow, r.status, r.created_at, r.id"
	}
	return "r.status, r.created_at, r.id"
}

// Args are the arguments of Where, from f and the cursor from, with times
// in the dialect's form (at).
func (s BulkShape) Args(f BulkFilter, from Cursor, at func(time.Time) any) []any {
	st, after, until := string(f.Status), at(from.CreatedAt), at(f.Until())
	var args []any
	switch s {
	case BulkByParent:
		args = []any{f.Parent, st, f.Workflow, f.Workflow, f.Parent, after, from.ID, f.Parent, until}
	case BulkByWorkflow:
		args = []any{f.Workflow, st, f.Workflow, st, after, from.ID, f.Workflow, st, until}
	default:
		args = []any{st, st, after, from.ID, st, until}
	}
	return append(args, f.Scope.Args()...)
}

// BulkRow is one run a bulk batch selected, as a store reads it back.
type BulkRow struct {
	ID        string
	CreatedAt time.Time
	Changed   bool
}

// BatchOf sums the rows of a batch, oldest first, into a BulkBatch.
func BatchOf(rows []BulkRow) BulkBatch {
	var b BulkBatch
	for _, r := range rows {
		b.Selected++
		if r.Changed {
			b.Changed++
		}
		if b.Last.CreatedAt.Before(r.CreatedAt) || (b.Last.CreatedAt.Equal(r.CreatedAt) && b.Last.ID < r.ID) {
			b.Last = Cursor{CreatedAt: r.CreatedAt, ID: r.ID}
		}
	}
	return b
}

// ErrNoBulkOp is a store's answer to a bulk action it does not know.
func ErrNoBulkOp(op Op) error {
	return task.Errorf(task.InvalidInput, "durable: %q is not a bulk action; hint: retry, cancel or release", op)
}
