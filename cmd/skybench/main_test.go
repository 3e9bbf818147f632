package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"skydurable/cmd/skybench/internal/loadtest"
	"skydurable/runtime/db/dbtest"
)

// TestMain fails loudly, never skips, when no PostgreSQL answers (dbtest
// starts a private server from the installed binaries when it can).
func TestMain(m *testing.M) { dbtest.Main(m) }

// TestLoadCountsAgree runs a tiny load through the command (a few runs of
// a 3-step workflow, one poller, no pgbench) on PostgreSQL and SQLite and
// checks the figures that do not depend on timing: every run it started
// ended done, and, on PostgreSQL, the statements the wire proxy saw the
// client send in the counting pass are the statements the engine announced
// to its OnStatement hook.
func TestLoadCountsAgree(t *testing.T) {
	// A database of dbtest's server serves as the command's server URL:
	// the command creates (and drops) its own databases next to it.
	server := dbtest.URL(t, "skybench")
	var out, errOut bytes.Buffer
	rep, err := run(context.Background(), []string{"load",
		"-database", server, "-drivers", "postgres,sqlite",
		"-steps", "3", "-pollers", "1", "-rounds", "0", "-modes", "poll,pollwith:4",
		"-runs", "5", "-warm", "3", "-counted", "6", "-parts", "throughput,replay"}, &out, &errOut)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("skybench load: %v\nstderr:\n%s", err, errOut.String())
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr:\n%s", errOut.String())
	}

	type config struct {
		driver  string
		maxRuns int
	}
	want := map[config]bool{{"postgres", 1}: true, {"postgres", 4}: true, {"sqlite", 1}: true}
	for _, tp := range rep.Throughput {
		c := config{tp.Driver, tp.MaxRuns}
		if !want[c] {
			t.Errorf("unexpected configuration %+v", tp)
			continue
		}
		delete(want, c)
		if tp.Steps != 3 || tp.Pollers != 1 {
			t.Errorf("%+v: measured %d steps, %d pollers; want 3, 1", c, tp.Steps, tp.Pollers)
		}
		// 3 warm-up runs per poller, then on PostgreSQL 3/4 = 0 more after
		// ANALYZE, 5 timed, 6 counted.
		if tp.Started != 3+5+6 || tp.Done != tp.Started {
			t.Errorf("%+v: %d runs started, %d done; want 14 started, all done", c, tp.Started, tp.Done)
		}
		if tp.Counted.Statements == 0 {
			t.Errorf("%+v: the engine announced no statement in the counting pass", c)
		}
		if tp.Driver == "postgres" {
			if tp.Counted.Wire.Statements != tp.Counted.Statements {
				t.Errorf("%+v: the wire proxy saw %d statements, the engine's OnStatement hook %d",
					c, tp.Counted.Wire.Statements, tp.Counted.Statements)
			}
			// Each claim, journal write and completion outside a
			// transaction carries its plan setting (db.GenericPlan).
			if tp.Counted.Wire.PlanSettings == 0 || tp.Counted.Wire.PlanSettings > tp.Counted.Statements {
				t.Errorf("%+v: %d plan settings for %d statements; want some, at most one each",
					c, tp.Counted.Wire.PlanSettings, tp.Counted.Statements)
			}
			if tp.Counted.Wire.WriteCommits == 0 || tp.Counted.Wire.WriteCommits > tp.Counted.Wire.Transactions ||
				tp.Counted.Wire.Transactions > tp.Counted.Wire.RoundTrips {
				t.Errorf("%+v: want 0 < write commits <= transactions <= round trips, got %+v", c, tp.Counted.Wire)
			}
		} else if tp.Counted.Wire != (loadtest.WireCounts{}) {
			t.Errorf("%+v: SQLite has no wire, got %+v", c, tp.Counted.Wire)
		}
	}
	for c := range want {
		t.Errorf("configuration %+v not measured", c)
	}
	for _, driver := range []string{"postgres", "sqlite"} {
		if _, ok := rep.Replayed[driver]; !ok {
			t.Errorf("replayed step on %s not measured", driver)
		}
	}
	for _, line := range []string{"postgres 3-step 1 poller(s):", "postgres 3-step 1 poller(s) (PollWith MaxRuns 4):",
		"sqlite   3-step 1 poller(s):", "postgres per replayed step:", "targets:", "load run finished"} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q", line)
		}
	}
}

// TestUsage: a missing or unknown subcommand and a bad flag are usage
// errors, before any database is touched.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"lode"}, {"load", "-modes", "sometimes"}, {"load", "-drivers", "mysql"}, {"load", "-pollers", "0"}} {
		var out, errOut bytes.Buffer
		rep, err := run(context.Background(), args, &out, &errOut)
		if err == nil || rep != nil {
			t.Errorf("run(%q) = %v, %v; want a usage error", args, rep, err)
		}
		if out.Len() > 0 {
			t.Errorf("run(%q) printed figures:\n%s", args, out.String())
		}
	}
}

// TestTelemetryPartCounts runs the telemetry part tiny on both stores and
// checks its counts: every round ran, and the "on" rounds exported exactly a
// start, an attempt and a span per step for every run (the part itself
// fails the run otherwise).
func TestTelemetryPartCounts(t *testing.T) {
	server := dbtest.URL(t, "skybench_otel")
	var out, errOut bytes.Buffer
	rep, err := run(context.Background(), []string{"load",
		"-database", server, "-drivers", "postgres,sqlite", "-steps", "2", "-pollers", "2", "-rounds", "0",
		"-runs", "4", "-warm", "2", "-counted", "3", "-parts", "telemetry"}, &out, &errOut)
	t.Logf("output:\n%s", out.String())
	if err != nil {
		t.Fatalf("skybench load: %v\nstderr:\n%s", err, errOut.String())
	}
	if len(rep.Telemetry) != 2 {
		t.Fatalf("telemetry measured on %d stores, want 2: %+v", len(rep.Telemetry), rep.Telemetry)
	}
	for _, tc := range rep.Telemetry {
		// per round: 2 warm-up runs per poller (+1 after ANALYZE on
		// PostgreSQL), 4 timed, 3 counted; 2 + 2 spans per run; 3 rounds.
		runs := int64(2*2 + 4 + 3)
		if tc.Driver == "postgres" {
			runs++
		}
		if len(tc.Off) != 3 || len(tc.On) != 3 || tc.Spans != tc.SpansWant || tc.Spans != 3*runs*4 {
			t.Errorf("%s: %d off and %d on rounds, %d spans (want %d, computed %d)", tc.Driver, len(tc.Off), len(tc.On), tc.Spans, 3*runs*4, tc.SpansWant)
		}
		// The claim reads the stored trace context: no statement of its
		// own (on SQLite the count is exact; PostgreSQL's group commit
		// batches by timing).
		if tc.Driver == "sqlite" && tc.OnCosts.Statements != tc.OffCosts.Statements {
			t.Errorf("sqlite: tracing on costs %.2f statements per workflow, off %.2f; want the same",
				tc.OnCosts.Statements, tc.OffCosts.Statements)
		}
	}
}
