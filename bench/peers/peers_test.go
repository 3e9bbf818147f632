package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the child process run starts
// (os.Executable is the test binary here).
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "-child" {
		runChild(os.Args[2])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTinyRun runs every cell once with a handful of workflows, on a
// private cluster and SQLite, and checks what it counts, never a timing:
// every child ran its workflows, PostgreSQL runs counted commits, read
// their top statements and had their plans logged, SQLite runs say they
// have no server.
func TestTinyRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cfg := config{
		Rounds: 1, Workflows: 20, Pollers: 2, Warm: 2, Serial: 5,
		MaxRuns: []int{1, 10}, Work: true, Drivers: []string{"postgres", "sqlite"}, Workloads: []string{allThree, allOne, oneByOne},
		DBOSPoll: 10 * time.Millisecond, Statements: 3, ExplainOver: time.Microsecond, WALRecords: true, Out: &out,
	}
	r, err := runWith(ctx, cfg)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	// auto_explain logged plans, each line naming its database.
	if r.serverLog == "" {
		t.Fatal("no server log kept with -explain-over")
	}
	t.Cleanup(func() { os.Remove(r.serverLog) })
	log, err := os.ReadFile(r.serverLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"peers_r1_sky_all3_1:LOG:  duration:", "peers_r1_dbos_serial_0:LOG:  duration:", "plan:"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the server log %s does not hold %q", r.serverLog, want)
		}
	}
	// Per store: DBOS, 2 variants and the worker on 2 workloads, DBOS and
	// 1 on one.
	if got, want := len(r.runs), 2*(4+4+2); got != want {
		t.Fatalf("%d measurements, want %d", got, want)
	}
	for _, m := range r.runs {
		res := m.Result
		want := cfg.Workflows
		if m.Workload == oneByOne {
			want = cfg.Serial
			if res.P50 <= 0 || res.P99 < res.P50 {
				t.Errorf("%s %s %s: p50 %s p99 %s", m.Driver, m.Workload, m.Variant.Label, res.P50, res.P99)
			}
		}
		if res.Workflows != want || res.Elapsed <= 0 || res.ProcCPU <= 0 {
			t.Errorf("%s %s %s: %d workflows in %s, CPU %s; want %d", m.Driver, m.Workload, m.Variant.Label, res.Workflows, res.Elapsed, res.ProcCPU, want)
		}
		switch m.Driver {
		case "postgres":
			// At least one commit per workflow and poller (a completion's;
			// group commit writes those of concurrent pollers in one), and
			// a commit record's worth of WAL per workflow.
			if res.Commits < int64(want/cfg.Pollers) || res.ServerCPU < 0 || len(m.Top) == 0 || res.WAL < 30*int64(want) ||
				!strings.Contains(m.WALRecords, "Transaction/COMMIT") {
				t.Errorf("postgres %s %s: %d commits, server CPU %s, %d top statements, %d bytes of WAL", m.Workload, m.Variant.Label, res.Commits, res.ServerCPU, len(m.Top), res.WAL)
			}
		case "sqlite":
			if res.Commits != -1 || res.ServerCPU != -1 || len(m.Top) != 0 || res.WAL != -1 || m.WALRecords != "" {
				t.Errorf("sqlite %s %s: commits %d, server CPU %s, %d top statements, WAL %d; want none measured", m.Workload, m.Variant.Label, res.Commits, res.ServerCPU, len(m.Top), res.WAL)
			}
		}
	}
	for _, want := range []string{"ratio (wf/s ours/DBOS)", "ratio (p50 latency DBOS/ours)", "medians over 1 rounds", "fsync=on", "WAL/wf", "\ntargets: ", "rounds within 15%"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output does not say %q", want)
		}
	}
}

func TestConfigCheckNamesTheBadValue(t *testing.T) {
	ok := config{Rounds: 3, Workflows: 10, Pollers: 1, Warm: 1, Serial: 1, MaxRuns: []int{1},
		Drivers: []string{"postgres"}, Workloads: []string{allThree}, DBOSPoll: time.Millisecond}
	if err := ok.check(); err != nil {
		t.Fatalf("check of a good config: %v", err)
	}
	for _, tc := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.Drivers = []string{"mysql"} }, `"mysql"`},
		{func(c *config) { c.Workloads = []string{"all5"} }, `"all5"`},
		{func(c *config) { c.Rounds = 0 }, "got 0, 10"},
		{func(c *config) { c.MaxRuns = nil }, "-maxruns"},
		{func(c *config) { c.DBOSPoll = 0 }, "-dbos-poll"},
	} {
		c := ok
		tc.change(&c)
		if err := c.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("check = %v, want an error naming %s", err, tc.want)
		}
	}
}

