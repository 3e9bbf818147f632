package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// This file is the pre-deploy check (`sky durable replay`): replay the
// journals of runs in flight against new workflow code, executing no effect,
// and report every run the new code would fail the determinism check on.

// Divergence is why a run's journal does not replay against a body.
type Divergence struct {
	Run Run
	// Position is the 1-based journal position at which the body and the
	// journal disagree; 0 when the replay failed before any disagreement
	// (see Err).
	Position int
	// Asked is the durable operation the body asked for at Position ("" when
	// the body finished there, leaving journalled entries unreplayed), and
	// Recorded the journal's entry at Position.
	Asked     string
	AskedKind EntryKind
	Recorded  JournalEntry
	// Err is the error the replay ended with (nil when the body finished
	// early).
	Err error
}

// String describes d in one line, naming the position and both step ids.
func (d Divergence) String() string {
	switch {
	case d.Err != nil && !errors.Is(d.Err, ErrNonDeterminism):
		// An undecodable entry: the error names its position and step.
	case d.Position > 0 && d.Asked == "":
		return fmt.Sprintf("run %q (workflow %s version %d): the body finished at journal position %d, but the journal recorded %s %q there",
			d.Run.ID, d.Run.Workflow, d.Run.Version, d.Position, d.Recorded.Kind, d.Recorded.StepID)
	case d.Position > 0:
		return fmt.Sprintf("run %q (workflow %s version %d): at journal position %d the new code asks for %s %q but the journal recorded %s %q",
			d.Run.ID, d.Run.Workflow, d.Run.Version, d.Position, d.AskedKind, d.Asked, d.Recorded.Kind, d.Recorded.StepID)
	}
	return fmt.Sprintf("run %q (workflow %s version %d): the replay fails: %s", d.Run.ID, d.Run.Workflow, d.Run.Version, errText(d.Err))
}

// replayNow is the clock of a replay: past every journalled timer, so a
// sleep never suspends the body before the journal ends.
var replayNow = time.UnixMilli(math.MaxInt64 / 2)

// frontierReached stops a replay at the first durable operation past the
// end of the journal: everything before it replayed.
func frontierReached(runID, id string) *task.Error {
	return task.Errorf(task.Unavailable, "durable run %q: the replay reached %q, past the end of the journal", runID, id).
		WithDetails(task.Details{Tag: task.Custom, Text: CrashedTag})
}

// Replay runs w's body over run r's journal without executing any effect: a
// journalled operation returns its recorded value, the first operation past
// the journal's end stops the body before it reaches the store, and
// database statements the body makes between steps run in a transaction
// that is rolled back. It returns nil when the body asked for the journal's
// entries in order, or the divergence. Sealed values (an export made
// without the key) are opened with e's keyring first; one that does not
// open is the divergence's Err.
func (e *Engine) Replay(ctx context.Context, w Workflow, r Run, journal []JournalEntry) *Divergence {
	in, err := e.sealed.openInput(r.ID, r.Input)
	if err != nil {
		return &Divergence{Run: r, Err: unreadable(r.ID, placeInput, err)}
	}
	r.Input = in
	journal = append([]JournalEntry(nil), journal...)
	if err := e.sealed.openJournal(r.ID, journal); err != nil {
		return &Divergence{Run: r, Err: err}
	}
	return e.replayer().replay(ctx, w, r, journal)
}

// replayer is the engine a replay runs its bodies on: its clock is
// replayNow, it writes nothing (the replay stops before any write).
func (e *Engine) replayer() *Engine {
	return New(e.db, Options{
		Clock:           func() time.Time { return replayNow },
		MaxPayloadBytes: e.maxBytes,
		WorkerID:        "sky-durable-replay",
	})
}

// replay is Replay on the replay engine re.
func (re *Engine) replay(ctx context.Context, w Workflow, r Run, journal []JournalEntry) *Divergence {
	// The token matches no run, so no write could change one anyway.
	cl := store.Claimed{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Input: r.Input, Attempts: r.Attempts, Now: replayNow}
	c := newCtx(re, cl, "sky-durable-replay", append([]JournalEntry(nil), journal...))
	c.replaying = true
	bctx, lazy := db.WithLazyTx(ctx, re.db)
	_, err := runBody(bctx, c, w, r.Input)
	_ = lazy.Rollback(ctx)

	c.mu.Lock()
	cursor, asked, askedKind := c.cursor, c.last, c.lastKind
	c.mu.Unlock()
	switch {
	case c.crashedErr() != nil, IsSuspend(err):
		return nil // stopped at or past the end of the journal
	case err == nil && cursor >= len(journal):
		return nil
	case err == nil:
		return &Divergence{Run: r, Position: cursor + 1, Recorded: journal[cursor]}
	}
	d := &Divergence{Run: r, Err: err}
	switch {
	case errors.Is(err, ErrNonDeterminism) && cursor < len(journal) && journal[cursor].StepID != asked:
		d.Position, d.Asked, d.Recorded = cursor+1, asked, journal[cursor]
		d.AskedKind = askedKind
	case errors.Is(err, ErrBadJournal) && cursor > 0:
		// The entry that does not decode is the one just replayed.
		d.Position, d.Asked, d.Recorded = cursor, asked, journal[cursor-1]
		d.AskedKind = journal[cursor-1].Kind
	}
	return d
}
