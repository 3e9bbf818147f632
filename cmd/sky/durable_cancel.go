package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// `sky durable cancel ID` and `sky durable retry ID`; with filters
// instead of an id they act on every matching run (durable_bulk.go).

func init() {
	registerDurable(bulkCommand(durableCommand{
		use:   "cancel ID | cancel FILTERS... [--dry-run] [--yes]",
		short: "cancel a run (it ends cancelled, with its journal), or every run the filters match",
		example: `  sky durable cancel order-42
  sky durable cancel --workflow checkout --created-before 7d --dry-run`,
		run: func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
			if err := e.Cancel(ctx, a[0]); err != nil {
				return err
			}
			fmt.Fprintf(out, "run %s cancelled\n", view.Safe(a[0]))
			return nil
		},
	}))
	registerDurable(bulkCommand(durableCommand{
		use:   "retry ID | retry FILTERS... [--dry-run] [--yes]",
		short: "make a failed or dead run due again, its journal kept, or every run the filters match",
		example: `  sky durable retry order-42
  sky durable retry --status dead --error "connection refused" --yes`,
		run: func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
			if err := e.Retry(ctx, a[0]); err != nil {
				return err
			}
			fmt.Fprintf(out, "run %s is due again (its journal is kept)\n", view.Safe(a[0]))
			return nil
		},
	}))
}
