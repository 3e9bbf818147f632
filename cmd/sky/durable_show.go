package main

import (
	"context"
	"io"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// `sky durable show ID`: one run, whole (durable_view.go prints it).

func init() {
	registerDurable(durableCommand{
		use: "show ID [--json]", args: "ID", readOnly: true,
		short: "a run: its state, journal, history, signals and children",
		example: `  sky durable show order-42
  sky durable show order-42 --json | jq .journal`,
		flags: durableJSONFlag,
		run:   durableShow,
	})
}

func durableShow(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	r, journal, err := e.Describe(ctx, a[0])
	if err != nil {
		return err
	}
	signals, err := e.Signals(ctx, a[0])
	if err != nil {
		return err
	}
	children, err := e.ListRuns(ctx, durable.ListFilter{Parent: r.ID, Limit: view.ShowChildren})
	if err != nil {
		return err
	}
	held, err := e.HeldBy(ctx, append([]durable.Run{r}, children...))
	if err != nil {
		return err
	}
	history, err := e.History(ctx, r.ID)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, map[string]any{"run": runJSON(r, held), "journal": journalJSON(journal), "signals": signalsJSON(signals, r.Status), "children": runsJSON(children, held),
			"history": historyJSON(history)})
	}
	printRun(out, r, journal, signals, held, history, time.Now())
	printHistory(out, history)
	printSignals(out, signals, r.Status)
	printChildren(out, r.ID, children, held, time.Now())
	return nil
}
