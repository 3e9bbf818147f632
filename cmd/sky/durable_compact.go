package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// `sky durable compact --older-than DURATION` (Engine.CompactOlderThan).

func init() {
	registerDurable(durableCommand{
		use:     "compact --older-than DURATION",
		short:   "delete the journal, signal and history rows of runs finished longer ago than DURATION (720h, 90m, 30d)",
		example: `  sky durable compact --older-than 30d`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.StringVar(&f.olderThan, "older-than", "", "compact runs finished longer ago than this (720h, 30d)")
		},
		check: func(f *durableFlags, _ []string) error {
			_, err := parseRetention(f.olderThan)
			return err
		},
		invalidIsUsage: true,
		run:            durableCompact,
	})
}

func durableCompact(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	retention, err := parseRetention(f.olderThan)
	if err != nil {
		return err
	}
	res, err := e.CompactOlderThan(ctx, retention, durable.CompactOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted %d %s finished more than %s ago: deleted %d journal and signal %s in %d %s (longest %s)\n",
		res.Runs, plural(int(res.Runs), "run", "runs"), f.olderThan, res.Rows, plural(int(res.Rows), "row", "rows"), res.Batches, plural(res.Batches, "batch", "batches"),
		res.LongestBatch.Round(time.Millisecond))
	return nil
}

// parseRetention reads --older-than (durable.ParseAge).
func parseRetention(text string) (time.Duration, error) {
	if text == "" {
		return 0, task.Errorf(task.InvalidInput, "--older-than is required; hint: --older-than 720h or --older-than 30d")
	}
	return durable.ParseAge("--older-than", text)
}
