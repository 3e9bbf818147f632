package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// `sky durable retry|cancel|release` with filters instead of an id act on
// every matching run (Engine.Bulk): they print the count first, stop there
// with --dry-run, and ask before acting unless --yes.

// bulkFlags are the filters and switches of a bulk action.
type bulkFlags struct {
	status, workflow, parent string
	createdBefore            string
	createdAfter             string
	errorText                string
	dryRun, yes              bool
	// stdin answers the confirmation; terminal says whether a person is
	// there to answer it.
	stdin    io.Reader
	terminal bool
}

// bulkVerbs are the past tense of each action and its consequence for one
// run and for several, for its report.
var bulkVerbs = map[string]struct{ past, one, many string }{
	"retry":   {"retried", "due now with its attempts reset, its journal kept", "due now with their attempts reset, journals kept"},
	"cancel":  {"cancelled", "with its unfinished children", "with their unfinished children"},
	"release": {"released", "due now; a worker resumes it from its journal", "due now; a worker resumes each from its journal"},
}

// bulkCommand is the single-run subcommand single (retry, cancel,
// release: single.run acts on the run of its one argument) that acts on
// every matching run instead when given filters: their flags, the usage
// checks, and the bulk action. Its help lists the filters.
func bulkCommand(single durableCommand) durableCommand {
	c := single
	name := c.name()
	c.long = c.short + ".\n\n" + `With filters instead of an id it acts on every matching run, in batches: it prints the count
first, stops there with --dry-run, and asks before acting unless --yes (needed when stdin is not
a terminal). FILTERS are --status S[,S] --workflow W --parent ID --created-before T|AGE
--created-after T|AGE --error TEXT; T is an RFC3339 time, AGE a duration (2h, 90m, 7d):
--created-before 2h means older than two hours.`
	c.flags = func(fs *pflag.FlagSet, f *durableFlags) {
		b := &f.bulk
		valid := statusList(durable.BulkAction(name).Statuses())
		fs.StringVar(&b.status, "status", "", "only runs in these statuses, comma-separated (default: every one "+name+" applies to: "+valid+")")
		fs.StringVar(&b.workflow, "workflow", "", "only runs of this workflow")
		fs.StringVar(&b.parent, "parent", "", "only the children of this run")
		fs.StringVar(&b.createdBefore, "created-before", "", "only runs created before this time (RFC3339), or more than this long ago (2h, 90m, 7d)")
		fs.StringVar(&b.createdAfter, "created-after", "", "only runs created at or after this time (RFC3339), or within this long (2h, 90m, 7d)")
		fs.StringVar(&b.errorText, "error", "", "only runs whose last error contains this text (case-sensitive)")
		fs.BoolVar(&b.dryRun, "dry-run", false, "with filters: print how many runs match and change nothing")
		fs.BoolVar(&b.yes, "yes", false, "with filters: act without asking (needed when stdin is not a terminal)")
	}
	c.statuses = durable.BulkAction(name).Statuses()
	c.check = func(f *durableFlags, pos []string) error { return checkBulk(name, &f.bulk, pos) }
	c.arity = func(f *durableFlags) (int, string) {
		if f.bulk.filtered() {
			return 0, ""
		}
		return 1, "ID"
	}
	c.run = func(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
		if !f.bulk.filtered() {
			return single.run(ctx, e, f, a, out)
		}
		f.bulk.stdin, f.bulk.terminal = f.stdin, isTerminal(f.stdin)
		return durableBulk(ctx, e, durable.BulkAction(name), &f.bulk, out, f.warn)
	}
	return c
}

func (b *bulkFlags) filtered() bool {
	return b.status != "" || b.workflow != "" || b.parent != "" || b.createdBefore != "" || b.createdAfter != "" || b.errorText != ""
}

// checkBulk refuses what `sky durable NAME` cannot act on: an id and
// filters both, neither, or --dry-run without filters.
func checkBulk(name string, b *bulkFlags, pos []string) error {
	switch {
	case b.filtered() && len(pos) > 0:
		return fmt.Errorf("give a run id or filters, not both (got %q and filters); hint: sky durable %s ID, or sky durable %s --status S ... without the id", pos[0], name, name)
	case b.filtered():
		return nil
	case b.dryRun && len(pos) == 0:
		return fmt.Errorf("--dry-run counts the runs filters match, but no filter was given; hint: sky durable %s --status %s --dry-run",
			name, durable.BulkAction(name).Statuses()[0])
	case b.dryRun:
		return fmt.Errorf("--dry-run goes with filters, and an id alone would act; hint: sky durable %s --status S --dry-run counts the matching runs", name)
	case len(pos) == 0:
		return fmt.Errorf("needs a run id or filters; hint: sky durable %s ID, or sky durable %s --status %s [--workflow W] [--error TEXT] to act on every matching run",
			name, name, durable.BulkAction(name).Statuses()[0])
	}
	return nil
}

