package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
	skydurable "skydurable/stdlib/durable"
)

// durableReplay is `sky durable replay [--workflow W] FILE`, the pre-deploy
// check: load the program FILE (the new code), replay the journal of every
// unfinished run of its workflows against it without executing effects, and
// print each run that would fail the determinism check. It fails (exit 1)
// when one would.
func durableReplay(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	_, proj, err := findProgram(a)
	if err != nil {
		return err
	}
	prog, _, _ := loadProgram(a[0], proj, loadOptions{}, streams{stdout: out, stderr: f.warn})
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
			return err
		}
	}
	rep, err := e.ReplayUnfinished(ctx, defs, f.workflow)
	if err != nil {
		return err
	}
	for _, d := range rep.Diverged {
		fmt.Fprintln(out, view.SafeText(d.String()))
	}
	for _, r := range rep.Skipped {
		fmt.Fprintf(f.warn, "note: run %q is version %d of %s, which %s does not register; not replayed (under PinToStart a worker with version %d must finish it)\n",
			r.ID, r.Version, view.Safe(r.Workflow), a[0], r.Version)
	}
	summary := fmt.Sprintf("replayed %d unfinished %s of %s", rep.Replayed, plural(rep.Replayed, "run", "runs"), workflowNames(defs, f.workflow))
	if len(rep.Diverged) > 0 {
		return fmt.Errorf("%s: %d would fail the determinism check; hint: register the changed workflow as a new version (Durable.registerVersioned) and keep the old one until its runs finish",
			summary, len(rep.Diverged))
	}
	fmt.Fprintln(out, summary+": every journal replays")
	return nil
}

// workflowNames names the workflows of defs (only, when set), quoted for a
// terminal (view.Safe).
func workflowNames(defs []durable.Workflow, only string) string {
	if only != "" {
		return view.Safe(only)
	}
	seen := map[string]bool{}
	var names []string
	for _, w := range defs {
		if !seen[w.Name] {
			seen[w.Name] = true
			names = append(names, w.Name)
		}
	}
	return view.Safe(strings.Join(names, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
