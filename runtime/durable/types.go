package durable

import "skydurable/runtime/durable/store"

// The engine's public data types are the store's (runtime/durable/store),
// so a run read from any store is the same value everywhere.
type (
	// Status is the state of a run (see store.Status for the machine).
	Status = store.Status
	// Run is one durable run as stored, for inspection (Describe, List).
	Run = store.Run
	// EntryKind says what a journal entry records.
	EntryKind = store.EntryKind
	// JournalEntry is one journal row: the Seq-th durable operation of a run.
	JournalEntry = store.JournalEntry
	// ListFilter selects runs for ListRuns. Zero fields select everything.
	ListFilter = store.ListFilter
	// SignalInfo is one entry of a run's signal mailbox.
	SignalInfo = store.SignalInfo
	// Cursor is a page position in ListRuns (ListFilter.Before).
	Cursor = store.Cursor
	// Stats are the overview figures (Engine.Stats).
	Stats = store.Stats
	// Hold is the limit that holds a due run back (Engine.HeldBy).
	Hold = store.Hold
	// StatusCount is the number of runs of one workflow in one status.
	StatusCount = store.StatusCount
	// DueRun is a run due (or whose lease ended) at its WakeAt.
	DueRun = store.DueRun
)

// CursorOf is the page position of r, for ListFilter.Before.
func CursorOf(r Run) *Cursor { return store.CursorOf(r) }

// The run statuses.
const (
	StatusWaiting   = store.StatusWaiting
	StatusRunning   = store.StatusRunning
	StatusDone      = store.StatusDone
	StatusFailed    = store.StatusFailed
	StatusDead      = store.StatusDead
	StatusCancelled = store.StatusCancelled
	StatusTimedOut  = store.StatusTimedOut
)

// AllStatuses are the run statuses in the order listings show them.
var AllStatuses = store.AllStatuses

// The journal entry kinds.
const (
	KindStep     = store.KindStep
	KindSleep    = store.KindSleep
	KindSignal   = store.KindSignal
	KindDeadline = store.KindDeadline
	KindTimeout  = store.KindTimeout
	KindError    = store.KindError
)

// LeaseLostTag is the Custom detail text of the error a Ctx returns once the
// worker's lease on its run is gone.
const LeaseLostTag = store.LeaseLostTag
