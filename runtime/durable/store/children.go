package store

import (
	"context"
	"time"

	"skydurable/runtime/db"
)

// Composer is what the store does for composed workflows: child runs
// (Durable.startChild, awaitChild, all) and events (Durable.setEvent,
// getEvent). Each dialect implements it in its children.go.
type Composer interface {
	// InsertChildren inserts the children of parentID, all of workflow
	// and version, in one statement on q (the parent's step transaction,
	// so they commit with its journal row). group, when not empty, is
	// recorded on each (Durable.all's children share one). A child whose
	// id exists is left as it is; inserted counts the new ones.
	InsertChildren(ctx context.Context, q *db.DB, parentID, group, workflow string, version int, children []NewChild, now time.Time) (inserted int64, err error)
	// ReadChildren reads the runs of ids (missing ones are left out), in
	// one statement on the primary key.
	ReadChildren(ctx context.Context, ids []string) ([]ChildState, error)
	// AwaitChildren parks the run held under f until w is met: the child
	// finishes (w.ChildID), or every child of the group has finished or
	// one of them ended dead or cancelled (w.Group). When w is already met
	// the run is due at once (a child finished while the parent ran). A
	// child's finish makes a parent parked so due in the child's own
	// transaction.
	AwaitChildren(ctx context.Context, f Fence, w ChildWait, now time.Time) error
	// PutEvent sets the value of (runID, key) on q, replacing an older one.
	PutEvent(ctx context.Context, q *db.DB, runID, key, value string, now time.Time) error
	// GetEvent reads the value of (runID, key); found is false when none
	// was set.
	GetEvent(ctx context.Context, runID, key string) (value string, found bool, err error)
}

// NewChild is a child run about to be started.
type NewChild struct {
	ID    string `json:"id"`
	Input string `json:"input"`
	// LimitKey is the child's perKey key, as NewRun's.
	LimitKey *string `json:"limit_key,omitempty"`
}

// ChildState is what a parent reads of its children.
type ChildState struct {
	ID       string
	Workflow string
	ParentID string
	// Group is the Durable.all it belongs to ("" for a startChild).
	Group     string
	Status    Status
	Output    string
	LastError string
}

// Finished reports whether the child will not change by itself any more:
// done, dead, cancelled or timed_out.
func (c ChildState) Finished() bool {
	return c.Status == StatusDone || c.Status == StatusDead || c.Status == StatusCancelled || c.Status == StatusTimedOut
}

// ChildWait is what a parent waits for: one child, or a group.
type ChildWait struct {
	ChildID string
	Group   string
}

// Marker is the waiting_signal a parent parked on w has; the trigger of
// migration 0005 matches it.
func (w ChildWait) Marker() string {
	if w.Group != "" {
		return "sky:all:" + w.Group
	}
	return "sky:child:" + w.ChildID
}

// ScanChild reads one row of a ReadChildren statement: id, workflow,
// parent id, group, status, output, last error.
func ScanChild(scan func(...any) error) (ChildState, error) {
	var c ChildState
	var status string
	err := scan(&c.ID, &c.Workflow, &c.ParentID, &c.Group, &status, &c.Output, &c.LastError)
	c.Status = Status(status)
	return c, err
}

// QueryEvent runs a GetEvent statement (run id, key; one value column).
func QueryEvent(ctx context.Context, q *db.DB, sql, runID, key string) (string, bool, error) {
	var v string
	err := q.QueryRow(ctx, sql, runID, key).Scan(&v)
	if IsNoRows(err) {
		return "", false, nil
	}
	return v, err == nil, err
}
