package durable

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// costCases are the engine's costs in statements, round trips and commits
// (db.Counts: a commit is a COMMIT or a statement that may write outside a
// transaction; a claim that finds nothing changes no row and so flushes
// nothing; the first poll of a second is a read, store.Probe), on each store: the table of docs/benchmarks.md ("Costs,
// counted"). A cost that goes up fails TestCostsAreCounted; one that goes
// down does too, so the table and the docs follow the improvement. A
// fresh step is the difference of the 3-step and 1-step rows over two; a
// replayed step costs nothing (the resume row: the claim, which reads the
// journal, and the completion).
var costCases = []string{
	"start a run",
	"empty poll, first of its second",
	"empty poll, first of its second, finished runs not yet searchable",
	"empty poll",
	"1-step workflow, one poll",
	"3-step workflow, one poll",
	"3-step workflow, run now (RunNow)",
	"resume after a sleep (3 steps replayed)",
	"signal a waiting run",
	"fan-out of 100 children, the parent's poll",
	"one second of an idle worker",
	"30 seconds of an idle worker",
}

var wantCosts = map[string]map[string]db.Counts{
	"postgres": {
		"start a run":                     {Statements: 1, RoundTrips: 1, Commits: 1},
		"empty poll, first of its second": {Statements: 1, RoundTrips: 1, Commits: 0},
		// No backlog: the index takes a run as it finishes.
		"empty poll, first of its second, finished runs not yet searchable": {Statements: 1, RoundTrips: 1, Commits: 0},
		"empty poll": {Statements: 1, RoundTrips: 1, Commits: 1},
		// The claim reads the journal with the run; the last step is
		// journalled by the completion's statement.
		"1-step workflow, one poll": {Statements: 2, RoundTrips: 2, Commits: 2},
		"3-step workflow, one poll": {Statements: 4, RoundTrips: 4, Commits: 4},
		// The start and the claim are one insert (pgInsertClaimed, its
		// commit synchronous); then exactly what a poll sends after its
		// claim: steps a and b, and c journalled by the completion's
		// statement. Start and a poll cost 5 / 5 / 5: RunNow spares the
		// claim statement (and its asynchronous commit).
		"3-step workflow, run now (RunNow)":          {Statements: 4, RoundTrips: 4, Commits: 4},
		"resume after a sleep (3 steps replayed)":    {Statements: 2, RoundTrips: 2, Commits: 2},
		"signal a waiting run":                       {Statements: 3, RoundTrips: 5, Commits: 1},
		"fan-out of 100 children, the parent's poll": {Statements: 6, RoundTrips: 10, Commits: 3},
		// The probe, once per quietMax (30s).
		"one second of an idle worker": {Statements: 0, RoundTrips: 0, Commits: 0},
		"30 seconds of an idle worker": {Statements: 1, RoundTrips: 1, Commits: 0},
	},
	"sqlite": {
		"start a run":                     {Statements: 1, RoundTrips: 1, Commits: 1},
		"empty poll, first of its second": {Statements: 1, RoundTrips: 1, Commits: 0},
		// The probe, then IndexSearch: BEGIN, the highest document number,
		// the documents, the FTS5 rows, the backlog's rows deleted, COMMIT.
		"empty poll, first of its second, finished runs not yet searchable": {Statements: 5, RoundTrips: 7, Commits: 1},
		"empty poll": {Statements: 1, RoundTrips: 1, Commits: 1},
		// The last step and the completion share a transaction.
		"1-step workflow, one poll": {Statements: 3, RoundTrips: 5, Commits: 2},
		"3-step workflow, one poll": {Statements: 5, RoundTrips: 7, Commits: 4},
		// The insert-claim, then a poll's after its claim: steps a and b,
		// and c with the completion in one transaction (BEGIN, 2
		// statements, COMMIT). Start and a poll cost 6 / 8 / 5.
		"3-step workflow, run now (RunNow)":          {Statements: 5, RoundTrips: 7, Commits: 4},
		"resume after a sleep (3 steps replayed)":    {Statements: 2, RoundTrips: 2, Commits: 2},
		"signal a waiting run":                       {Statements: 2, RoundTrips: 4, Commits: 1},
		"fan-out of 100 children, the parent's poll": {Statements: 4, RoundTrips: 6, Commits: 3},
		// No hints across processes: the probe, every second.
		"one second of an idle worker": {Statements: 1, RoundTrips: 1, Commits: 0},
		"30 seconds of an idle worker": {Statements: 30, RoundTrips: 30, Commits: 0},
	},
}

