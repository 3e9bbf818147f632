package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/task"
	skydb "skydurable/stdlib/db"
	"skydurable/stdlib/durable"
)

// `sky durable` lets an operator see and fix durable runs: list them, show
// one with its journal, deliver a signal, cancel, retry. It opens the same
// database as Db.connect (sky.toml [database], DATABASE_URL, SKY_DB_DRIVER /
// SKY_DB_PATH), or the one --db names.
//
// Exit codes: 0 ok, 1 not found or refused (or the database failed), 2 usage.

func init() {
	register(&command{
		name:    "durable",
		usage:   "sky durable ls|show|signal|cancel|retry",
		summary: "inspect and operate durable runs (sky durable help)",
		run:     runDurable,
	})
}

const durableUsage = `Usage:
  sky durable ls [--status S] [--workflow W] [--limit N] [--json]
  sky durable show ID [--json]
  sky durable signal ID NAME JSON
  sky durable cancel ID
  sky durable retry ID

Every subcommand takes --db DSN (a postgres:// URL or a SQLite file path);
without it the database is the one Db.connect opens.
Exit codes: 0 ok, 1 not found or refused, 2 usage.
`

// durableOp is one `sky durable` subcommand, given its engine and its
// positional arguments after flag parsing.
type durableOp struct {
	args  int    // positional arguments it needs
	names string // their names, for the usage error
	run   func(ctx context.Context, e *durable.Engine, f *durableFlags, args []string, out io.Writer) error
}

var durableOps = map[string]durableOp{
	"ls":     {0, "", durableLs},
	"show":   {1, "ID", durableShow},
	"signal": {3, "ID NAME JSON", durableSignal},
	"cancel": {1, "ID", func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
		if err := e.Cancel(ctx, a[0]); err != nil {
			return err
		}
		fmt.Fprintf(out, "run %s cancelled\n", a[0])
		return nil
	}},
	"retry": {1, "ID", func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
		if err := e.Retry(ctx, a[0]); err != nil {
			return err
		}
		fmt.Fprintf(out, "run %s is due again (its journal is kept)\n", a[0])
		return nil
	}},
}

type durableFlags struct {
	dsn      string
	status   string
	workflow string
	limit    int
	json     bool
}

func runDurable(ctx context.Context, args []string, s streams) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(s.stdout, durableUsage)
		if len(args) == 0 {
			return exitNoBuild
		}
		return exitOK
	}
	op, ok := durableOps[args[0]]
	if !ok {
		fmt.Fprintf(s.stderr, "sky durable: unknown subcommand %q\n\n%s", args[0], durableUsage)
		return exitNoBuild
	}
	var f durableFlags
	fs := flag.NewFlagSet("sky durable "+args[0], flag.ContinueOnError)
	fs.SetOutput(s.stderr)
	fs.StringVar(&f.dsn, "db", "", "database: a postgres:// URL or a SQLite file path")
	if args[0] == "ls" {
		fs.StringVar(&f.status, "status", "", "only runs in this status (running, waiting, done, failed, dead, cancelled)")
		fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
		fs.IntVar(&f.limit, "limit", 50, "at most this many runs, newest first")
	}
	if args[0] == "ls" || args[0] == "show" {
		fs.BoolVar(&f.json, "json", false, "print JSON for scripts")
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return exitNoBuild
	}
	if len(pos) != op.args {
		fmt.Fprintf(s.stderr, "sky durable %s: expected %d argument(s) (%s), got %d\n\n%s", args[0], op.args, op.names, len(pos), durableUsage)
		return exitNoBuild
	}
	if f.status != "" && !validStatus(f.status) {
		fmt.Fprintf(s.stderr, "sky durable ls: unknown status %q; hint: one of running, waiting, done, failed, dead, cancelled\n", f.status)
		return exitNoBuild
	}
	d, err := openDurableDB(ctx, f.dsn)
	if err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	defer d.Close()
	e := durable.New(d, durable.Options{WorkerID: "sky-durable-cli"})
	if err := e.Setup(ctx); err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	if err := op.run(ctx, e, &f, pos, s.stdout); err != nil {
		fmt.Fprintf(s.stderr, "sky durable %s: %v\n", args[0], err)
		if te := task.As(err); te.Kind == task.InvalidInput && args[0] == "signal" {
			return exitNoBuild
		}
		return exitFailure
	}
	return exitOK
}

// parseInterspersed parses flags that may come before or after positional
// arguments (`sky durable show ID --json`).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func validStatus(s string) bool {
	switch durable.Status(s) {
	case durable.StatusRunning, durable.StatusWaiting, durable.StatusDone, durable.StatusFailed, durable.StatusDead, durable.StatusCancelled:
		return true
	}
	return false
}

// openDurableDB opens --db, or what Db.connect would open. A SQLite file
// that does not exist is an error rather than a new empty database.
func openDurableDB(ctx context.Context, dsn string) (*db.DB, error) {
	var cfg skydb.Config
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		cfg = skydb.Config{Driver: "postgres", DSN: dsn}
	case dsn != "":
		cfg = skydb.Config{Driver: "sqlite", DSN: dsn}
	default:
		var err error
		if cfg, err = skydb.Resolve(skydb.DefaultEnv()); err != nil {
			return nil, err
		}
	}
	if cfg.Driver == "sqlite" {
		if _, err := os.Stat(cfg.DSN); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the SQLite database %s does not exist; hint: run the program first, or pass --db", cfg.DSN)
		}
	}
	return db.Open(ctx, cfg.Driver, cfg.DSN)
}

func durableSignal(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
	id, name, payload := a[0], a[1], a[2]
	if !json.Valid([]byte(payload)) {
		return task.Errorf(task.InvalidInput, "the payload %s is not valid JSON; hint: quote it for the shell, e.g. '{\"reference\":\"stl-1\"}' or '\"text\"'", payload)
	}
	if err := e.Signal(ctx, id, name, payload); err != nil {
		return err
	}
	fmt.Fprintf(out, "signal %s delivered to run %s\n", name, id)
	return nil
}

func durableLs(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	runs, err := e.List(ctx, durable.Status(f.status), listFetch(f))
	if err != nil {
		return err
	}
	if f.workflow != "" {
		kept := runs[:0]
		for _, r := range runs {
			if r.Workflow == f.workflow {
				kept = append(kept, r)
			}
		}
		runs = kept
	}
	if len(runs) > f.limit && f.limit > 0 {
		runs = runs[:f.limit]
	}
	if f.json {
		return writeJSON(out, runsJSON(runs))
	}
	printRunTable(out, runs, time.Now())
	return nil
}

// listFetch is how many runs ls reads: a workflow filter is applied after
// reading, so it reads more.
func listFetch(f *durableFlags) int {
	if f.workflow != "" {
		return 100000
	}
	return f.limit
}

func durableShow(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	r, journal, err := e.Describe(ctx, a[0])
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, map[string]any{"run": runJSON(r), "journal": journalJSON(journal)})
	}
	printRun(out, r, journal, time.Now())
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
