package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

func init() {
	registerDurable(bulkCommand(durableCommand{
		use:   "release ID | release FILTERS... [--dry-run] [--yes]",
		short: "free a running run whose worker is known dead, so a worker resumes it at once, or every run the filters match",
		example: `  sky durable release order-42
  sky durable release --workflow checkout --created-before 1h --dry-run`,
		run: durableRelease,
	}))
}

// durableRelease is `sky durable release ID`: free a running run whose
// worker is known dead (its process was killed, its machine is gone), so a
// peer resumes it at once instead of when its lease ends. A run that is
// not running is refused (exit 1).
func durableRelease(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
	if err := e.Release(ctx, a[0]); err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s released: it is due at once; a worker resumes it from its journal (the dead worker's attempt counts)\n", view.Safe(a[0]))
	return nil
}
