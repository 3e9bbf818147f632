package store

import (
	"slices"
	"time"

	"skydurable/runtime/task"
)

// Status is the state of a run. The states form the small machine of
// Machine (machine.go), the statuses themselves are enforced by a CHECK
// constraint in both stores:
//
//	waiting ──claim──▶ running ──▶ waiting (suspended, released) | done | failed | dead
//	failed  ──claim──▶ running          (a retry after backoff)
//	dead    ──Retry──▶ waiting          (manual retry, journal kept)
//	any unfinished ──Cancel──▶ cancelled
//	any unfinished ──deadline──▶ timed_out (its children: cancelled)
type Status string

// The run statuses.
const (
	// StatusWaiting is a run no worker holds: due at WakeAt, or parked on
	// a signal.
	StatusWaiting Status = "waiting"
	// StatusRunning is a run a worker holds under a lease (or held, if the
	// lease expired; a peer may then claim it).
	StatusRunning Status = "running"
	// StatusDone is a run whose body returned; Output is set.
	StatusDone Status = "done"
	// StatusFailed is a run whose last attempt failed; it is claimable
	// again at WakeAt (after backoff).
	StatusFailed Status = "failed"
	// StatusDead is a run no worker retries: it used up its attempts, or
	// failed with a permanent error (a non-determinism error, say);
	// LastError says why. Retry makes it due again.
	StatusDead Status = "dead"
	// StatusCancelled is a run stopped by Cancel (or because its parent
	// timed out).
	StatusCancelled Status = "cancelled"
	// StatusTimedOut is a run stopped because its deadline (StartWith)
	// passed before it finished; it is never claimed again.
	StatusTimedOut Status = "timed_out"
)

// Run is one durable run as stored, for inspection (Describe, List).
type Run struct {
	ID       string
	Workflow string
	// Version is the workflow version the run was started with.
	Version int
	Status  Status
	// Input is the start input as JSON.
	Input string
	// Output is the result as JSON, set when Status is done ("" before).
	Output string
	// Attempts counts claims since the run last suspended cleanly; a
	// crash mid-attempt counts too.
	Attempts int
	// WakeAt is when the run is next due; zero when it is parked on a
	// signal with no deadline. For a running run it is the end of the
	// claim's lease (when another worker may take the run over, unless
	// journalled steps renewed the lease).
	WakeAt time.Time
	// WaitingSignal is the signal name the run is parked on, or "".
	WaitingSignal string
	LastError     string
	// ClaimedAt is when the current lease was taken or last renewed; zero
	// when no worker holds the run. ClaimedBy is that worker's id.
	ClaimedAt time.Time
	ClaimedBy string
	CreatedAt time.Time
	// UpdatedAt is when the run's state last changed. A journalled step
	// renews ClaimedAt at most (PostgreSQL always; SQLite with heartbeats
	// off), so a running run's UpdatedAt is its claim (updated_at is in the
	// finished index, and writing it made every step a non-HOT update on
	// PostgreSQL).
	UpdatedAt time.Time
	// CompactedAt is when compaction deleted the run's journal and
	// signals (zero when it has not).
	CompactedAt time.Time
	// Deadline is when the run ends timed_out unless it finished (zero:
	// no deadline; see NewRun.Deadline).
	Deadline time.Time
	// ParentID is the run that started this one as a child
	// (Durable.startChild, Durable.all), or "".
	ParentID string
	// Priority is the run's claim priority (higher first); LimitKey its
	// perKey key ("" when its workflow has no perKey limit).
	Priority int
	LimitKey string
	// KeyQueued is true for a fresh run queued behind its key's head: it
	// becomes due when the head leaves (the keys take turns).
	KeyQueued bool
	// ForkedFrom is the run this one was forked from (Engine.Fork) and
	// ForkStep the step id of the cut; ForkStep is "" for a child copied
	// with its forked parent (ForkedFrom is then the child it copies).
	// Both "" for a run not forked.
	ForkedFrom string
	ForkStep   string
}

// EntryKind says what a journal entry records.
type EntryKind string