// filter reads the filter flags as of now.
func (b *bulkFlags) filter(action durable.BulkAction, now time.Time) (durable.BulkFilter, error) {
	f := durable.BulkFilter{Workflow: b.workflow, Parent: b.parent, ErrorContains: b.errorText}
	if b.status != "" {
		for _, s := range strings.Split(b.status, ",") {
			st := durable.Status(strings.TrimSpace(s))
			if !st.Valid() {
				return f, task.Errorf(task.InvalidInput, "--status %q is not a run status; hint: %s applies to %s runs", s, action, statusList(action.Statuses()))
			}
			f.Statuses = append(f.Statuses, st)
		}
	}
	var err error
	if f.CreatedBefore, err = parseWhen("--created-before", b.createdBefore, now); err != nil {
		return f, err
	}
	if f.CreatedAfter, err = parseWhen("--created-after", b.createdAfter, now); err != nil {
		return f, err
	}
	return f, nil
}

// parseWhen reads a time (RFC3339) or an age (a Go duration or days, as
// --older-than: 2h means now - 2h); "" is the zero time.
func parseWhen(flagName, text string, now time.Time) (time.Time, error) {
	if text == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t, nil
	}
	if d, err := parseRetention(text); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, task.Errorf(task.InvalidInput, "%s %q is neither a time nor an age; hint: an RFC3339 time such as 2026-12-01T00:00:00Z, or an age such as 2h, 90m or 7d", flagName, text)
}

func statusList(statuses []durable.Status) string {
	words := make([]string, len(statuses))
	for i, s := range statuses {
		words[i] = string(s)
	}
	return strings.Join(words, ", ")
}

// durableBulk counts the runs b selects, prints the count, and unless
// --dry-run (or none match) asks (on ask, stderr), then acts.
func durableBulk(ctx context.Context, e *durable.Engine, action durable.BulkAction, b *bulkFlags, out, ask io.Writer) error {
	f, err := b.filter(action, time.Now())
	if err != nil {
		return err
	}
	n, err := e.CountBulk(ctx, action, f)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d %s to %s\n", n, plural(int(n), "run", "runs"), action)
	if n == 0 {
		noteUnknownWorkflow(ctx, e, f.Workflow, ask)
	}
	if n == 0 || b.dryRun {
		if b.dryRun {
			fmt.Fprintln(out, "dry run: nothing changed")
		}
		return nil
	}
	if !b.yes {
		if !b.terminal {
			return task.Errorf(task.InvalidInput, "stdin is not a terminal, so there is nobody to confirm; hint: pass --yes to %s the %d %s, or --dry-run to count them only",
				action, n, plural(int(n), "run", "runs"))
		}
		if !confirm(b.stdin, ask, fmt.Sprintf("%s %d %s? [y/N] ", action, n, plural(int(n), "run", "runs"))) {
			return task.Errorf(task.Conflict, "not confirmed: nothing changed")
		}
	}
	res, err := e.Bulk(ctx, action, f, durable.BulkOptions{})
	v := bulkVerbs[string(action)]
	fmt.Fprintf(out, "%s %d %s (%s) in %d %s\n", v.past, res.Changed, plural(int(res.Changed), "run", "runs"), plural(int(res.Changed), v.one, v.many),
		res.Batches, plural(res.Batches, "batch", "batches"))
	if err != nil {
		return fmt.Errorf("stopped after %d %s: %w; the same command takes up the runs left", res.Changed, plural(int(res.Changed), "run", "runs"), err)
	}
	return nil
}

// confirm asks question on out and reads the answer from in: yes only for
// y or yes.
func confirm(in io.Reader, out io.Writer, question string) bool {
	fmt.Fprint(out, question)
	line, _ := bufio.NewReader(in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

// isTerminal reports whether r is a terminal, where a person can answer a
// question. Not every character device is one: /dev/null, the stdin of
// cron, systemd services and `docker run` without -i, is a character device
// nobody answers on.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
