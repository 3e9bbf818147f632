package main

import (
	"context"
	"fmt"
	"io"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

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
	if r.batch <= 0 {
		return task.Errorf(task.InvalidInput, "--batch %d covers no run; hint: --batch %d (the default)", r.batch, durable.DefaultRekeyBatch)
	}
	batches := 0
	p, err := e.Rekey(ctx, durable.RekeyOptions{BatchSize: r.batch, After: r.after, DryRun: r.dryRun, OnBatch: func(p durable.RekeyProgress) {
		batches++
		if !r.dryRun {
			fmt.Fprintf(out, "batch %d: %d runs, %d payloads sealed again so far (last run %s)\n", batches, p.Runs, p.Resealed, view.Safe(p.Last))
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
	fmt.Fprintf(out, "rekey: %d runs, %d payloads read, %d %s with the first key of %s, %d unreadable\n",
		p.Runs, p.Values, p.Resealed, verb, durable.KeysEnv, p.Unreadable)
	if p.Unreadable > 0 {
		return task.Errorf(task.Unavailable, "%d payloads could not be read and were left as they are; the first: %s; hint: add the key they name to %s (after the first) and run rekey again",
			p.Unreadable, view.SafeText(p.FirstUnreadable), durable.KeysEnv)
	}
	return nil
}
