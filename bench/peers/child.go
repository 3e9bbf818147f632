package main

// A child process runs one engine on one workload and prints its result as
// one JSON line: each engine gets a process of its own, so its CPU is its
// own.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"
)

// Workloads.
const (
	allThree = "all3"   // 3 steps, all at once: N started, then drained
	allOne   = "all1"   // 1 step, all at once
	oneByOne = "serial" // 3 steps, one at a time: start → result, then the next
)

// workloadSteps is the number of steps of a workload's workflow.
func workloadSteps(w string) int {
	if w == allOne {
		return 1
	}
	return 3
}

// spec is what a child runs, passed as JSON in its -child flag.
type spec struct {
	Engine   string // engineDBOS or engineSky
	MaxRuns  int    // sky: the pollers' PollWith MaxRuns (1: Poll)
	Driver   string // "postgres" or "sqlite"
	Workload string
	// DSN is the PostgreSQL URL of the child's own database, or the
	// SQLite file.
	DSN string
	// Database, AdminURL and Postmaster (PostgreSQL only) are where the
	// meter reads: the database's name, a URL of another database of the
	// server, the server's postmaster pid.
	Database   string
	AdminURL   string
	Postmaster int
	// Workflows is the number of timed workflows (one-at-a-time: Serial);
	// Pollers the concurrent pollers (DBOS: the queue's worker
	// concurrency); Warm the warm-up workflows per poller.
	Workflows, Pollers, Warm, Serial int
	// DBOSPoll is the DBOS queue's base polling interval.
	DBOSPoll time.Duration
	// Statements resets pg_stat_statements when the timed phase begins.
	Statements bool
	// Perf, when set, is the file `perf record` writes a profile of the
	// whole machine to during the timed phase (call graphs, 999 Hz).
	Perf string
	// SkySQL is run after this engine's set-up (PostgreSQL only).
	SkySQL string
}

const (
	engineDBOS = "dbos"
	engineSky  = "sky"
)

// result is what a child measured in its timed phase.
type result struct {
	Workflows int
	Elapsed   time.Duration
	// Commits is the database's xact_commit delta (-1 on SQLite); Probes
	// the transactions the harness itself committed in the phase to see
	// that DBOS had finished (already subtracted).
	Commits int64
	Probes  int
	// ProcCPU is the child's CPU, ServerCPU the server's (-1 on SQLite).
	ProcCPU, ServerCPU time.Duration
	// WAL is the bytes of WAL the server wrote in the phase (-1 on SQLite),
	// from position WALFrom.
	WAL, WALFrom int64
	P50, P99     time.Duration // one at a time only
}

// runChild runs the spec and prints the result; it exits 1 on failure.
func runChild(arg string) {
	var sp spec
	if err := json.Unmarshal([]byte(arg), &sp); err != nil {
		fmt.Fprintf(os.Stderr, "peers child: bad spec %q: %v\n", arg, err)
		os.Exit(2)
	}
	ctx := context.Background()
	var (
		res result
		err error
	)
	switch sp.Engine {
	case engineDBOS:
		res, err = runDBOS(ctx, sp)
	case engineSky:
		res, err = runSky(ctx, sp)
	default:
		err = fmt.Errorf("unknown engine %q", sp.Engine)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "peers child (%s, %s, %s): %v\n", sp.Engine, sp.Driver, sp.Workload, err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		os.Exit(1)
	}
}

// measured turns two readings into a result.
func measured(n int, a, b reading, driver string) result {
	r := result{Workflows: n, Elapsed: b.at.Sub(a.at), ProcCPU: b.proc - a.proc, Commits: -1, ServerCPU: -1, WAL: -1}
	if driver == "postgres" {
		r.Commits = b.commits - a.commits
		r.ServerCPU = b.server - a.server
		r.WAL, r.WALFrom = b.wal-a.wal, a.wal
	}
	return r
}

// inParallel runs f(0..n-1) on g goroutines and returns the first error.
func inParallel(n, g int, f func(i int) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, g)
	for k := range g {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += g {
				if err := f(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// quantile is the q-quantile (0..1) of ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

// serially runs one(i) for i in 0..n-1 and returns the result with the
// latency quantiles of its calls, measured by m.
func serially(ctx context.Context, m *meter, driver string, n int, one func(i int) error, stop func() error) (result, error) {
	lat := make([]time.Duration, 0, n)
	a, err := m.begin(ctx)
	if err != nil {
		return result{}, err
	}
	for i := range n {
		t0 := time.Now()
		if err := one(i); err != nil {
			return result{}, err
		}
		lat = append(lat, time.Since(t0))
	}
	b, err := m.end(ctx, stop)
	if err != nil {
		return result{}, err
	}
	r := measured(n, a, b, driver)
	r.P50, r.P99 = quantile(lat, 0.50), quantile(lat, 0.99)
	return r, nil
}