// TestCostsAreCounted measures each cost of costCases exactly, on both
// stores, with the pool's observer (DB.Observe).
func TestCostsAreCounted(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var counter db.Counter
		stop := d.Observe(counter.Add)
		defer stop()
		got := map[string]db.Counts{}
		measure := func(name string, f func()) {
			t.Helper()
			counter.Take()
			f()
			got[name] = counter.Take()
		}
		step := func(c *Ctx, id string) task.Task[string] { return Step(c, str, id, task.Succeed(id)) }
		one := Register("one", str, str, func(c *Ctx, in string) task.Task[string] { return step(c, "a") })
		three := Register("three", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(step(c, "a"), func(string) task.Task[string] {
				return task.AndThen(step(c, "b"), func(string) task.Task[string] { return step(c, "c") })
			})
		})
		sleeper := Register("sleeper", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(step(c, "a"), func(string) task.Task[string] {
				return task.AndThen(step(c, "b"), func(string) task.Task[string] {
					return task.AndThen(step(c, "c"), func(string) task.Task[string] {
						return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] { return task.Succeed(in) })
					})
				})
			})
		})
		waiter := Register("waiter", str, str, func(c *Ctx, in string) task.Task[string] { return AwaitSignal(c, str, "go") })
		ship := shipWorkflow(newCounter())
		fan := fanOut(ship)
		defs := []Workflow{one.Erase(), three.Erase(), sleeper.Erase(), waiter.Erase(), fan.Erase()}
		pollOnce := func() { h.poll(h.e, defs...) }

		h.poll(h.e, defs...) // the engine's first poll: sweeps and schedule look-up due
		measure("start a run", func() { h.start(one, "one-1", "x") })
		measure("1-step workflow, one poll", pollOnce)
		h.wantStatus("one-1", StatusDone)
		h.start(three, "three-1", "x")
		measure("3-step workflow, one poll", pollOnce)
		h.wantStatus("three-1", StatusDone)
		measure("3-step workflow, run now (RunNow)", func() {
			if out, err := RunNow(h.ctx, h.e, three, "three-2", "x"); err != nil || out == nil {
				t.Fatalf("RunNow = %v, %v; want the output", out, err)
			}
		})
		measure("empty poll", pollOnce)
		// The three runs finished so far wait in SQLite's search backlog:
		// the probe finds it, and one transaction indexes them.
		h.clock.Advance(time.Second)
		measure("empty poll, first of its second, finished runs not yet searchable", pollOnce)
		h.clock.Advance(time.Second)
		measure("empty poll, first of its second", pollOnce)

		h.start(sleeper, "sleeper-1", "x")
		pollOnce()
		h.wantStatus("sleeper-1", StatusWaiting)
		h.start(waiter, "waiter-1", "x")
		pollOnce()
		h.wantStatus("waiter-1", StatusWaiting)
		pollOnce() // in the same second: no sweep
		measure("resume after a sleep (3 steps replayed)", func() {
			h.clock.Advance(time.Second)
			h.poll(h.e, ship.Erase()) // the second's sweeps, outside the figure
			counter.Take()
			pollOnce()
		})
		h.wantStatus("sleeper-1", StatusDone)
		measure("signal a waiting run", func() {
			if err := h.e.Signal(h.ctx, "waiter-1", "go", `"now"`); err != nil {
				t.Fatal(err)
			}
		})
		pollOnce()
		h.wantStatus("waiter-1", StatusDone)

		keys := make([]string, 100)
		for i := range keys {
			keys[i] = fmt.Sprint("k", i)
		}
		h.start(fan, "fan-1", strings.Join(keys, ","))
		measure("fan-out of 100 children, the parent's poll", pollOnce)
		if n := h.drain(h.e, ship.Erase()); n != 100 {
			t.Errorf("the fan-out started %d children, want 100", n)
		}
		h.drain(h.e, defs...)
		h.wantStatus("fan-1", StatusDone)

		// An idle worker's watcher polls once a tick (Engine.poller), quiet:
		// on PostgreSQL it listens for hints, so after a probe that found
		// nothing due its polls send nothing until quietMax later.
		if driver == "postgres" {
			listenQuietly(t, h.e)
		}
		idleSecond := func() {
			h.clock.Advance(time.Second)
			if _, _, err := h.e.pollWait(h.ctx, defs, PollOptions{quiet: true}); err != nil {
				t.Fatal(err)
			}
		}
		idleSecond() // the probe after the listener's catch-up hint
		measure("one second of an idle worker", idleSecond)
		// (Retention, Options.OrphanSignalTTL, takes its turn once a minute
		// besides: not within these 30 seconds.)
		measure("30 seconds of an idle worker", func() {
			for range 30 {
				idleSecond()
			}
		})

		for _, name := range costCases {
			t.Logf("%-45s %+v", name, got[name])
		}
		if diff := cmp.Diff(wantCosts[driver], got); diff != "" {
			t.Errorf("costs on %s (-want +got):\n%s", driver, diff)
		}
	})
}
