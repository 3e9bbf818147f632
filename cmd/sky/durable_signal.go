package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// `sky durable signal ID NAME JSON`: deliver a signal from the command
// line (Engine.SignalRun, Engine.ReplaceSignal).

func init() {
	registerDurable(durableCommand{
		use: "signal [--replace] ID NAME JSON|--file payload.json",
		arity: func(f *durableFlags) (int, string) {
			if f.file != "" {
				return 2, "ID NAME, the payload in --file"
			}
			return 3, "ID NAME JSON"
		},
		short: "deliver a signal with its JSON payload to a run (--file: any size up to the payload cap)",
		long: `Deliver the signal NAME with a JSON payload to the run ID. A run waiting for it wakes; a run that
has not asked yet finds it in its mailbox; an id no run has yet keeps it for a run that starts
with that id (with a note). A repeat of a signal is ignored, consumed or not (the first one wins);
--replace corrects the payload of one not consumed yet. A signal to a finished run is ignored. A
payload that is not JSON is a usage error and stores nothing.`,
		example: `  sky durable signal order-42 payment.settled '{"reference":"stl-1"}'
  sky durable signal order-42 payment.settled --file payload.json
  sky durable signal --replace order-42 payment.settled '{"reference":"stl-2"}'`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.BoolVar(&f.replace, "replace", false, "replace the payload of a signal the run has not consumed yet (a repeat without it is ignored)")
			fs.StringVar(&f.file, "file", "", "read the JSON payload from this file instead of the JSON argument")
		},
		invalidIsUsage: true,
		run:            durableSignal,
	})
}

func durableSignal(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	id, name := a[0], a[1]
	var payload string
	if f.file != "" {
		b, err := os.ReadFile(f.file)
		if err != nil {
			// Not a usage error: the file is missing or unreadable (exit 1,
			// as replay --from and a program that does not load).
			kind := task.Io
			if errors.Is(err, fs.ErrNotExist) {
				kind = task.NotFound
			}
			return task.Errorf(kind, "cannot read the payload: %v; hint: --file names a file holding the JSON payload", err)
		}
		if payload = strings.TrimSpace(string(b)); !json.Valid([]byte(payload)) {
			return task.Errorf(task.InvalidInput, "the payload in %s is not valid JSON; hint: the file holds one JSON value, e.g. {\"reference\":\"stl-1\"}", f.file)
		}
	} else if payload = a[2]; !json.Valid([]byte(payload)) {
		return task.Errorf(task.InvalidInput, "the payload %s is not valid JSON; hint: quote it for the shell, e.g. '{\"reference\":\"stl-1\"}' or '\"text\"', or pass --file payload.json", payload)
	}
	send := e.SignalRun
	if f.replace {
		send = e.ReplaceSignal
	}
	outcome, err := send(ctx, id, name, payload)
	if err != nil {
		return err
	}
	if outcome == durable.SignalNoRunYet {
		fmt.Fprintf(f.warn, "note: no run with id %q exists yet; the signal waits in its mailbox for a run with that id (check the id with `sky durable ls`)\n", id)
	}
	fmt.Fprintln(out, view.Safe(outcome.Message(id, name)))
	return nil
}
