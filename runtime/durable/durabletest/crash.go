package durabletest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// Script drives a run in a Harness: it starts it, sends its signals and
// moves the clock. CrashEverywhere runs it once per crash point.
type Script func(ctx context.Context, h *Harness) error

// CrashReport is the outcome of CrashEverywhere.
type CrashReport struct {
	RunID string
	// Journal, Status and Output are those of the crash-free run.
	Journal []string
	Status  durable.Status
	Output  string
	// Points has one entry per journal boundary of the crash-free run.
	Points []CrashPoint
}

// CrashPoint is one run of the script with the worker killed at one
// boundary of one journal entry, then resumed by a fresh worker.
type CrashPoint struct {
	StepID   string
	Kind     durable.EntryKind
	Seq      int
	Boundary durable.Boundary
	// OutputMatched: the run ended with the crash-free run's status and
	// output.
	OutputMatched bool
	// RanTwice lists the plain steps whose effect ran more often than in
	// the crash-free run: allowed (a plain step is at-least-once; pass its
	// idempotency key to external services), but worth knowing.
	RanTwice []string
	// Findings says what differs from the crash-free run: the output, the
	// journal, or the database (a database effect committed twice).
	Findings []Finding
}

// Finding is one difference a crash made to what the script observes.
type Finding struct {
	// Point is the crash point in words (CrashPoint.Name); StepID and
	// Boundary the journal entry and boundary the worker was killed at.
	Point    string
	StepID   string
	Boundary durable.Boundary
	// Differs names what differs: "output" (the run's status or output),
	// "journal", "table NAME", "script" (it failed after the crash) or
	// "path" (the run never reached the crash point again).
	Differs string
	// Detail says how, in words.
	Detail string
}

// String is the finding as one line: `<point>: <detail>`.
func (f Finding) String() string { return f.Point + ": " + f.Detail }

// Name is the crash point in words: `crash after the effect of step
// "charge", before its journal commit`.
func (p CrashPoint) Name() string {
	what := fmt.Sprintf("%s %q", p.Kind, p.StepID)
	switch p.Boundary {
	case durable.BeforeEffect:
		return "crash before the effect of " + what
	case durable.BeforeCommit:
		return "crash after the effect of " + what + ", before its journal commit"
	}
	return "crash after the journal commit of " + what
}

// Findings lists what differs at every crash point, in crash point order.
// Empty when every crash point behaved like the crash-free run.
func (r CrashReport) Findings() []Finding {
	var out []Finding
	for _, p := range r.Points {
		out = append(out, p.Findings...)
	}
	return out
}

// Failures is Findings as lines: `crash … of step "charge": <what differs>`.
func (r CrashReport) Failures() []string {
	var out []string
	for _, f := range r.Findings() {
		out = append(out, f.String())
	}
	return out
}

// errInjected is what the crash hook returns: the worker dies there.
var errInjected = errors.New("crash injected by durabletest.CrashEverywhere")

// CrashEverywhere runs script once in a fresh Harness to learn the journal
// boundaries of run runID of w, then once more per boundary (before a
// step's effect, after it before its journal commit, after the commit), each
// time in a fresh Harness with the worker killed at that boundary and the run
// resumed by a fresh worker over the same database, and compares each
// outcome with the crash-free run's. A crash does not move the virtual
// clock (the crashed run is released at once), so it changes nothing the
// script observes but what the workflow does wrong. It fails only when the
// crash-free run cannot be made (the script fails, or never starts runID).
func CrashEverywhere(ctx context.Context, w durable.Workflow, runID string, script Script) (CrashReport, error) {
	return CrashEverywhereWith(ctx, SQLiteCopies(), []durable.Workflow{w}, runID, script)
}

