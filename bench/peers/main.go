// Command peers (make bench-peers) measures DBOS Transact Go and this
// engine side by side on one private PostgreSQL 15 cluster with the default
// durability (fsync and synchronous_commit on), and on SQLite: 3 steps all
// at once, 1 step all at once, and one at a time, alternating the engines
// (A B A B) for several rounds, each engine in a child process of its own
// so that its CPU is its own. It prints, never asserts: wf/s, commits per
// workflow, CPU per workflow of the process and of the server, per round,
// the per-round ratio, then medians with their ranges (docs/benchmarks.md).
//
// It is a module of its own (bench/peers/go.mod) so that the engine's
// module does not depend on DBOS.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is what a run measures.
type config struct {
	Rounds    int
	Workflows int // timed workflows of an all-at-once cell
	Pollers   int
	Warm      int   // warm-up workflows per poller
	Serial    int   // timed workflows of the one-at-a-time cell
	MaxRuns   []int // this engine's pollers: 1 is Poll, more PollWith
	// Work adds this engine's worker itself (Engine.Work, as sky durable
	// worker runs it, -pollers its concurrency) to the all-at-once cells.
	Work      bool
	Drivers   []string
	Workloads []string
	DBOSPoll  time.Duration
	// Statements, when > 0, loads pg_stat_statements into the cluster and
	// prints that many statements by total time for each PostgreSQL run's
	// timed phase.
	Statements int
	// ExplainOver, when > 0, loads auto_explain into the cluster, which
	// logs the plan of every statement slower than it; the server's log is
	// kept (its path printed at the end).
	ExplainOver time.Duration
	// WALRecords prints, for each PostgreSQL run, pg_waldump's statistics
	// of the WAL records its timed phase wrote, by kind.
	WALRecords bool
	// Perf, when set, is a directory: each child's timed phase is
	// profiled there with perf record (one file per run, named after it).
	Perf string
	// SkySQL, when set, is run on this engine's PostgreSQL database after
	// its set-up: an experiment on the schema (say, DROP INDEX) measured
	// side by side with DBOS like any run.
	SkySQL string
	Out    io.Writer
}

func main() {
	var (
		cfg                          = config{Out: os.Stdout}
		child, maxRuns, drivers, wls string
	)
	flag.StringVar(&child, "child", "", "internal: run one engine on one workload (JSON spec) and print its result")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "rounds; each runs every cell with each engine, one after another")
	flag.IntVar(&cfg.Workflows, "workflows", 2000, "workflows started, then drained, in an all-at-once cell")
	flag.IntVar(&cfg.Pollers, "pollers", 8, "this engine's concurrent pollers, and DBOS's queue worker concurrency")
	flag.IntVar(&cfg.Warm, "warm", 200, "warm-up workflows per poller before an all-at-once cell")
	flag.IntVar(&cfg.Serial, "serial", 300, "workflows run one at a time in the one-at-a-time cell")
	flag.StringVar(&maxRuns, "maxruns", "1,100", "this engine's pollers: a list of PollWith MaxRuns (1 is Poll), one engine variant each")
	flag.BoolVar(&cfg.Work, "work", false, "also measure the worker itself (Engine.Work with -pollers pollers, as sky durable worker runs) in the all-at-once cells")
	flag.StringVar(&drivers, "drivers", "postgres,sqlite", "stores: postgres, sqlite")
	flag.StringVar(&wls, "workloads", "all3,all1,serial", "workloads: all3 (3 steps all at once), all1 (1 step all at once), serial (3 steps one at a time)")
	flag.DurationVar(&cfg.DBOSPoll, "dbos-poll", 10*time.Millisecond, "DBOS queue base polling interval (DBOS's default is 1s)")
	flag.IntVar(&cfg.Statements, "statements", 0, "load pg_stat_statements and print this many top statements (by total time) of each PostgreSQL run")
	flag.DurationVar(&cfg.ExplainOver, "explain-over", 0, "load auto_explain: the server logs the plan of every statement slower than this, and its log is kept")
	flag.BoolVar(&cfg.WALRecords, "wal-records", false, "print pg_waldump's statistics of the WAL records each PostgreSQL run's timed phase wrote, by kind")
	flag.StringVar(&cfg.SkySQL, "sky-sql", "", "an experiment: SQL run on this engine's PostgreSQL database after its set-up (say, DROP INDEX _sky_durable_runs_search)")
	flag.StringVar(&cfg.Perf, "perf", "", "profile each run's timed phase with perf record (the whole machine, call graphs) into this directory, one file per run")
	flag.Parse()
	if child != "" {
		runChild(child)
		return
	}
	var err error
	if cfg.MaxRuns, err = intList(maxRuns); err != nil {
		fail(fmt.Errorf("-maxruns: %w", err))
	}
	cfg.Drivers, cfg.Workloads = list(drivers), list(wls)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := runWith(ctx, cfg); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "peers:", err)
	os.Exit(1)
}

func list(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func intList(s string) ([]int, error) {
	var out []int
	for _, f := range list(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive whole number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// check rejects a config that would measure nothing or divide by zero.
func (cfg config) check() error {
	for _, d := range cfg.Drivers {
		if d != "postgres" && d != "sqlite" {
			return fmt.Errorf("unknown store %q in -drivers (postgres, sqlite)", d)
		}
	}
	for _, w := range cfg.Workloads {
		if w != allThree && w != allOne && w != oneByOne {
			return fmt.Errorf("unknown workload %q in -workloads (%s, %s, %s)", w, allThree, allOne, oneByOne)
		}
	}
	switch {
	case len(cfg.Drivers) == 0 || len(cfg.Workloads) == 0:
		return fmt.Errorf("nothing to measure: -drivers and -workloads must name at least one each")
	case len(cfg.MaxRuns) == 0:
		return fmt.Errorf("-maxruns must name at least one MaxRuns (1 is Poll)")
	case slices.Min(cfg.MaxRuns) < 1:
		return fmt.Errorf("-maxruns: a MaxRuns is at least 1 (1 is Poll), not %d; -work measures the worker", slices.Min(cfg.MaxRuns))
	case cfg.Rounds < 1 || cfg.Workflows < 1 || cfg.Pollers < 1 || cfg.Warm < 1 || cfg.Serial < 1:
		return fmt.Errorf("-rounds, -workflows, -pollers, -warm and -serial must be at least 1 (got %d, %d, %d, %d, %d)",
			cfg.Rounds, cfg.Workflows, cfg.Pollers, cfg.Warm, cfg.Serial)
	case cfg.DBOSPoll <= 0:
		return fmt.Errorf("-dbos-poll must be positive, not %s", cfg.DBOSPoll)
	case cfg.Statements < 0 || cfg.ExplainOver < 0:
		return fmt.Errorf("-statements and -explain-over cannot be negative (got %d, %s)", cfg.Statements, cfg.ExplainOver)
	}
	if cfg.Perf != "" {
		if _, err := exec.LookPath("perf"); err != nil {
			return fmt.Errorf("-perf needs perf on PATH (Debian's linux-perf): %w", err)
		}
		if err := os.MkdirAll(cfg.Perf, 0o755); err != nil {
			return fmt.Errorf("-perf %s: %w", cfg.Perf, err)
		}
	}
	return nil
}
