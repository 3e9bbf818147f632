package store

import (
	"context"
	"time"

	"skydurable/runtime/task"
)

// TimeTravel is what the store does for time travel (Engine.Fork,
// Engine.Rewind): each operation cuts a run's history at one journal
// position, in one transaction. Each dialect implements it in its fork.go.
type TimeTravel interface {
	// ForkRun inserts run f.NewID, due now, as a copy of run f.RunID cut
	// at f.Seq: the original's workflow, version, input, priority and
	// limit key; its journal entries before the cut, byte for byte (then
	// f.Set, when not nil); its mailbox, the signals of f.Consumed
	// consumed and every other one unconsumed, in their order; the events
	// of f.Events; and a copy (with its journal) of each finished child
	// started before the cut, as f.NewID's child under the same key. It
	// records forked_from and fork_step. It changes nothing and returns
	// ErrRunExists when f.NewID exists, and returns the id of a child
	// started before the cut that is not finished.
	ForkRun(ctx context.Context, f Fork, now time.Time) (unfinishedChild string, err error)
	// RewindRun cuts run c.RunID's own history at c.Seq, when it is in
	// one of the statuses rewind takes (OpRewind) and not compacted: its
	// journal from c.Seq on is deleted, its signals but those of
	// c.Consumed become unconsumed, its events but those of c.Events are
	// deleted, and it is waiting, due now, with no output, error, lease
	// or attempts. ok is false when the run is not so; unfinishedChild is
	// a child started after the cut that is not finished (nothing
	// changed).
	RewindRun(ctx context.Context, c Cut, now time.Time) (ok bool, unfinishedChild string, err error)
}

// Cut is a position in a run's journal, and what of its mailbox, events and
// children lies before it.
type Cut struct {
	RunID string
	// Seq is the first journal position cut off: entries with a smaller
	// seq are kept.
	Seq int
	// Step is the step id at the cut (recorded as a fork's fork_step).
	Step string
	// Consumed names the signals consumed before the cut.
	Consumed []string
	// Events are the event keys set before the cut and not after it.
	Events []string
	// Children are the child runs started before the cut: by id (each
	// Durable.startChild) and by group (each Durable.all).
	Children []string
	Groups   []string
}

// Fork is a Cut copied into a new run.
type Fork struct {
	Cut
	NewID string
	// Set, when not nil, is journalled after the copied entries: the
	// replaced result of the step at the cut.
	Set *JournalEntry
}

// ErrRunExists is what ForkRun returns when the new id is taken.
var ErrRunExists = task.New(task.Conflict, "durable: a run with that id exists")