// The journal entry kinds.
const (
	// KindStep is a step's result (Step, StepValue, Transaction).
	KindStep EntryKind = "step"
	// KindSleep is a timer: Result is {"wakeAt":<unix ms>}.
	KindSleep EntryKind = "sleep"
	// KindSignal is a consumed signal: Result is its payload.
	KindSignal EntryKind = "signal"
	// KindDeadline is the deadline of an AwaitSignalFor, as KindSleep.
	KindDeadline EntryKind = "deadline"
	// KindTimeout records that an AwaitSignalFor timed out (Result null).
	KindTimeout EntryKind = "timeout"
	// KindError is a step's final failure, handed to the body (Result is
	// {"kind":..., "message":..., "details":...}).
	KindError EntryKind = "error"
)

// JournalEntry is one journal row: the Seq-th durable operation of a run.
type JournalEntry struct {
	Seq       int
	StepID    string
	Kind      EntryKind
	Result    string
	CreatedAt time.Time
}

// InfinityMs stands for PostgreSQL's 'infinity' on SQLite (epoch ms).
const InfinityMs int64 = 1<<63 - 1

// FromMs turns stored epoch milliseconds back into a time; 0 and the
// infinity marker read as the zero time.
func FromMs(ms int64) time.Time {
	if ms <= 0 || ms == InfinityMs {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// VersionKey is one (workflow, version) pair a worker has; its JSON form is
// what the pinned claim statement reads.
type VersionKey struct {
	Name    string `json:"w"`
	Version int    `json:"v"`
}

// LeaseLostTag is the Custom detail text of the error a Ctx returns once the
// worker's lease on its run is gone.
const LeaseLostTag = "sky.durable.leaseLost"

// ErrLeaseLost is what the store returns when a fenced write matched no row.
var ErrLeaseLost = task.New(task.Conflict, "durable: lease lost").
	WithDetails(task.Details{Tag: task.Custom, Text: LeaseLostTag})

// ErrRunNotFound is what the store returns for an unknown run id.
var ErrRunNotFound = task.New(task.NotFound, "durable: no such run")

// ListFilter selects runs for ListRuns. Zero fields select everything.
type ListFilter struct {
	// Status keeps only runs in this status.
	Status Status
	// Workflow keeps only runs of this workflow name.
	Workflow string
	// Limit caps the number of runs (default 100).
	Limit int
	// IDPrefix keeps only runs whose id starts with it (case-sensitive).
	IDPrefix string
	// Scope keeps only one namespace's runs (a filter on the rows the
	// index walk reads, as IDPrefix).
	Scope Scope
	// Search, when set, keeps only runs whose id, input, output or last
	// error contains it, ignoring case (ASCII letters on every store),
	// on the stores' search index (SearchSQL). It needs MinSearch
	// characters (CheckSearch); the other fields narrow its matches.
	Search string
	// Parent keeps only the children of this run (on the parent index).
	Parent string
	// Before, when set, keeps only runs listed after it: older, or as old
	// with a smaller id. Passing the last run of a page (CursorOf) reads the
	// next page by keyset, from the index, however deep the page.
	Before *Cursor
}

// Cursor is a position in the newest-first listing: a run's creation time
// and id.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// CursorOf is the position of r in the listing.
func CursorOf(r Run) *Cursor { return &Cursor{CreatedAt: r.CreatedAt, ID: r.ID} }

// Valid reports whether s is one of the run statuses.
func (s Status) Valid() bool { return slices.Contains(AllStatuses, s) }

// SignalInfo is one entry of a run's signal mailbox.
type SignalInfo struct {
	Name    string
	Payload string
	// Delivered is true once an AwaitSignal consumed it (its payload is
	// then also in the journal); false while it waits to be consumed.
	Delivered bool
	// CreatedAt is when it was (last) sent.
	CreatedAt time.Time
}

// OrphanSignal is a signal sent to a run id no run has (ListOrphanSignals).
type OrphanSignal struct {
	RunID, Name string
	// Bytes is the size of its payload.
	Bytes int
	// CreatedAt is when it was (last) sent.
	CreatedAt time.Time
}

// LeaseChecked maps a fenced write that matched no row to ErrLeaseLost.
func LeaseChecked(n int64, err error) error {
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}
