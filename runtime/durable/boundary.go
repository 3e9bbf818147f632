package durable

import (
	"fmt"

	"skydurable/runtime/task"
)

// Boundary says where, around one fresh journal entry, Options.OnBoundary is
// called. They are the points at which a real worker can die with different
// consequences: before a step's effect (the effect never ran), after it but
// before its entry is committed (the effect ran, the journal does not know:
// a plain step runs again, a database effect rolls back with the entry), and
// after the commit (the resumed run replays the entry).
type Boundary int

// The boundaries, in the order they are crossed.
const (
	// BeforeEffect: a step (Step, StepValue, Transaction) is about to run
	// its effect. Sleeps and signal waits have no effect and no such point.
	BeforeEffect Boundary = iota + 1
	// BeforeCommit: the effect ran and the entry is computed, not yet
	// committed (a transactional step's entry is written in its
	// transaction, which is still open).
	BeforeCommit
	// AfterCommit: the entry is committed.
	AfterCommit
)

// String is the boundary in words, for reports: "before the effect",
// "after the effect, before its journal commit", "after the commit".
func (b Boundary) String() string {
	switch b {
	case BeforeEffect:
		return "before the effect"
	case BeforeCommit:
		return "after the effect, before its journal commit"
	case AfterCommit:
		return "after the commit"
	}
	return fmt.Sprintf("boundary(%d)", int(b))
}

// Point is one journal boundary of a run, as Options.OnBoundary sees it.
type Point struct {
	RunID    string
	Workflow string
	// StepID, Kind and Seq are those of the journal entry the boundary
	// belongs to (Seq is its 1-based position).
	StepID   string
	Kind     EntryKind
	Seq      int
	Boundary Boundary
	// Transactional is true when the entry commits in one transaction with
	// a database effect: always for Transaction; for Step once its task
	// wrote to the run's database (so never at BeforeEffect).
	Transactional bool
}

// CrashedTag is the Custom detail text of the error a durable operation
// fails with after Options.OnBoundary stopped the worker.
const CrashedTag = "sky.durable.crashed"

// IsCrashed reports whether err says Options.OnBoundary stopped the worker
// (an injected crash).
func IsCrashed(err error) bool { return hasTag(err, CrashedTag) }

// cross calls the engine's OnBoundary hook at b around entry e. A non-nil
// return from the hook stops this worker as if its process died there: the
// operation fails with the crash error (an open transaction rolls back), the
// Ctx refuses every later durable operation and writes nothing more, and
// Poll returns without recording an outcome, so the run stays claimed until
// its lease runs out and a worker claims it again.
func (c *Ctx) cross(b Boundary, e JournalEntry, transactional bool) error {
	if c.e.onBoundary == nil {
		return nil
	}
	if e.Seq == 0 {
		c.mu.Lock()
		e.Seq = len(c.journal) + 1
		c.mu.Unlock()
	}
	p := Point{RunID: c.f.RunID, Workflow: c.workflow, StepID: e.StepID, Kind: e.Kind, Seq: e.Seq, Boundary: b, Transactional: transactional}
	err := c.e.onBoundary(p)
	if err == nil {
		return nil
	}
	crash := task.Errorf(task.Unavailable, "durable run %q: the worker stopped %s of %s %q (position %d): %s",
		p.RunID, b, p.Kind, p.StepID, p.Seq, errText(err)).WithDetails(task.Details{Tag: task.Custom, Text: CrashedTag})
	crash.Cause = err
	c.mu.Lock()
	c.crashed = crash
	c.mu.Unlock()
	return crash
}

// crashedErr is the crash error once OnBoundary stopped the worker, or nil.
func (c *Ctx) crashedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed == nil {
		return nil
	}
	return c.crashed
}
