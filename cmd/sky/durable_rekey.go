package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

func init() {
	registerDurable(durableCommand{
		use:   "rekey [--batch N] [--after ID] [--dry-run]",
		short: "seal every stored payload again with the first key of SKY_DURABLE_KEYS (run again to resume)",
		long: `Every stored payload (inputs, outputs, journal entries, signals, events) sealed again with the
first key of SKY_DURABLE_KEYS, in batches of runs in id order (one read and one short transaction
each), a line of progress per batch. Payloads sealed with an older key of the ring, or stored plain,
are sealed with the first; an interrupted rekey resumes where it stopped when run again (or at once
with --after the last run id it printed). Exit 1 when a payload could not be read (its key is not
in the ring): it is left as it is and named.`,
		example: `  sky durable rekey --dry-run      # SKY_DURABLE_KEYS=k2:NEW,k1:OLD: count what k1 or plain text holds
  sky durable rekey --batch 500    # seal it all again with k2, 500 runs a transaction`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.IntVar(&f.rekey.batch, "batch", durable.DefaultRekeyBatch, "runs per batch (each one read and one short transaction)")
			fs.StringVar(&f.rekey.after, "after", "", "resume after this run id (the last one a rekey printed)")
			fs.BoolVar(&f.rekey.dryRun, "dry-run", false, "count the payloads to seal again, write nothing")
		},
		check: func(f *durableFlags, _ []string) error {
			if f.rekey.batch <= 0 {
				return task.Errorf(task.InvalidInput, "--batch %d covers no run; hint: --batch %d (the default)", f.rekey.batch, durable.DefaultRekeyBatch)
			}
			return nil
		},
		run: durableRekey,
	})
}

// rekeyFlags are `sky durable rekey`'s flags.
type rekeyFlags struct {
	batch  int
	after  string
	dryRun bool
}

// durableRekey is `sky durable rekey [--batch N] [--after ID] [--dry-run]`:
// every stored payload sealed again with the first key of SKY_DURABLE_KEYS
// (durable.Engine.Rekey), a line of progress per batch. An interrupted
// rekey is resumed by running it again (it skips what is done), or at once
// with --after the last run id it printed.
func durableRekey(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	r := f.rekey
	batches := 0
	p, err := e.Rekey(ctx, durable.RekeyOptions{BatchSize: r.batch, After: r.after, DryRun: r.dryRun, OnBatch: func(p durable.RekeyProgress) {
		batches++
		if !r.dryRun {
			fmt.Fprintf(out, "batch %d: %d %s, %d %s sealed again so far (last run %s)\n", batches, p.Runs, plural(int(p.Runs), "run", "runs"),
				p.Resealed, plural(int(p.Resealed), "payload", "payloads"), view.Safe(p.Last))
		}
	}})
	if err != nil {
		if p.Last != "" {
			return fmt.Errorf("%w; hint: resume with --after %s", err, p.Last)
		}
		return err
	}
	verb := "sealed again"
	if r.dryRun {
		verb = "to seal again (dry run: nothing written)"
	}
	fmt.Fprintf(out, "rekey: %d %s, %d %s read, %d %s with the first key of %s, %d unreadable\n",
		p.Runs, plural(int(p.Runs), "run", "runs"), p.Values, plural(int(p.Values), "payload", "payloads"), p.Resealed, verb, durable.KeysEnv, p.Unreadable)
	if p.Unreadable > 0 {
		return task.Errorf(task.Unavailable, "%d %s could not be read and %s left as they are; the first: %s; hint: add the key they name to %s (after the first) and run rekey again",
			p.Unreadable, plural(int(p.Unreadable), "payload", "payloads"), plural(int(p.Unreadable), "was", "were"), view.SafeText(p.FirstUnreadable), durable.KeysEnv)
	}
	return nil
}
