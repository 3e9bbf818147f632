package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// `sky durable export` writes the runs in flight, one JSON line each, with
// everything the deploy gate's replay needs; `sky durable replay --from
// FILE` reads them back with no database (durable_replay.go).

// gateFlags are the flags of export and replay.
type gateFlags struct {
	statuses statusesFlag // export --status (repeatable, or comma-separated)
	from     string       // replay --from: an export file instead of the database
}

// gateFlagsFor registers the flags of op, when it is export or replay.
func gateFlagsFor(op string, fs *flag.FlagSet, f *durableFlags) {
	switch op {
	case "export":
		fs.Var(&f.gate.statuses, "status", "only runs in this status (repeat it, or S1,S2; default waiting,running,failed,dead)")
		fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
	case "replay":
		fs.StringVar(&f.gate.from, "from", "", "read the runs from this file (written by `sky durable export`) instead of the database")
		fs.BoolVar(&f.json, "json", false, "print JSON for scripts")
	}
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
	statuses := f.gate.statuses.String()
	if statuses == "" {
		statuses = "waiting, running, failed, dead"
	}
	fmt.Fprintf(f.warn, "exported %d %s (%s)\n", n, plural(n, "run", "runs"), statuses)
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
