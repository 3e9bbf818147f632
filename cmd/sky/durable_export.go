package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// `sky durable export` writes the runs in flight, one JSON line each, with
// everything the deploy gate's replay needs; `sky durable replay --from
// FILE` reads them back with no database (durable_replay.go).

func init() {
	registerDurable(durableCommand{
		use:      "export [--status S ...] [--workflow W] > runs.jsonl",
		readOnly: true,
		short:    "the runs in flight, one JSON line each, for replay --from",
		long: `Write the runs in flight (waiting, running, failed and dead by default), one JSON line each, with
everything the deploy gate needs: sky durable replay --from runs.jsonl checks them against new
code with no database. A database with no durable tables exports nothing (exit 0).`,
		example: `  sky durable export > runs.jsonl
  sky durable export --status waiting,running --workflow checkout > runs.jsonl`,
		flags: func(fs *pflag.FlagSet, f *durableFlags) {
			fs.Var(&f.gate.statuses, "status", "only runs in this status (repeat it, or S1,S2; default waiting,running,failed,dead)")
			fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
		},
		noSchema: nothingInFlight("export"),
		run:      durableExport,
	})
}

// nothingInFlight answers a database with no durable tables for export
// and replay: nothing is in flight, so nothing to export or check (a
// deploy gate on a new database passes).
func nothingInFlight(name string) func(s streams) int {
	return func(s streams) int {
		fmt.Fprintf(s.stderr, "note: the database has no durable tables yet: no runs to %s\n", name)
		return exitOK
	}
}

// gateFlags are the flags of export and replay.
type gateFlags struct {
	statuses statusesFlag // export --status (repeatable, or comma-separated)
	from     string       // replay --from: an export file instead of the database
}

// statusesFlag is a repeatable --status.
type statusesFlag []durable.Status

func (l *statusesFlag) String() string {
	s := make([]string, len(*l))
	for i, st := range *l {
		s[i] = string(st)
	}
	return strings.Join(s, ",")
}

func (l *statusesFlag) Type() string { return "statuses" }

func (l *statusesFlag) Set(text string) error {
	for _, word := range strings.Split(text, ",") {
		st := durable.Status(strings.TrimSpace(word))
		if !st.Valid() {
			return fmt.Errorf("unknown status %q; hint: one of running, waiting, done, failed, dead, cancelled, timed_out", word)
		}
		*l = append(*l, st)
	}
	return nil
}

// durableExport is `sky durable export [--status S ...] [--workflow W]`.
func durableExport(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	err := e.EachRun(ctx, f.gate.statuses, f.workflow, func(r durable.Run, journal []durable.JournalEntry) error {
		n++
		return enc.Encode(durable.Export(r, journal))
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	statuses := strings.ReplaceAll(f.gate.statuses.String(), ",", ", ")
	if statuses == "" {
		statuses = "waiting, running, failed, dead"
	}
	fmt.Fprintf(f.warn, "exported %d %s (%s)\n", n, plural(n, "run", "runs"), statuses)
	if n == 0 {
		noteUnknownWorkflow(ctx, e, f.workflow, f.warn)
	}
	return nil
}

// replayOffline is `sky durable replay --from FILE PROGRAM`: the gate with
// no database. Statements a body makes between steps go to an empty
// in-memory SQLite database and are rolled back.
func replayOffline(ctx context.Context, f *durableFlags, pos []string, s streams) int {
	if f.dsn != "" {
		fmt.Fprintf(s.stderr, "sky durable replay: --from %s reads no database, so --db %s is not used; hint: drop --db, or drop --from to check the runs in that database\n", f.gate.from, f.dsn)
		return exitNoBuild
	}
	d, err := db.Open(ctx, "sqlite", ":memory:")
	if err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	defer d.Close()
	if err := durableReplay(ctx, durable.New(d, durable.Options{WorkerID: "sky-durable-cli", Keys: os.Getenv(durable.KeysEnv)}), f, pos, s.stdout); err != nil {
		fmt.Fprintf(s.stderr, "sky durable replay: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// eachExported calls fn with every run of the export file, one line at a
// time.
func eachExported(file string, fn func(durable.Run, []durable.JournalEntry) error) error {
	fh, err := os.Open(file)
	if err != nil {
		return task.Errorf(task.NotFound, "cannot read the runs: %v; hint: write them with `sky durable export > %s`", err, file)
	}
	defer fh.Close()
	rd := bufio.NewReader(fh)
	for line := 1; ; line++ {
		text, err := rd.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s:%d: %w", file, line, err)
		}
		if len(strings.TrimSpace(string(text))) > 0 {
			var x durable.ExportedRun
			if jerr := json.Unmarshal(text, &x); jerr != nil {
				return task.Errorf(task.InvalidInput, "%s:%d: not an exported run: %v; hint: the file must come from `sky durable export`, one run per line", file, line, jerr)
			}
			r, journal, rerr := x.Run()
			if rerr != nil {
				return fmt.Errorf("%s:%d: %w", file, line, rerr)
			}
			if ferr := fn(r, journal); ferr != nil {
				return ferr
			}
		}
		if err != nil {
			return nil // io.EOF
		}
	}
}
