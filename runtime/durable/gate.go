package durable

import (
	"context"
	"fmt"
)

// This file is the deploy gate (`sky durable replay`): every run in flight
// gets a verdict against new code. A run is only ever advanced by the body of
// the version it started with (PinToStart; FailSafe fails it otherwise), so
// the verdict asks whether the new code registers that version and whether
// that version's body replays the run's journal.

// Verdict is the deploy gate's classification of one run against new code.
type Verdict string

const (
	// Compatible: the new code registers the run's version, it is the
	// newest version of the workflow there, and its body replays the
	// journal.
	Compatible Verdict = "compatible"
	// NeedsVersion: the new code registers the run's version and its body
	// replays the journal, but a newer version of the workflow is
	// registered too: the run is safe only while its version stays
	// registered (Finding.Keep), so it must not be dropped yet.
	NeedsVersion Verdict = "needs-version"
	// Incompatible: the new code cannot advance the run: it does not
	// register the run's version (Finding.Missing), or that version's
	// body does not replay the journal (Finding.Divergence).
	Incompatible Verdict = "incompatible"
)

// Verdicts are the verdicts in the order reports count them.
var Verdicts = []Verdict{Compatible, NeedsVersion, Incompatible}

// Finding is the verdict on one run and why.
type Finding struct {
	Run     Run
	Verdict Verdict
	// Keep is the version that must stay registered for the run to finish
	// (its own), set for NeedsVersion and for a Missing version.
	Keep int
	// Has lists the versions of the run's workflow the new code registers.
	Has []int
	// Missing says the new code does not register the run's version.
	Missing bool
	// Divergence is where the body of the run's version disagrees with the
	// journal (Incompatible, not Missing).
	Divergence *Divergence
}

// String describes f in one line, starting with its verdict.
func (f Finding) String() string {
	head := fmt.Sprintf("%s run %q (workflow %s version %d)", f.Verdict, f.Run.ID, f.Run.Workflow, f.Run.Version)
	switch {
	case f.Divergence != nil:
		return string(f.Verdict) + " " + f.Divergence.String()
	case f.Missing:
		return fmt.Sprintf("%s: the new code does not register version %d of %s (it has %s); keep version %d registered (Durable.registerVersioned %q %d with its body as the run started it) until the run finishes",
			head, f.Run.Version, f.Run.Workflow, describeVersions(f.Has), f.Keep, f.Run.Workflow, f.Keep)
	case f.Verdict == NeedsVersion:
		return fmt.Sprintf("%s: keep version %d registered until the run finishes: its journal replays on version %d, and the newest version is %d",
			head, f.Keep, f.Keep, f.Has[len(f.Has)-1])
	}
	return head + ": its journal replays"
}

// Gate classifies runs against a set of workflows (the new code), replaying
// journals on its engine's database without executing effects (Replay).
// One Gate checks any number of runs, one at a time.
type Gate struct {
	replayer *Engine
	reg      registry
}

// Gate returns a gate for defs, the workflows of the code about to be
// deployed; a workflow name that is not valid is an InvalidInput error.
func (e *Engine) Gate(defs []Workflow) (*Gate, error) {
	reg, err := newRegistry(defs)
	if err != nil {
		return nil, err
	}
	return &Gate{replayer: e.replayer(), reg: reg}, nil
}

// Defines reports whether the gate's code defines a workflow of that name
// (in any version); runs of other workflows are not checked.
func (g *Gate) Defines(workflow string) bool {
	_, ok := g.reg.byName[workflow]
	return ok
}

// Check gives run r, with its journal, a verdict. Callers check only runs
// of workflows the gate defines (Defines); a run of another workflow would
// be Incompatible, Missing its version (the gate "has none").
func (g *Gate) Check(ctx context.Context, r Run, journal []JournalEntry) Finding {
	f := Finding{Run: r, Has: sortedVersions(g.reg.byName[r.Workflow])}
	v := max(r.Version, 1)
	w, ok := g.reg.lookup(r.Workflow, v)
	if !ok {
		f.Verdict, f.Missing, f.Keep = Incompatible, true, v
		return f
	}
	if d := g.replayer.replay(ctx, w, r, journal); d != nil {
		f.Verdict, f.Divergence = Incompatible, d
		return f
	}
	if newest := f.Has[len(f.Has)-1]; newest != v {
		f.Verdict, f.Keep = NeedsVersion, v
		return f
	}
	f.Verdict = Compatible
	return f
}
