package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// Time travel: `sky durable fork`, `rewind` and `diff` (Engine.Fork,
// Engine.Rewind, Engine.Diff).

func init() {
	registerDurable(durableCommand{
		use: "fork ID --from STEP [--as NEWID] [--set STEP=JSON]", args: "ID",
		short: "a new run with ID's history before STEP (--set: STEP's result replaced)",
		example: `  sky durable fork order-42 --from charge
  sky durable fork order-42 --from charge --as order-42-again --set charge='{"ok":false}'`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.travel.from, "from", "", "the step id to fork from: the new run keeps the history before it")
			fs.StringVar(&f.travel.as, "as", "", "the new run's id (default ID~fork-<hex>)")
			fs.StringVar(&f.travel.set, "set", "", "STEP=JSON: keep STEP with this result instead and run on after it")
		},
		check: func(f *durableFlags, pos []string) error {
			_, _, err := f.travel.forkCut(pos)
			return err
		},
		run: durableFork,
	})
	registerDurable(durableCommand{
		use: "rewind ID --to STEP", args: "ID",
		short:   "a finished run back to STEP, in place: it and what follows run again",
		example: `  sky durable rewind order-42 --to charge`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.travel.to, "to", "", "the step id to rewind to: it and what follows run again")
		},
		check: func(f *durableFlags, pos []string) error {
			if f.travel.to == "" {
				return fmt.Errorf("--to STEP is required; hint: `sky durable show %s` lists the run's steps", firstArg(pos, "ID"))
			}
			return nil
		},
		run: durableRewind,
	})
	registerDurable(durableCommand{
		use: "diff A B [--json]", args: "A B", readOnly: true,
		short:   "two runs' journals, position by position",
		example: `  sky durable diff order-42 order-42-again`,
		flags:   durableJSONFlag,
		run:     durableDiff,
	})
}

// timeTravel holds the flags of fork and rewind.
type timeTravel struct {
	from, as, set, to string
}

// forkCut reads fork's --from and --set: the step to cut at and the
// result --set gives it ("" for none). --set alone names the step; with
// --from it must name the same one, and its result must be JSON. pos, the
// arguments, only serve the hints.
func (t timeTravel) forkCut(pos []string) (from, set string, err error) {
	from = t.from
	if t.set != "" {
		step, js, ok := strings.Cut(t.set, "=")
		if !ok || step == "" {
			return "", "", fmt.Errorf("--set %q is not STEP=JSON; hint: --set charge='{\"ok\":false}'", t.set)
		}
		if from == "" {
			from = step
		}
		if step != from {
			return "", "", fmt.Errorf("--set names step %q but the fork is cut at %q; hint: --set replaces the result of the step at the cut: --from %s --set %s=JSON", step, from, from, from)
		}
		if !json.Valid([]byte(js)) {
			return "", "", fmt.Errorf("--set %s=%s: the result is not valid JSON; hint: quote it for the shell, e.g. --set %s='{\"ok\":false}' or --set %s='\"text\"'", step, js, step, step)
		}
		set = js
	}
	if from == "" {
		return "", "", fmt.Errorf("--from STEP is required; hint: `sky durable show %s` lists the run's steps", firstArg(pos, "ID"))
	}
	return from, set, nil
}

// firstArg is the first of the arguments pos, or else when there is none
// (a hint's placeholder).
func firstArg(pos []string, placeholder string) string {
	if len(pos) == 0 {
		return placeholder
	}
	return pos[0]
}

func durableFork(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	from, set, err := f.travel.forkCut(a)
	if err != nil {
		return task.Errorf(task.InvalidInput, "%v", err)
	}
	id, err := e.Fork(ctx, a[0], from, durable.ForkOptions{NewID: f.travel.as, Set: set})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s forked from %s at %s; it is due now\n", view.Safe(id), view.Safe(a[0]), view.Safe(from))
	return nil
}

func durableRewind(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	if err := e.Rewind(ctx, a[0], f.travel.to); err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s rewound to %s; it is due now\n", view.Safe(a[0]), view.Safe(f.travel.to))
	return nil
}

// forkedText is the "forked" line of `sky durable show`.
func forkedText(r durable.Run) string {
	if r.ForkStep == "" {
		return "copied from " + r.ForkedFrom + " with its forked parent"
	}
	return "from " + r.ForkedFrom + " at " + r.ForkStep
}

// diffOut is one position of `sky durable diff --json`.
type diffOut struct {
	Position int       `json:"position"`
	Kind     string    `json:"kind"`
	A        *entryOut `json:"a,omitempty"`
	B        *entryOut `json:"b,omitempty"`
}

func durableDiff(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	d, err := e.Diff(ctx, a[0], a[1])
	if err != nil {
		return err
	}
	entry := func(en *durable.JournalEntry) *entryOut {
		if en == nil {
			return nil
		}
		o := journalJSON([]durable.JournalEntry{*en})[0]
		return &o
	}
	if f.json {
		entries := make([]diffOut, len(d.Entries))
		for i, en := range d.Entries {
			entries[i] = diffOut{Position: en.Position + 1, Kind: string(en.Kind), A: entry(en.A), B: entry(en.B)}
		}
		return writeJSON(out, map[string]any{
			"a": runJSON(d.A, nil), "b": runJSON(d.B, nil), "identical": d.Identical(), "entries": entries,
			"output": string(d.Output), "compacted": append([]string{}, d.Compacted()...),
		})
	}
	tw := newTable(out)
	fmt.Fprintf(tw, "#\t\t%s\t%s\n", view.Safe(a[0]), view.Safe(a[1]))
	cell := func(en *durable.JournalEntry) string {
		if en == nil {
			return "-"
		}
		return view.Safe(en.StepID) + " = " + view.Safe(view.Elide(view.OneLine(view.Payload(en.Result)), 40))
	}
	for _, en := range d.Entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", en.Position+1, en.Kind, cell(en.A), cell(en.B))
	}
	fmt.Fprintf(tw, "output\t%s\t%s %s\t%s %s\n", d.Output, d.A.Status, view.Safe(view.Elide(view.OneLine(view.Payload(d.A.Output)), 40)), d.B.Status, view.Safe(view.Elide(view.OneLine(view.Payload(d.B.Output)), 40)))
	tw.Flush()
	for _, r := range []durable.Run{d.A, d.B} {
		if !r.CompactedAt.IsZero() {
			fmt.Fprintf(out, "journals not compared: run %s was compacted at %s (its journal is deleted)\n", view.Safe(r.ID), view.Stamp(r.CompactedAt))
		}
	}
	if d.Identical() {
		fmt.Fprintln(out, "identical")
	}
	return nil
}
