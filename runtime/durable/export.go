package durable

import (
	"context"

	"skydurable/runtime/task"
)

// This file reads the runs a deploy can affect, page by page, and gives each
// the self-contained form `sky durable export` writes: everything a replay
// needs, so the deploy gate runs with no database (Gate.Check).

// InFlight are the statuses of the runs a deploy can affect: those a worker
// advances (waiting, running), those retried with backoff (failed) and
// those `sky durable retry` brings back (dead). EachRun reads them by
// default.
var InFlight = []Status{StatusWaiting, StatusRunning, StatusFailed, StatusDead}

// exportPage is how many runs EachRun holds at once.
const exportPage = 500

// EachRun calls fn with every run in one of statuses (InFlight when empty),
// of the named workflow when it is not "", and the run's journal. Runs are
// read a page at a time (newest first within a status, by keyset on the
// listing's index) and one journal at a time, so memory holds one page
// whatever the number of runs. Each page is read on its own: a run that
// changes status meanwhile may be missed or seen twice.
func (e *Engine) EachRun(ctx context.Context, statuses []Status, workflow string, fn func(Run, []JournalEntry) error) error {
	if len(statuses) == 0 {
		statuses = InFlight
	}
	for _, st := range statuses {
		var before *Cursor
		for {
			runs, err := e.ListRuns(ctx, ListFilter{Status: st, Workflow: workflow, Limit: exportPage, Before: before})
			if err != nil {
				return err
			}
			for _, r := range runs {
				journal, err := e.store.LoadJournal(ctx, r.ID)
				if err != nil {
					return err
				}
				if err := fn(r, journal); err != nil {
					return err
				}
			}
			if len(runs) < exportPage {
				break
			}
			before = CursorOf(runs[len(runs)-1])
		}
	}
	return nil
}

// ExportFormat is the version of the ExportedRun layout; Run refuses any
// other.
const ExportFormat = 1

// ExportedRun is one run as `sky durable export` writes it (one JSON object
// per line): its identity, input and journal, with JSON values kept as the
// exact text the database holds.
type ExportedRun struct {
	Format   int             `json:"format"`
	ID       string          `json:"id"`
	Workflow string          `json:"workflow"`
	Version  int             `json:"version"`
	Status   Status          `json:"status"`
	Attempts int             `json:"attempts"`
	Input    string          `json:"input"`
	Journal  []ExportedEntry `json:"journal"`
}

// ExportedEntry is one journal entry of an ExportedRun. A consumed signal's
// payload is its Result, so a replay needs nothing from the signal mailbox.
type ExportedEntry struct {
	Seq    int       `json:"seq"`
	StepID string    `json:"step"`
	Kind   EntryKind `json:"kind"`
	Result string    `json:"result"`
}

// Export gives run r and its journal their exported form.
func Export(r Run, journal []JournalEntry) ExportedRun {
	x := ExportedRun{Format: ExportFormat, ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: r.Status,
		Attempts: r.Attempts, Input: r.Input, Journal: make([]ExportedEntry, len(journal))}
	for i, e := range journal {
		x.Journal[i] = ExportedEntry{Seq: e.Seq, StepID: e.StepID, Kind: e.Kind, Result: e.Result}
	}
	return x
}

// Run is the run and journal x describes, for Gate.Check. A record of
// another format or with no id or workflow is an InvalidInput error naming
// the run.
func (x ExportedRun) Run() (Run, []JournalEntry, error) {
	switch {
	case x.Format != ExportFormat:
		return Run{}, nil, task.Errorf(task.InvalidInput, "run %q is in export format %d, this sky reads format %d; hint: export again with this sky (`sky durable export`)", x.ID, x.Format, ExportFormat)
	case x.ID == "" || x.Workflow == "":
		return Run{}, nil, task.Errorf(task.InvalidInput, "an exported run needs an id and a workflow, found id %q workflow %q; hint: the file must come from `sky durable export`", x.ID, x.Workflow)
	}
	journal := make([]JournalEntry, len(x.Journal))
	for i, e := range x.Journal {
		journal[i] = JournalEntry{Seq: e.Seq, StepID: e.StepID, Kind: e.Kind, Result: e.Result}
	}
	r := Run{ID: x.ID, Workflow: x.Workflow, Version: x.Version, Status: x.Status, Attempts: x.Attempts, Input: x.Input}
	return r, journal, nil
}