// CrashEverywhereWith is CrashEverywhere with each scenario's Harness on a
// database open gives, its worker polling defs (the run's workflow and
// those of its children). Only run runID's boundaries are crashed at. A
// child (or grandchild) of the run whose workflow defs lack is an error:
// it would never run, with or without a crash, so every crash point would
// pass without testing anything.
func CrashEverywhereWith(ctx context.Context, open Opener, defs []durable.Workflow, runID string, script Script) (CrashReport, error) {
	free, err := runScenario(ctx, open, defs, runID, script, nil)
	if err != nil {
		return CrashReport{}, err
	}
	if free.scriptErr != nil {
		return CrashReport{}, fmt.Errorf("durabletest: the script failed without a crash: %w", free.scriptErr)
	}
	if !free.found {
		return CrashReport{}, fmt.Errorf("durabletest: the script never started run %q", runID)
	}
	if len(free.unpolled) > 0 {
		return CrashReport{}, task.Errorf(task.InvalidInput, "durabletest: run %q starts a child of workflow %s, which the harness does not poll: "+
			"the child never runs, with or without a crash; hint: list the workflow of every child the run starts with the run's "+
			"(in Sky, `crashReport [ Durable.erase parent, Durable.erase child ] ...`; in Go, CrashEverywhereWith's defs)", runID, quoteAll(free.unpolled))
	}
	rep := CrashReport{RunID: runID, Journal: free.journal, Status: free.run.Status, Output: free.run.Output}
	type key struct {
		step string
		b    durable.Boundary
	}
	seen := map[key]bool{}
	for _, p := range free.points {
		k := key{p.StepID, p.Boundary}
		if seen[k] {
			continue
		}
		seen[k] = true
		at := p
		o, err := runScenario(ctx, open, defs, runID, script, &at)
		if err != nil {
			return rep, err
		}
		rep.Points = append(rep.Points, compare(p, free, o))
	}
	return rep, nil
}

// outcome is what one scenario observed.
type outcome struct {
	points    []durable.Point
	effects   map[string]int  // BeforeEffect crossings by step id
	tx        map[string]bool // steps seen committing with a database effect
	states    map[int]tables  // the user tables after each entry's commit, by seq
	final     tables
	run       durable.Run
	journal   []string
	found     bool
	crashed   bool
	scriptErr error
	// unpolled names the workflows of the run's descendants no def polls.
	unpolled []string
}

// runScenario runs script in a fresh Harness, crashing the worker the first
// time it reaches crashAt (nil: never).
func runScenario(ctx context.Context, open Opener, defs []durable.Workflow, runID string, script Script, crashAt *durable.Point) (*outcome, error) {
	h, err := NewWith(ctx, open, defs)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	o := &outcome{effects: map[string]int{}, tx: map[string]bool{}, states: map[int]tables{}}
	var snapErr error
	h.onBoundary = func(p durable.Point) error {
		if p.RunID != runID {
			return nil
		}
		o.points = append(o.points, p)
		crash := crashAt != nil && !o.crashed && p.StepID == crashAt.StepID && p.Boundary == crashAt.Boundary
		if p.Boundary == durable.BeforeEffect && !crash {
			o.effects[p.StepID]++ // the effect runs now
		}
		if p.Transactional {
			o.tx[p.StepID] = true
		}
		if p.Boundary == durable.AfterCommit {
			s, err := snapshot(context.WithoutCancel(ctx), h.d)
			if err != nil && snapErr == nil {
				snapErr = err
			}
			o.states[p.Seq] = s
		}
		if crash {
			o.crashed = true
			return errInjected
		}
		return nil
	}
	o.scriptErr = script(ctx, h)
	if o.scriptErr == nil {
		// Resume what the crash left claimed, and finish what is due.
		o.scriptErr = h.Drain(ctx)
	}
	if snapErr != nil {
		return nil, snapErr
	}
	r, j, err := h.Describe(ctx, runID)
	switch {
	case errors.Is(err, durable.ErrRunNotFound):
		return o, nil
	case err != nil:
		return nil, err
	}
	o.found, o.run, o.journal = true, r, StepIDs(j)
	if crashAt == nil {
		if o.unpolled, err = unpolledChildren(ctx, h, runID); err != nil {
			return nil, err
		}
	}
	if o.final, err = snapshot(ctx, h.d); err != nil {
		return nil, err
	}
	return o, nil
}

