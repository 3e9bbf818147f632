package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
	skydurable "skydurable/stdlib/durable"
)

func init() {
	registerDurable(durableCommand{
		use: "replay [--from runs.jsonl] [--workflow W] [--json] FILE", args: "FILE", readOnly: true,
		short: "the deploy gate: a verdict per run in flight against the program FILE; exit 1 when one is incompatible",
		long: `The deploy gate: load the program FILE (the new code) and replay every run in flight of its
workflows, from the database or from an export file (--from, no database), against it. It prints
each run that is not compatible and a summary, and exits 1 when one is incompatible. The
database is the one of FILE's project.`,
		example: `  sky durable replay src/Main.sky
  sky durable export > runs.jsonl && sky durable replay --from runs.jsonl --json src/Main.sky`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
			fs.StringVar(&f.gate.from, "from", "", "read the runs from this file (written by sky durable export) instead of the database")
			durableJSONFlag(fs, f)
		},
		project: func(pos []string) string { return pos[0] },
		offline: func(ctx context.Context, f *durableFlags, pos []string, s streams) (int, bool) {
			if f.gate.from == "" {
				return 0, false
			}
			return replayOffline(ctx, f, pos, s), true
		},
		noSchema: nothingInFlight("replay"),
		run:      durableReplay,
	})
}

// durableReplay is `sky durable replay [--from RUNS] [--workflow W] [--json]
// FILE`, the deploy gate: load the program FILE (the new code), give every
// run in flight of its workflows (from the database, or from an export file)
// a verdict (durable.Gate), print each run that is not compatible and a
// summary. It fails (exit 1) when a run is incompatible.
func durableReplay(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	_, proj, err := findProgram(a)
	if err != nil {
		return err
	}
	prog, _, _ := loadProgram(a[0], proj, loadOptions{missingHint: replayHint}, streams{stdout: out, stderr: f.warn})
	if prog == nil {
		return fmt.Errorf("the program %s does not load; nothing was replayed", a[0])
	}
	defs, err := skydurable.WorkflowsIn(prog.Values())
	if err != nil {
		return err
	}
	if len(defs) == 0 {
		return task.Errorf(task.NotFound, "the program %s defines no workflow at the top level; hint: replay the program whose modules hold the Durable.register calls", a[0])
	}
	if f.workflow != "" {
		if _, err := durable.Lookup(defs, f.workflow); err != nil {
			return task.Errorf(task.NotFound, "--workflow %q: the program %s defines no workflow of that name; hint: it defines %s",
				f.workflow, a[0], strings.Join(workflowNames(defs, ""), ", "))
		}
	}
	rep := gateReport{counts: map[durable.Verdict]int{}, skipped: map[string]int{}}
	g, err := e.Gate(defs)
	if err != nil {
		return err
	}
	check := func(r durable.Run, journal []durable.JournalEntry) error {
		switch {
		case f.workflow != "" && r.Workflow != f.workflow:
		case !g.Defines(r.Workflow):
			rep.skipped[r.Workflow]++
		default:
			fd := g.Check(ctx, r, journal)
			rep.counts[fd.Verdict]++
			if fd.Verdict == durable.Compatible {
				return nil
			}
			if f.json {
				rep.findings = append(rep.findings, findingJSON(fd))
			} else {
				fmt.Fprintln(out, view.SafeText(fd.String()))
			}
		}
		return nil
	}
	names := workflowNames(defs, f.workflow)
	if f.gate.from != "" {
		err = eachExported(f.gate.from, check)
	} else {
		for _, name := range names {
			if err = e.EachRun(ctx, nil, name, check); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	total := 0
	for _, n := range rep.counts {
		total += n
	}
	if f.json {
		if err := writeJSON(out, map[string]any{"program": a[0], "counts": rep.countsJSON(), "skipped": rep.skipped, "runs": rep.findings}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(out, "checked %d %s of %s against %s: %s\n", total, plural(total, "run", "runs"), view.Safe(strings.Join(names, ", ")), a[0], rep.summary())
	}
	if len(rep.skipped) > 0 {
		fmt.Fprintf(f.warn, "note: not checked, their workflows are not in %s: %s\n", a[0], view.Safe(rep.skippedText()))
	}
	if n := rep.counts[durable.Incompatible]; n > 0 {
		return fmt.Errorf("%d %s incompatible with %s; hint: register the changed workflow as a new version (Durable.registerVersioned) and keep the old one until its runs finish",
			n, plural(n, "run is", "runs are"), a[0])
	}
	return nil
}

// gateReport gathers the verdicts of one replay.
type gateReport struct {
	counts   map[durable.Verdict]int
	skipped  map[string]int // runs of workflows the program does not define, by workflow
	findings []map[string]any
}

// summary is "2 compatible, 1 needs-version, 0 incompatible".
func (r gateReport) summary() string {
	parts := make([]string, len(durable.Verdicts))
	for i, v := range durable.Verdicts {
		parts[i] = fmt.Sprintf("%d %s", r.counts[v], v)
	}
	return strings.Join(parts, ", ")
}

func (r gateReport) countsJSON() map[string]int {
	m := map[string]int{}
	for _, v := range durable.Verdicts {
		m[string(v)] = r.counts[v]
	}
	return m
}

func (r gateReport) skippedText() string {
	names := make([]string, 0, len(r.skipped))
	for name := range r.skipped {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		names[i] = fmt.Sprintf("%d %s of %s", r.skipped[name], plural(r.skipped[name], "run", "runs"), name)
	}
	return strings.Join(names, ", ")
}

// findingJSON is a finding as `replay --json` prints it.
func findingJSON(fd durable.Finding) map[string]any {
	m := map[string]any{"id": fd.Run.ID, "workflow": fd.Run.Workflow, "version": fd.Run.Version, "status": fd.Run.Status,
		"verdict": fd.Verdict, "reason": fd.String()}
	if fd.Keep > 0 {
		m["keep"] = fd.Keep
	}
	if fd.Missing {
		m["missing"] = true
	}
	if d := fd.Divergence; d != nil && d.Position > 0 {
		m["position"] = d.Position
		m["recorded"] = map[string]any{"kind": d.Recorded.Kind, "step": d.Recorded.StepID}
		if d.Asked != "" {
			m["asked"] = map[string]any{"kind": d.AskedKind, "step": d.Asked}
		}
	}
	return m
}

// workflowNames are the distinct names of defs, or only.
func workflowNames(defs []durable.Workflow, only string) []string {
	if only != "" {
		return []string{only}
	}
	seen := map[string]bool{}
	var names []string
	for _, w := range defs {
		if !seen[w.Name] {
			seen[w.Name] = true
			names = append(names, w.Name)
		}
	}
	return names
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
