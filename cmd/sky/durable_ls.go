package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

func init() {
	registerDurable(durableCommand{
		use:      "ls [--status S] [--workflow W] [--parent ID] [--search TEXT] [--limit N] [--before ID] [--json]",
		readOnly: true,
		short:    "list the newest runs, filtered in the database",
		long: `List the newest runs, newest first, filtered in the database. When there are more than --limit,
a note on stderr names the --before flag that reads the next page (stdout stays a table, or JSON);
when no run has the --workflow given, a note there names the workflows that have runs.
--search TEXT keeps the runs whose id, input, output or last error contains TEXT, any case
(3 characters or more; an encrypted payload matches nothing).`,
		example: `  sky durable ls
  sky durable ls --status failed --workflow checkout
  sky durable ls --parent order-42 --json
  sky durable ls --search card_declined --status dead
  sky durable ls --limit 20 --before order-17      # the next page`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.status, "status", "", "only runs in this status (running, waiting, done, failed, dead, cancelled, timed_out)")
			fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
			fs.IntVar(&f.limit, "limit", defaultLsLimit, "at most this many runs, newest first (1 or more)")
			fs.StringVar(&f.before, "before", "", "only runs listed after the run with this id (the next page)")
			fs.StringVar(&f.parent, "parent", "", "only the children of this run (Durable.startChild, Durable.all)")
			fs.StringVar(&f.search, "search", "", "only runs whose id, input, output or last error contains this text, any case (3 characters or more)")
			durableJSONFlag(fs, f)
		},
		check: func(f *durableFlags, _ []string) error {
			if f.status != "" && !durable.Status(f.status).Valid() {
				return fmt.Errorf("unknown status %q; hint: one of running, waiting, done, failed, dead, cancelled, timed_out", f.status)
			}
			return checkLsLimit(f.limit)
		},
		noSchema: func(s streams) int {
			fmt.Fprintln(s.stdout, "no runs (the database has no durable tables yet)")
			return exitOK
		},
		run: durableLs,
	})
}

// defaultLsLimit is how many runs `sky durable ls` prints without --limit.
const defaultLsLimit = 50

// checkLsLimit refuses a --limit of ls that lists nothing: 0 or less.
func checkLsLimit(limit int) error {
	switch {
	case limit < 0:
		return fmt.Errorf("--limit %d is negative; hint: --limit 20 (the default is %d)", limit, defaultLsLimit)
	case limit == 0:
		return fmt.Errorf("--limit 0 would list no runs; hint: --limit 20 (the default is %d); page with --before ID", defaultLsLimit)
	}
	return nil
}

// durableLs prints the newest runs that match the filters. It asks for one
// run more than --limit, so it knows, in the same query, whether the listing
// was cut; then it says so on stderr (stdout stays a table, or JSON) and
// names the flag that reads the next page.
func durableLs(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	filter := durable.ListFilter{Status: durable.Status(f.status), Workflow: f.workflow, Parent: f.parent, Search: f.search, Limit: f.limit + 1}
	if f.before != "" {
		r, err := e.ReadRun(ctx, f.before)
		if err != nil {
			return fmt.Errorf("--before %s: %w", f.before, err)
		}
		filter.Before = durable.CursorOf(r)
	}
	runs, err := e.ListRuns(ctx, filter)
	if err != nil {
		return err
	}
	truncated := len(runs) > f.limit
	if truncated {
		runs = runs[:f.limit]
	}
	held, err := e.HeldBy(ctx, runs)
	if err != nil {
		return err
	}
	if f.json {
		err = writeJSON(out, runsJSON(runs, held))
	} else {
		printRunTable(out, runs, held, time.Now())
	}
	if len(runs) == 0 && f.before == "" {
		noteUnknownWorkflow(ctx, e, f.workflow, f.warn)
	}
	if truncated {
		fmt.Fprintf(f.warn, "note: showing %d %s of more; use --limit N for more, or --before %s for the next page\n", f.limit, plural(f.limit, "run", "runs"), view.Safe(runs[len(runs)-1].ID))
	}
	return err
}
