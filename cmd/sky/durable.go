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
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/project"
	"skydurable/runtime/task"
	skydb "skydurable/stdlib/db"
)

// `sky durable` lets an operator see and fix durable runs: list them, show
// one with its journal, deliver a signal, cancel, retry, compact old ones. It opens the same
// database as Db.connect (sky.toml [database], DATABASE_URL, SKY_DB_DRIVER /
// SKY_DB_PATH), or the one --db names.
//
// Exit codes: 0 ok, 1 not found or refused (or the database failed), 2 usage.

func init() {
	register(&command{
		name:    "durable",
		usage:   "sky durable ls|show|signal|signals|cancel|retry|release|compact|fork|rewind|diff|export|replay|stats|ui|worker|schedules|schedule",
		summary: "inspect and operate durable runs (sky durable help)",
		run:     runDurable,
	})
}

const durableUsage = `Usage:
  sky durable ls [--status S] [--workflow W] [--parent ID] [--search TEXT] [--limit N] [--before ID] [--json]
                                              (--search: TEXT in the id, input, output or last error,
                                               any case; 3 characters or more)
  sky durable show ID [--json]
  sky durable signal [--replace] ID NAME JSON   (--replace: correct a payload not yet consumed)
  sky durable signal [--replace] ID NAME --file payload.json
                                              (a payload from a file: any size up to the payload cap)
  sky durable cancel ID
  sky durable retry ID
  sky durable release ID                      (free a running run whose worker is known dead)
  sky durable retry|cancel|release [--status S[,S]] [--workflow W] [--parent ID]
      [--created-before T|AGE] [--created-after T|AGE] [--error TEXT] [--dry-run] [--yes]
                                              (every matching run, in batches; T is RFC3339,
                                               AGE 2h/7d: --created-before 2h = older than 2h)
  sky durable compact --older-than DURATION   (e.g. 720h, 30d, 90m)
  sky durable signals --orphans [--limit N] [--json]
                                              (signals sent to run ids no run has, oldest first)
  sky durable fork ID --from STEP [--as NEWID] [--set STEP=JSON]
                                              (a new run with ID's history before STEP; --set: STEP's result replaced)
  sky durable rewind ID --to STEP             (a finished run back to STEP, in place)
  sky durable diff A B [--json]               (two runs' journals, position by position)
  sky durable export [--status S ...] [--workflow W] > runs.jsonl
                                              (the runs in flight, one JSON line each, for replay --from)
  sky durable replay [--from runs.jsonl] [--workflow W] [--json] FILE
                                              (deploy gate: a verdict per run in flight against FILE;
                                               exit 1 when one is incompatible)
  sky durable stats [--json]
  sky durable worker [--concurrency N] [--tick 1s] [--stop-timeout 10s] FILE
                                              (run the workflows FILE defines until SIGTERM)
  sky durable schedules [--json]             (the schedules, with their next tick)
  sky durable schedule rm ID
  sky durable ui [--addr 127.0.0.1:8080] [--token T] [--read-only]

Every subcommand takes --db DSN (a postgres:// URL or a SQLite file path);
without it the database is the one Db.connect opens. On PostgreSQL a
connection attempt gives up after 10s (connect_timeout=N in the URL changes
it) and, but for worker, a statement after 30s (statement_timeout=MS in the
URL changes it; not sent through PgBouncer).
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
	"ls":      {0, "", durableLs},
	"show":    {1, "ID", durableShow},
	"signal":  {3, "ID NAME JSON", durableSignal},
	"compact": {0, "", durableCompact},
	"signals": {0, "", durableSignals},
	"replay":  {1, "FILE", durableReplay},
	"export":  {0, "", durableExport},
	"stats":   {0, "", durableStats},
	"ui":      {0, "", durableUI},
	"release": {1, "ID", durableRelease},
	"worker":  {1, "FILE", durableWorker},
	"cancel": {1, "ID", func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
		if err := e.Cancel(ctx, a[0]); err != nil {
			return err
		}
		fmt.Fprintf(out, "run %s cancelled\n", view.Safe(a[0]))
		return nil
	}},
	"retry": {1, "ID", func(ctx context.Context, e *durable.Engine, _ *durableFlags, a []string, out io.Writer) error {
		if err := e.Retry(ctx, a[0]); err != nil {
			return err
		}
		fmt.Fprintf(out, "run %s is due again (its journal is kept)\n", view.Safe(a[0]))
		return nil
	}},
}

type durableFlags struct {
	dsn       string
	status    string
	workflow  string
	parent    string
	limit     int
	before    string
	search    string
	json      bool
	olderThan string
	orphans   bool
	addr      string
	token     string
	readOnly  bool
	// worker: its WorkerOptions.
	concurrency       int
	tick, stopTimeout time.Duration
	replace           bool
	file              string
	// fork, rewind: their flags (durable_fork.go).
	travel timeTravel
	// retry, cancel, release with filters (durable_bulk.go).
	bulk bulkFlags
	// export, replay: their flags (durable_export.go).
	gate gateFlags
	// warn receives notes that are not errors (stderr).
	warn io.Writer
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
	f := durableFlags{warn: s.stderr}
	fs := flag.NewFlagSet("sky durable "+args[0], flag.ContinueOnError)
	fs.SetOutput(s.stderr)
	fs.StringVar(&f.dsn, "db", "", "database: a postgres:// URL or a SQLite file path")
	if args[0] == "ls" {
		fs.StringVar(&f.status, "status", "", "only runs in this status (running, waiting, done, failed, dead, cancelled, timed_out)")
		fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
		fs.IntVar(&f.limit, "limit", defaultLsLimit, "at most this many runs, newest first (1 or more)")
		fs.StringVar(&f.before, "before", "", "only runs listed after the run with this id (the next page)")
		fs.StringVar(&f.parent, "parent", "", "only the children of this run (Durable.startChild, Durable.all)")
		fs.StringVar(&f.search, "search", "", "only runs whose id, input, output or last error contains this text, any case (3 characters or more)")
	}
	if args[0] == "signal" {
		fs.BoolVar(&f.replace, "replace", false, "replace the payload of a signal the run has not consumed yet (a repeat without it is ignored)")
		fs.StringVar(&f.file, "file", "", "read the JSON payload from this file instead of the JSON argument")
	}
	if args[0] == "replay" {
		fs.StringVar(&f.workflow, "workflow", "", "only runs of this workflow")
	}
	if _, ok := bulkVerbs[args[0]]; ok {
		addBulkFlags(fs, &f.bulk, args[0])
	}
	gateFlagsFor(args[0], fs, &f)
	if args[0] == "ui" {
		fs.StringVar(&f.addr, "addr", "127.0.0.1:8080", "address to serve on; anything but loopback needs --token")
		fs.StringVar(&f.token, "token", "", "token every request must carry (default $"+uiTokenEnv+", which ps does not show)")
		fs.BoolVar(&f.readOnly, "read-only", false, "show runs, refuse signal/cancel/retry")
	}
	if args[0] == "signals" {
		fs.BoolVar(&f.orphans, "orphans", false, "list the signals sent to run ids no run has")
		fs.IntVar(&f.limit, "limit", defaultLsLimit, "at most this many, oldest first (1 or more)")
	}
	if args[0] == "ls" || args[0] == "show" || args[0] == "stats" || args[0] == "schedules" || args[0] == "signals" {
		fs.BoolVar(&f.json, "json", false, "print JSON for scripts")
	}
	if args[0] == "worker" {
		fs.IntVar(&f.concurrency, "concurrency", durable.DefaultWorkerConcurrency, "runs advanced at once")
		fs.DurationVar(&f.tick, "tick", durable.DefaultWorkerTick, "how often an idle worker polls")
		fs.DurationVar(&f.stopTimeout, "stop-timeout", durable.DefaultStopTimeout, "how long runs in flight may go on after SIGTERM")
	}
	timeTravelFlags(args[0], fs, &f)
	if args[0] == "compact" {
		fs.StringVar(&f.olderThan, "older-than", "", "compact runs finished longer ago than this (720h, 30d)")
	}
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return exitNoBuild
	}
	if f.file != "" {
		op.args, op.names = 2, "ID NAME, the payload in --file"
	}
	if _, ok := bulkVerbs[args[0]]; ok {
		f.bulk.stdin, f.bulk.terminal = s.stdin, isTerminal(s.stdin)
		if op, err = bulkOp(args[0], op, &f.bulk, pos); err != nil {
			fmt.Fprintf(s.stderr, "sky durable %s: %v\n", args[0], err)
			return exitNoBuild
		}
	}
	if len(pos) != op.args {
		fmt.Fprintf(s.stderr, "sky durable %s: expected %d argument(s) (%s), got %d\n\n%s", args[0], op.args, op.names, len(pos), durableUsage)
		return exitNoBuild
	}
	if f.status != "" && !durable.Status(f.status).Valid() {
		fmt.Fprintf(s.stderr, "sky durable ls: unknown status %q; hint: one of running, waiting, done, failed, dead, cancelled, timed_out\n", f.status)
		return exitNoBuild
	}
	if err := checkLsLimit(args[0], f.limit); err != nil || args[0] == "signals" && f.limit <= 0 {
		if err == nil {
			err = fmt.Errorf("--limit %d lists nothing; hint: --limit 20 (the default is %d)", f.limit, defaultLsLimit)
		}
		fmt.Fprintf(s.stderr, "sky durable %s: %v\n", args[0], err)
		return exitNoBuild
	}
	if args[0] == "compact" {
		if _, err := parseRetention(f.olderThan); err != nil {
			fmt.Fprintf(s.stderr, "sky durable compact: %v\n", err)
			return exitNoBuild
		}
	}
	if args[0] == "ui" {
		if f.token == "" {
			f.token = os.Getenv(uiTokenEnv)
		} else {
			fmt.Fprintf(s.stderr, "note: --token is visible to every user of this machine (ps, /proc); prefer passing it in %s\n", uiTokenEnv)
		}
		if err := checkUIAddr(f.addr, f.token); err != nil {
			fmt.Fprintf(s.stderr, "sky durable ui: %v\n", err)
			return exitNoBuild
		}
	}
	if args[0] == "replay" && f.gate.from != "" {
		return replayOffline(ctx, &f, pos, s)
	}
	start := ""
	if args[0] == "replay" {
		start = pos[0]
	}
	timeout := durableStatementTimeout
	if args[0] == "worker" {
		timeout = 0 // a worker's statements are the engine's, bounded by its own leases
	}
	readOnly := readOnlyOps[args[0]] || args[0] == "ui" && f.readOnly
	d, err := openDurableDB(ctx, f.dsn, start, timeout, readOnly)
	if err != nil {
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	defer d.Close()
	e := durable.New(d, durable.Options{WorkerID: "sky-durable-cli"})
	setup := e.Setup
	if readOnly {
		setup = e.CheckSchema
	}
	if err := setup(ctx); err != nil {
		if errors.Is(err, durable.ErrNoSchema) {
			switch args[0] {
			case "ls":
				fmt.Fprintln(s.stdout, "no runs (the database has no durable tables yet)")
				return exitOK
			case "export", "replay": // nothing in flight: nothing to export or check
				fmt.Fprintf(s.stderr, "note: the database has no durable tables yet: no runs to %s\n", args[0])
				return exitOK
			}
		}
		fmt.Fprintf(s.stderr, "sky durable: %v\n", err)
		return exitFailure
	}
	if err := op.run(withCLIActor(ctx), e, &f, pos, s.stdout); err != nil {
		fmt.Fprintf(s.stderr, "sky durable %s: %s\n", args[0], view.SafeText(err.Error()))
		if te := task.As(err); te.Kind == task.InvalidInput && (args[0] == "signal" || args[0] == "compact" || args[0] == "ui" || args[0] == "schedule" || f.bulk.filtered()) {
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

// durableStatementTimeout bounds each PostgreSQL statement of `sky durable`
// but worker (ls, show, stats, the dashboard's queries...), unless the URL
// sets statement_timeout.
const durableStatementTimeout = 30 * time.Second

// readOnlyOps are the subcommands that only read: they open a SQLite file
// read-only and never create or migrate the tables (Engine.CheckSchema
// instead of Setup), so inspecting a database changes nothing in it. `ui
// --read-only` is one too.
var readOnlyOps = map[string]bool{"ls": true, "show": true, "stats": true, "signals": true, "schedules": true, "diff": true,
	"export": true, "replay": true}

