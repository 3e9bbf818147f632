package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
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
	case d.Position > 0 && d.Asked == "":
		return fmt.Sprintf("run %q (workflow %s version %d): the body finished at journal position %d, but the journal recorded %s %q there",
			d.Run.ID, d.Run.Workflow, d.Run.Version, d.Position, d.Recorded.Kind, d.Recorded.StepID)
	case d.Position > 0:
		return fmt.Sprintf("run %q (workflow %s version %d): at journal position %d the new code asks for %s %q but the journal recorded %s %q",
			d.Run.ID, d.Run.Workflow, d.Run.Version, d.Position, d.AskedKind, d.Asked, d.Recorded.Kind, d.Recorded.StepID)
	}
	return fmt.Sprintf("run %q (workflow %s version %d): the replay fails: %s", d.Run.ID, d.Run.Workflow, d.Run.Version, errText(d.Err))
}

// errReplayFrontier stops a replay at the first durable operation past the
// end of the journal: everything before it replayed.
var errReplayFrontier = errors.New("durable: replay reached the end of the journal")

// replayNow is the clock of a replay: past every journalled timer, so a
// sleep never suspends the body before the journal ends.
var replayNow = time.UnixMilli(math.MaxInt64 / 2)

// Replay runs w's body over run r's journal without executing any effect: a
// journalled operation returns its recorded value, the first operation past
// the journal's end stops the body (through the OnBoundary mechanism, before
// its effect), and database statements the body makes between steps run in a
// transaction that is rolled back. It returns nil when the body asked for
// the journal's entries in order, or the divergence.
func (e *Engine) Replay(ctx context.Context, w Workflow, r Run, journal []JournalEntry) *Divergence {
	re := New(e.db, Options{
		Clock:           func() time.Time { return replayNow },
		MaxPayloadBytes: e.maxBytes,
		WorkerID:        "sky-durable-replay",
		OnBoundary:      func(Point) error { return errReplayFrontier },
	})
	// The token matches no run, so a write the replay reaches (a wait that
	// suspends) changes nothing.
	cl := store.Claimed{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Input: r.Input, Attempts: r.Attempts, Now: replayNow}
	c := newCtx(re, cl, "sky-durable-replay", append([]JournalEntry(nil), journal...))
	bctx, lazy := db.WithLazyTx(ctx, e.db)
	_, err := runBody(bctx, c, w, r.Input)
	_ = lazy.Rollback(ctx)

	c.mu.Lock()
	cursor, asked := c.cursor, c.last
	c.mu.Unlock()
	_, lost := c.state()
	switch {
	case c.crashedErr() != nil, lost, IsSuspend(err):
		return nil // stopped at or past the end of the journal
	case err == nil && cursor >= len(journal):
		return nil
	case err == nil:
		return &Divergence{Run: r, Position: cursor + 1, Recorded: journal[cursor]}
	}
	d := &Divergence{Run: r, Err: err}
	if errors.Is(err, ErrNonDeterminism) && cursor < len(journal) && journal[cursor].StepID != asked {
		d.Position, d.Asked, d.Recorded = cursor+1, asked, journal[cursor]
		d.AskedKind = askedKind(asked)
	}
	return d
}

// askedKind guesses the kind of the operation a body asked for from its id
// (the engine names waits "sleep:…", "signal:…", "deadline:…").
func askedKind(id string) EntryKind {
	for _, k := range []EntryKind{KindSleep, KindSignal, KindDeadline} {
		if len(id) > len(k) && id[:len(k)+1] == string(k)+":" {
			return k
		}
	}
	return KindStep
}

// ReplayReport is the outcome of ReplayUnfinished.
type ReplayReport struct {
	// Replayed counts the runs replayed; Diverged lists those that failed.
	Replayed int
	Diverged []Divergence
	// Skipped lists runs of a registered workflow name whose version defs
	// lack (a worker with that version must finish them; see PinToStart).
	Skipped []Run
}

// unfinished are the statuses of runs a deploy can still affect.
var unfinished = []Status{StatusWaiting, StatusRunning, StatusFailed, StatusDead}

// ReplayUnfinished replays (Replay) every unfinished run (waiting, running,
// failed or dead) of defs' workflows, or of the one named workflow when it
// is not empty, each against the body of the version it was started with.
func (e *Engine) ReplayUnfinished(ctx context.Context, defs []Workflow, workflow string) (ReplayReport, error) {
	var rep ReplayReport
	reg, err := newRegistry(defs)
	if err != nil {
		return rep, err
	}
	for _, name := range reg.names {
		if workflow != "" && name != workflow {
			continue
		}
		for _, st := range unfinished {
			runs, err := e.ListRuns(ctx, ListFilter{Status: st, Workflow: name, Limit: math.MaxInt32})
			if err != nil {
				return rep, err
			}
			for _, r := range runs {
				w, ok := reg.lookup(r.Workflow, r.Version)
				if !ok {
					rep.Skipped = append(rep.Skipped, r)
					continue
				}
				_, journal, err := e.Describe(ctx, r.ID)
				if err != nil {
					return rep, err
				}
				rep.Replayed++
				if d := e.Replay(ctx, w, r, journal); d != nil {
					rep.Diverged = append(rep.Diverged, *d)
				}
			}
		}
	}
	return rep, nil
}