// compare checks one crashed scenario against the crash-free run.
func compare(p durable.Point, free, o *outcome) CrashPoint {
	cp := CrashPoint{StepID: p.StepID, Kind: p.Kind, Seq: p.Seq, Boundary: p.Boundary}
	fail := func(differs, format string, args ...any) {
		cp.Findings = append(cp.Findings, Finding{Point: cp.Name(), StepID: p.StepID, Boundary: p.Boundary, Differs: differs, Detail: fmt.Sprintf(format, args...)})
	}
	if o.scriptErr != nil {
		fail("script", "the script failed after the crash: %v", o.scriptErr)
	}
	if !o.crashed {
		fail("path", "the run never reached this point again: it behaves differently in every run")
	}
	if !o.found {
		fail("output", "the run %q does not exist", free.run.ID)
		return cp
	}
	cp.OutputMatched = o.run.Status == free.run.Status && o.run.Output == free.run.Output
	if !cp.OutputMatched {
		got := fmt.Sprintf("%s with output %s", o.run.Status, orNone(o.run.Output))
		if o.run.LastError != "" {
			got += " (last error: " + o.run.LastError + ")"
		}
		fail("output", "the run ended %s; without a crash it ended %s with output %s", got, free.run.Status, orNone(free.run.Output))
	}
	if !slices.Equal(o.journal, free.journal) {
		fail("journal", "the journal is [%s]; without a crash it is [%s]", strings.Join(o.journal, ", "), strings.Join(free.journal, ", "))
	}
	compareTables(free, o, fail)
	for _, pt := range o.points {
		id := pt.StepID
		if pt.Boundary != durable.BeforeEffect || o.tx[id] || free.tx[id] || slices.Contains(cp.RanTwice, id) {
			continue
		}
		if o.effects[id] > free.effects[id] {
			cp.RanTwice = append(cp.RanTwice, id)
		}
	}
	return cp
}

// compareTables reports a difference of the workflow's tables at the end,
// named after the first journal entry whose commit shows it. Tables that
// differ only in between (another run's rows committed in another order
// around this run's entries, say) and end equal are no finding.
func compareTables(free, o *outcome, fail func(differs, format string, args ...any)) {
	end := free.final.diff(o.final)
	if end == nil {
		return
	}
	for seq := 1; seq <= len(free.journal); seq++ {
		want, ok1 := free.states[seq]
		got, ok2 := o.states[seq]
		if !ok1 || !ok2 {
			continue
		}
		if d := want.diff(got); d != nil {
			step := free.journal[seq-1]
			what := "step"
			if free.tx[step] {
				what = "transactional step"
			}
			fail("table "+d.table, "after the commit of %s %q (journal position %d) the database differs from the crash-free run: %s", what, step, seq, d.text)
			return
		}
	}
	fail("table "+end.table, "at the end the database differs from the crash-free run: %s", end.text)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// unpolledChildren lists, sorted, the workflows of runID's descendants
// (children, their children, ...) that the Harness's worker does not poll.
func unpolledChildren(ctx context.Context, h *Harness, runID string) ([]string, error) {
	runs, err := h.e.ListRuns(ctx, durable.ListFilter{Limit: math.MaxInt32})
	if err != nil {
		return nil, err
	}
	polled := map[string]bool{}
	for _, w := range h.defs {
		polled[w.Name] = true
	}
	family := map[string]bool{runID: true}
	for grew := true; grew; {
		grew = false
		for _, r := range runs {
			if r.ParentID != "" && family[r.ParentID] && !family[r.ID] {
				family[r.ID], grew = true, true
			}
		}
	}
	var out []string
	for _, r := range runs {
		if r.ID != runID && family[r.ID] && !polled[r.Workflow] && !slices.Contains(out, r.Workflow) {
			out = append(out, r.Workflow)
		}
	}
	slices.Sort(out)
	return out, nil
}

// quoteAll is names quoted and joined: `"a"`, `"a" and "b"`.
func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}
