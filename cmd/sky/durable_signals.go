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

// `sky durable signals --orphans` lists the signals sent to run ids no run
// has: a typo in a webhook's run id, or a signal sent before its run
// starts. They are kept for the orphan signal TTL (7 days by default, see
// Options.OrphanSignalTTL), then deleted by the workers' retention work.

func init() {
	registerDurable(durableCommand{
		use:      "signals --orphans [--limit N] [--json]",
		readOnly: true,
		short:    "the signals sent to run ids no run has, oldest first",
		long: `List the signals sent to run ids no run has, oldest first: a typo in a webhook's run id, or a
signal sent before its run starts. They are kept for the orphan signal TTL (7 days by default),
then deleted by the workers' retention work. A run's own signals are in sky durable show ID.`,
		example: `  sky durable signals --orphans
  sky durable signals --orphans --limit 200 --json`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.BoolVar(&f.orphans, "orphans", false, "list the signals sent to run ids no run has")
			fs.IntVar(&f.limit, "limit", defaultLsLimit, "at most this many, oldest first (1 or more)")
			durableJSONFlag(fs, f)
		},
		check: func(f *durableFlags, _ []string) error {
			if !f.orphans {
				return fmt.Errorf("nothing to list without --orphans; hint: sky durable signals --orphans (a run's own signals are in sky durable show ID)")
			}
			if f.limit < 0 {
				return fmt.Errorf("--limit %d is negative; hint: --limit 20 (the default is %d)", f.limit, defaultLsLimit)
			}
			if f.limit == 0 {
				return fmt.Errorf("--limit 0 lists nothing; hint: --limit 20 (the default is %d)", defaultLsLimit)
			}
			return nil
		},
		run: durableSignals,
	})
}

// orphanSignalJSON is one orphan signal in `signals --orphans --json`.
type orphanSignalJSON struct {
	RunID  string    `json:"run_id"`
	Name   string    `json:"name"`
	Bytes  int       `json:"bytes"`
	SentAt time.Time `json:"sent_at"`
}

func durableSignals(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	found, err := e.OrphanSignals(ctx, f.limit+1)
	if err != nil {
		return err
	}
	truncated := len(found) > f.limit
	if truncated {
		found = found[:f.limit]
	}
	if f.json {
		list := make([]orphanSignalJSON, len(found))
		for i, o := range found {
			list[i] = orphanSignalJSON{RunID: o.RunID, Name: o.Name, Bytes: o.Bytes, SentAt: o.SentAt.UTC()}
		}
		err = writeJSON(out, list)
	} else if len(found) == 0 {
		fmt.Fprintln(out, "no orphan signals (every signal stored names a run that exists)")
	} else {
		now := time.Now()
		tw := newTable(out)
		fmt.Fprintln(tw, "RUN ID\tSIGNAL\tBYTES\tSENT")
		for _, o := range found {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", view.Safe(o.RunID), view.Safe(o.Name), o.Bytes, view.Ago(o.SentAt, now))
		}
		err = tw.Flush()
	}
	if truncated {
		fmt.Fprintf(f.warn, "note: showing the oldest %d orphan %s of more; use --limit N for more\n", f.limit, plural(f.limit, "signal", "signals"))
	}
	return err
}