// openDurableDB opens --db, or what Db.connect would open in the project
// of start (the program of `replay`, else the working directory: the
// nearest sky.toml above it), with statementTimeout on PostgreSQL and, when readOnly, a SQLite file
// read-only. A SQLite file that does not exist is an error rather than a
// new empty database.
func openDurableDB(ctx context.Context, dsn, start string, statementTimeout time.Duration, readOnly bool) (*db.DB, error) {
	var cfg skydb.Config
	switch {
	case strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://"):
		pooler, err := db.ParsePooler(os.Getenv(db.EnvPooler))
		if err != nil {
			return nil, err
		}
		cfg = skydb.Config{Driver: "postgres", DSN: dsn, Pooler: pooler}
	case dsn != "":
		cfg = skydb.Config{Driver: "sqlite", DSN: dsn}
	default:
		proj, err := project.Find(start)
		if err != nil {
			return nil, err
		}
		env := skydb.DefaultEnv()
		env.Dir = proj.Root
		if cfg, err = skydb.Resolve(env); err != nil {
			return nil, err
		}
	}
	if cfg.Driver == "sqlite" {
		if _, err := os.Stat(cfg.DSN); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("the SQLite database %s does not exist; hint: run the program first, or pass --db", cfg.DSN)
		}
	}
	return db.OpenWith(ctx, cfg.Driver, cfg.DSN, db.Options{Pooler: cfg.Pooler, StatementTimeout: statementTimeout, ReadOnly: readOnly})
}