func TestMedianAndSpread(t *testing.T) {
	for _, tc := range []struct {
		xs           []float64
		median       float64
		spread, rang string
	}{
		{[]float64{3, 1, 2}, 2, "50%", "2.0 (1.0-3.0)"},
		{[]float64{4, 1, 2, 3}, 2.5, "60%", "2.5 (1.0-4.0)"},
		{[]float64{100, 100, 115}, 100, "15%", "100.0 (100.0-115.0)"},
	} {
		if got := median(tc.xs); got != tc.median {
			t.Errorf("median(%v) = %v, want %v", tc.xs, got, tc.median)
		}
		if got := spread(tc.xs); got != tc.spread {
			t.Errorf("spread(%v) = %s, want %s", tc.xs, got, tc.spread)
		}
		if got := medianRange(tc.xs, "%.1f"); got != tc.rang {
			t.Errorf("medianRange(%v) = %s, want %s", tc.xs, got, tc.rang)
		}
	}
}

// TestVerdictNamesTheWorstRound: the targets' lines say met or missed, with
// the lowest round's ratio and number, on the figures of real runs.
func TestVerdictNamesTheWorstRound(t *testing.T) {
	for _, tc := range []struct {
		workload      string
		ratios, rates []float64
		want          string
	}{
		{allThree, []float64{3.13, 3.37, 3.28}, []float64{1893.9, 1795.7, 1865.6},
			">= 3x in every round: met (lowest 3.13x, round 1); rounds within 15%: met (4%)"},
		{allThree, []float64{3.68, 3.51, 2.81}, []float64{2223.9, 1870.5, 1593.9},
			">= 3x in every round: missed (lowest 2.81x, round 3); rounds within 15%: missed (19%)"},
		{oneByOne, []float64{1.81, 2.41, 2.33}, []float64{2081.9, 2796.0, 2519.4},
			">= 2x on p50: met (median 2.33x; lowest 1.81x, round 1); rounds within 15%: missed (17%)"},
		{oneByOne, []float64{1.46, 2.32, 1.57}, []float64{100, 100, 100},
			">= 2x on p50: missed (median 1.57x; lowest 1.46x, round 1); rounds within 15%: met (0%)"},
		{allOne, []float64{5.71, 5.18, 5.98}, []float64{3426.7, 3069.5, 3524.5}, "rounds within 15%: met (10%)"},
	} {
		if got := verdict(tc.workload, tc.ratios, tc.rates); got != tc.want {
			t.Errorf("verdict(%s, %v, %v)\n = %s\nwant %s", tc.workload, tc.ratios, tc.rates, got, tc.want)
		}
	}
}

// TestSkySQLRunsAfterSetup: -sky-sql runs on this engine's database after
// its set-up, so a statement that refers to the schema reaches it, and one
// that fails fails the run naming the flag.
func TestSkySQLRunsAfterSetup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg := config{
		Rounds: 1, Workflows: 5, Pollers: 1, Warm: 1, Serial: 1, MaxRuns: []int{1},
		Drivers: []string{"postgres"}, Workloads: []string{allThree}, DBOSPoll: 10 * time.Millisecond, Out: &bytes.Buffer{},
		SkySQL: "DROP INDEX _sky_durable_runs_search",
	}
	if _, err := runWith(ctx, cfg); err != nil {
		t.Fatalf("a run dropping one of the engine's indexes: %v", err)
	}
	cfg.SkySQL = "DROP INDEX no_such_index"
	if _, err := runWith(ctx, cfg); err == nil || !strings.Contains(err.Error(), "-sky-sql") || !strings.Contains(err.Error(), "no_such_index") {
		t.Errorf("a run whose -sky-sql fails = %v, want an error naming -sky-sql and the index", err)
	}
}
