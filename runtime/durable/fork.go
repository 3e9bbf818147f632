package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Time travel: an operator forks a run from one of its steps (a new run
// with the original's history before that step, running the rest with the
// code deployed now), rewinds a finished run to a step in place, and diffs
// two runs' journals (`sky durable fork|rewind|diff`, Sky's Durable.fork).
// A cut copies or keeps the journal before the step byte for byte, so every
// value recorded there (step results, stepValue ids and times, signal
// payloads) is the original's, never drawn again.

// ForkOptions tune Fork.
type ForkOptions struct {
	// NewID is the fork's run id (default "<id>~fork-<8 hex digits>").
	NewID string
	// Set, when not "", is a JSON result that replaces the result of the
	// step at the cut: the fork keeps that step, with this result, and
	// runs on after it ("what if the payment had failed").
	Set string
}

// Fork starts a new run of runID's workflow from its step stepID: the new
// run gets the original's input and every journal entry before stepID
// (with ForkOptions.Set: up to and including it, its result replaced),
// copied byte for byte; the signals consumed before the cut, consumed, and
// every other signal of the original's mailbox, unconsumed, in their order;
// the events set before the cut; and each child started before the cut,
// linked as a copy under the new run (so not run again). It records
// "forked from runID at stepID", is due now and runs the rest with the
// workflow as registered now; the original is untouched. It returns the
// new run's id.
//
// It is refused for an unknown run or step, a run whose journal was
// compacted, a NewID that exists, invalid JSON in Set, a step at the cut
// that is not a step's result (with Set), a child started before the cut
// that has not finished, and an event set both before and after the cut
// (only its latest value is stored).
func (e *Engine) Fork(ctx context.Context, runID, stepID string, opts ForkOptions) (string, error) {
	if err := refuseInStep(ctx, "Durable.fork"); err != nil {
		return "", err
	}
	r, journal, at, err := e.cutAt(ctx, "fork", runID, stepID, nil)
	if err != nil {
		return "", err
	}
	newID := opts.NewID
	if newID == "" {
		newID = fmt.Sprintf("%s~fork-%08x", runID, uint32(e.randUint64()))
	}
	if err := checkRunID(newID, r.Workflow); err != nil {
		return "", err
	}
	cut, err := cutOf(r.ID, journal, at, "fork")
	if err != nil {
		return "", err
	}
	f := store.Fork{Cut: cut, NewID: newID}
	if opts.Set != "" {
		entry := journal[at]
		if err := e.checkJSON(fmt.Sprintf("the --set result of step %q", stepID), opts.Set); err != nil {
			return "", err
		}
		if entry.Kind != KindStep && entry.Kind != KindError {
			return "", task.Errorf(task.InvalidInput,
				"durable: cannot set the result of %q in run %q: it is a %s entry, not a step's result; hint: --set replaces the result of a step (Durable.step, stepValue, transaction)",
				stepID, runID, entry.Kind)
		}
		f.Set = &JournalEntry{Seq: entry.Seq, StepID: entry.StepID, Kind: KindStep, Result: opts.Set}
	}
	child, err := e.store.ForkRun(ctx, f, e.now())
	switch {
	case errors.Is(err, store.ErrRunExists):
		return "", wrapping(task.Errorf(task.Conflict,
			"durable: cannot fork run %q as %q: a run with that id exists; hint: pass another new id (--as), or leave it out for a fresh one", runID, newID), ErrRefused)
	case err != nil:
		return "", err
	case child != "":
		return "", wrapping(task.Errorf(task.Conflict,
			"durable: cannot fork run %q at step %q: its child %q, started before the cut, has not finished; hint: the fork links the finished children it copies, so wait for it to finish, or fork from a step before it started",
			runID, stepID, child), ErrRefused)
	}
	if err := e.resealFork(ctx, newID); err != nil {
		return newID, fmt.Errorf("durable: run %q was forked as %q, but its copied payloads were not sealed for it: %w; hint: run `sky durable rekey` so its workers can read them", runID, newID, err)
	}
	operatorEvent(ctx, store.EventForked, newID, runID)
	e.log.Info("durable run forked", "run", runID, "step", stepID, "fork", newID, "set", opts.Set != "")
	return newID, nil
}

// Rewind moves a done, failed, dead or cancelled run back to its step
// stepID, in one transaction: its journal from stepID on is deleted, the
// signals it consumed after the cut become unconsumed again (in their
// order), the events it set after the cut are deleted, and it is due now
// with no output, error or attempts. Children it started after the cut and
// that finished are kept: the rewound run, starting them again under the
// same keys, finds them (they do not run again). It is refused for a run
// that is waiting or running (or timed out), whose journal was compacted,
// that has an unfinished child started after the cut, or that set an event
// both before and after the cut.
func (e *Engine) Rewind(ctx context.Context, runID, stepID string) error {
	if err := refuseInStep(ctx, "Durable.rewind"); err != nil {
		return err
	}
	r, journal, at, err := e.cutAt(ctx, "rewind", runID, stepID, func(r Run) error {
		if !store.Accepts(store.OpRewind, r.Status) {
			return e.refuse(ctx, runID, "rewind", "only done, failed, dead or cancelled runs can be rewound; hint: cancel it first")
		}
		return nil
	})
	if err != nil {
		return err
	}
	cut, err := cutOf(r.ID, journal, at, "rewind")
	if err != nil {
		return err
	}
	ok, child, err := e.store.RewindRun(ctx, cut, e.now())
	switch {
	case err != nil:
		return err
	case child != "":
		return wrapping(task.Errorf(task.Conflict,
			"durable: cannot rewind run %q to step %q: its child %q, started after the cut, has not finished; hint: cancel it first (`sky durable cancel %s`) or wait for it",
			runID, stepID, child, child), ErrRefused)
	case !ok:
		return e.refuse(ctx, runID, "rewind", "only done, failed, dead or cancelled runs can be rewound")
	}
	operatorEvent(ctx, store.EventRewound, runID, stepID)
	e.log.Info("durable run rewound", "run", runID, "step", stepID, "removed", len(journal)-at)
	return nil
}

// cutAt reads run runID and its journal, checks the run with check (when
// not nil) and finds stepID in its journal.
func (e *Engine) cutAt(ctx context.Context, op, runID, stepID string, check func(Run) error) (Run, []JournalEntry, int, error) {
	r, journal, err := e.Describe(ctx, runID)
	if err != nil {
		return Run{}, nil, 0, err
	}
	if check != nil {
		if err := check(r); err != nil {
			return Run{}, nil, 0, err
		}
	}
	if !r.CompactedAt.IsZero() {
		return Run{}, nil, 0, wrapping(task.Errorf(task.Conflict,
			"durable: cannot %s run %q: it was compacted (its journal was deleted)", op, runID), ErrRefused)
	}
	for i, en := range journal {
		if en.StepID == stepID {
			return r, journal, i, nil
		}
	}
	return Run{}, nil, 0, task.Errorf(task.InvalidInput, "durable: run %q has no step %q; hint: %s", runID, stepID, stepList(journal))
}

// stepList names a journal's step ids for a hint.
func stepList(journal []JournalEntry) string {
	if len(journal) == 0 {
		return "its journal is empty"
	}
	const most = 30
	ids := make([]string, 0, min(len(journal), most))
	for _, en := range journal[:min(len(journal), most)] {
		ids = append(ids, en.StepID)
	}
	more := ""
	if len(journal) > most {
		more = fmt.Sprintf(", ... (%d more; `sky durable show` lists them)", len(journal)-most)
	}
	return "its steps are " + strings.Join(ids, ", ") + more
}

// cutOf is the cut of run runID's journal before entry at: the signals,
// event keys and children recorded before it.
func cutOf(runID string, journal []JournalEntry, at int, op string) (store.Cut, error) {
	c := store.Cut{RunID: runID, Seq: journal[at].Seq, Step: journal[at].StepID}
	before := map[string]bool{}
	for i, en := range journal {
		keys := eventKeys(en.StepID)
		if i >= at {
			for _, k := range keys {
				if before[k] {
					return store.Cut{}, wrapping(task.Errorf(task.Conflict,
						"durable: cannot %s run %q at step %q: it set event %q before that step and again at %q, and only an event's latest value is stored; hint: pick a step before its first setting or after its last",
						op, runID, c.Step, k, en.StepID), ErrRefused)
				}
			}
			continue
		}
		for _, k := range keys {
			before[k] = true
		}
		switch {
		case en.Kind == KindSignal:
			c.Consumed = append(c.Consumed, strings.TrimPrefix(en.StepID, "signal:"))
		case strings.HasPrefix(en.StepID, "child:"):
			c.Children = append(c.Children, ChildID(runID, strings.TrimPrefix(en.StepID, "child:")))
		case strings.HasPrefix(en.StepID, "all:"):
			c.Groups = append(c.Groups, strings.TrimPrefix(en.StepID, "all:"))
		}
	}
	for k := range before {
		c.Events = append(c.Events, k)
	}
	return c, nil
}

// eventKeys are the event keys a journal id may set (SetEvent's ids are
// "event:<key>", then "event:<key>#2", ...): none for another id, the key,
// and for a "#<n>" suffix the key without it too.
func eventKeys(stepID string) []string {
	k, ok := strings.CutPrefix(stepID, "event:")
	if !ok {
		return nil
	}
	keys := []string{k}
	if i := strings.LastIndexByte(k, '#'); i > 0 && i < len(k)-1 && strings.Trim(k[i+1:], "0123456789") == "" {
		keys = append(keys, k[:i])
	}
	return keys
}

// DiffKind is how two runs' journals compare at one position.
type DiffKind string

// The diff kinds.
const (
	DiffSame    DiffKind = "same"
	DiffChanged DiffKind = "changed"
	DiffOnlyA   DiffKind = "only-a"
	DiffOnlyB   DiffKind = "only-b"
)

// DiffEntry is one journal position (0-based) of a diff: A and B are the
// two runs' entries there (nil past the end of one).
type DiffEntry struct {
	Position int
	Kind     DiffKind
	A, B     *JournalEntry
}

// RunDiff compares two runs (Engine.Diff).
type RunDiff struct {
	A, B    Run
	Entries []DiffEntry
	// Output compares the runs' outcomes: status and output.
	Output DiffKind
}

// Identical reports whether the journals match at every position and the
// outcomes match. Runs whose journal was compacted are never identical:
// their journals are gone, so nothing says they matched.
func (d RunDiff) Identical() bool {
	if d.Output != DiffSame || len(d.Compacted()) > 0 {
		return false
	}
	for _, en := range d.Entries {
		if en.Kind != DiffSame {
			return false
		}
	}
	return true
}

// Compacted names the runs of the diff whose journal was compacted (A's
// id first), none when both journals are there.
func (d RunDiff) Compacted() []string {
	var ids []string
	for _, r := range []Run{d.A, d.B} {
		if !r.CompactedAt.IsZero() {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// Diff compares the journals of runs a and b position by position: an
// entry is the same when its step id, kind and result are (its time may
// differ), changed otherwise, or only in one run past the other's end; and
// it compares the runs' status and output. When either journal was
// compacted it compares only the outcomes (Entries is empty, see
// Compacted): a journal that is gone would read as empty.
func (e *Engine) Diff(ctx context.Context, a, b string) (RunDiff, error) {
	ra, ja, err := e.Describe(ctx, a)
	if err != nil {
		return RunDiff{}, err
	}
	rb, jb, err := e.Describe(ctx, b)
	if err != nil {
		return RunDiff{}, err
	}
	d := RunDiff{A: ra, B: rb, Output: DiffSame}
	if ra.Status != rb.Status || ra.Output != rb.Output {
		d.Output = DiffChanged
	}
	if len(d.Compacted()) > 0 {
		return d, nil
	}
	for i := range max(len(ja), len(jb)) {
		en := DiffEntry{Position: i}
		switch {
		case i >= len(jb):
			en.Kind, en.A = DiffOnlyA, &ja[i]
		case i >= len(ja):
			en.Kind, en.B = DiffOnlyB, &jb[i]
		default:
			en.A, en.B = &ja[i], &jb[i]
			en.Kind = DiffChanged
			if ja[i].StepID == jb[i].StepID && ja[i].Kind == jb[i].Kind && ja[i].Result == jb[i].Result {
				en.Kind = DiffSame
			}
		}
		d.Entries = append(d.Entries, en)
	}
	return d, nil
}
