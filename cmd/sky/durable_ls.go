package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// defaultLsLimit is how many runs `sky durable ls` prints without --limit.
const defaultLsLimit = 50

// checkLsLimit refuses a --limit of ls that lists nothing: 0 or less.
func checkLsLimit(op string, limit int) error {
	switch {
	case op != "ls":
		return nil
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
	if truncated {
		fmt.Fprintf(f.warn, "note: showing %d runs of more; use --limit N for more, or --before %s for the next page\n", f.limit, view.Safe(runs[len(runs)-1].ID))
	}
	return err
}