func durableSignal(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	id, name := a[0], a[1]
	var payload string
	if f.file != "" {
		b, err := os.ReadFile(f.file)
		if err != nil {
			return task.Errorf(task.InvalidInput, "cannot read the payload: %v; hint: --file names a file holding the JSON payload", err)
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

func durableCompact(ctx context.Context, e *durable.Engine, f *durableFlags, _ []string, out io.Writer) error {
	retention, err := parseRetention(f.olderThan)
	if err != nil {
		return err
	}
	res, err := e.CompactOlderThan(ctx, retention, durable.CompactOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "compacted %d runs finished more than %s ago: deleted %d journal and signal rows in %d %s (longest %s)\n",
		res.Runs, f.olderThan, res.Rows, res.Batches, map[bool]string{true: "batch", false: "batches"}[res.Batches == 1],
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

func durableShow(ctx context.Context, e *durable.Engine, f *durableFlags, a []string, out io.Writer) error {
	r, journal, err := e.Describe(ctx, a[0])
	if err != nil {
		return err
	}
	signals, err := e.Signals(ctx, a[0])
	if err != nil {
		return err
	}
	children, err := e.ListRuns(ctx, durable.ListFilter{Parent: r.ID, Limit: view.ShowChildren})
	if err != nil {
		return err
	}
	held, err := e.HeldBy(ctx, append([]durable.Run{r}, children...))
	if err != nil {
		return err
	}
	history, err := e.History(ctx, r.ID)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, map[string]any{"run": runJSON(r, held), "journal": journalJSON(journal), "signals": signalsJSON(signals, r.Status), "children": runsJSON(children, held),
			"history": historyJSON(history)})
	}
	printRun(out, r, journal, signals, held, history, time.Now())
	printHistory(out, history)
	printSignals(out, signals, r.Status)
	printChildren(out, r.ID, children, held, time.Now())
	return nil
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
