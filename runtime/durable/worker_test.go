package durable

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// awaitCond waits (up to a minute) until cond holds.
func awaitCond(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// TestWorkerRunsConcurrentlyAndDrains: Work with Concurrency 3 advances
// three runs at once, never more, and drains all twelve without a tick
// between them (the tick is an hour).
func TestWorkerRunsConcurrentlyAndDrains(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var mu sync.Mutex
		active, most := 0, 0
		def := Register("busy", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.From(func(context.Context) (string, error) {
				mu.Lock()
				active++
				most = max(most, active)
				mu.Unlock()
				// Hold the step until three are in flight (or the last ones).
				awaitCond(t, "three steps run at once", func() bool {
					mu.Lock()
					defer mu.Unlock()
					return most >= 3
				})
				mu.Lock()
				active--
				mu.Unlock()
				return "ok " + in, nil
			}))
		})
		for i := range 12 {
			h.start(def, fmt.Sprintf("w%02d", i), "x")
		}
		st := workUntilDone(t, h, def.Erase(), 3, 12)
		if st.Advanced != 12 || most != 3 {
			t.Errorf("advanced %d runs with at most %d at once; want 12 with 3", st.Advanced, most)
		}
	})
}

// TestWorkerChainsItsRuns: a worker's poller goes on from a run it
// completed to the next due one, as PollWith does; on PostgreSQL the
// completion claims that run in the same statement. Every run is counted
// advanced, and every completion but the chain's cut-offs (workerChainRuns
// runs, a second of runs at most: workerChainFor) is such a statement; 150
// runs make the chain end at least once before the backlog does, so a poll
// claims at least three times (the first run, the 101st or earlier, and
// the one that finds none).
func TestWorkerChainsItsRuns(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("chained", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", task.Succeed("ok "+in))
		})
		for i := range 150 {
			h.start(def, fmt.Sprintf("c%03d", i), "x")
		}
		h.takeOps()
		if st := workUntilDone(t, h, def.Erase(), 1, 150); st.Advanced != 150 {
			t.Errorf("advanced %d runs, want 150", st.Advanced)
		}
		n := map[string]int{}
		for _, op := range h.takeOps() {
			n[op]++
		}
		if driver != "postgres" {
			if n["complete"] != 150 {
				t.Errorf("completions: %v; want 150", n)
			}
			return
		}
		if n["complete"]+n["complete+claim"] != 150 || n["complete+claim"] == 0 || n["claim"] < 3 || n["claim"] >= 150 {
			t.Errorf("statements: %v; want 150 completions, most of them claiming the next run (complete+claim), 3 to 149 claims alone", n)
		}
	})
}

// workUntilDone runs h's engine as a worker of concurrency pollers (its
// tick an hour: only hints and drains wake them) until n runs are done,
// then stops it and returns its stats.
func workUntilDone(t *testing.T, h *harness, def Workflow, concurrency, n int) WorkerStats {
	t.Helper()
	ctx, stop := context.WithCancel(h.ctx)
	done := make(chan WorkerStats)
	go func() {
		st, err := h.e.Work(ctx, []Workflow{def}, WorkerOptions{Concurrency: concurrency, Tick: time.Hour})
		if err != nil {
			t.Errorf("Work: %v", err)
		}
		done <- st
	}()
	awaitCond(t, "every run is done", func() bool {
		runs, err := h.e.List(h.ctx, StatusDone, n+1)
		return err == nil && len(runs) == n
	})
	stop()
	return <-done
}

// TestPollChainEndsAfterChainFor checks the bound of time on a chain of
// runs (PollOptions.chainFor, Work's workerChainFor), on the engine's
// clock: each run here takes 400 ms of it, so a call bounded by 1 s takes
// its fourth run (begun 1.2 s after the call) as its last and returns, and
// the next call, after Engine.background's turn, begins a chain of its own.
func TestPollChainEndsAfterChainFor(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("timed", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", task.From(func(context.Context) (string, error) {
				h.clock.Advance(400 * time.Millisecond)
				return "ok " + in, nil
			}))
		})
		for i := range 10 {
			h.start(def, fmt.Sprintf("t%02d", i), "x")
		}
		for _, want := range []int{4, 8, 10} {
			worked, err := h.e.PollWith(h.ctx, []Workflow{def.Erase()}, PollOptions{MaxRuns: 100, chainFor: time.Second})
			if err != nil || !worked {
				t.Fatalf("poll: %v, %v", worked, err)
			}
			runs, err := h.e.List(h.ctx, StatusDone, 100)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != want {
				t.Errorf("%d runs done after the call, want %d", len(runs), want)
			}
		}
	})
}

// TestWorkerStopsGracefully: when its context ends, a worker claims nothing
// more and lets the step in flight finish within StopTimeout; past
// StopTimeout the run in flight is given back, due at once.
func TestWorkerStopsGracefully(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		entered := make(chan string, 4)
		release := make(chan struct{})
		def := Register("slow", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.From(func(ctx context.Context) (string, error) {
				entered <- c.RunID()
				select {
				case <-release:
					return "finished", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}))
		})
		work := func(stopTimeout time.Duration) (stop func() WorkerStats) {
			ctx, cancel := context.WithCancel(h.ctx)
			done := make(chan WorkerStats)
			go func() {
				st, _ := h.e.Work(ctx, []Workflow{def.Erase()}, WorkerOptions{Concurrency: 1, Tick: 10 * time.Millisecond, StopTimeout: stopTimeout})
				done <- st
			}()
			return func() WorkerStats { cancel(); return <-done }
		}

		h.start(def, "finishes", "x")
		stop := work(time.Minute)
		<-entered
		h.start(def, "later", "x") // must not be claimed after the stop
		stopped := make(chan WorkerStats)
		go func() { stopped <- stop() }()
		time.Sleep(50 * time.Millisecond) // the worker is stopping, its step still in flight
		close(release)
		if st := <-stopped; st.Advanced != 1 {
			t.Errorf("advanced %d runs, want 1", st.Advanced)
		}
		h.wantStatus("finishes", StatusDone)
		if r := h.wantStatus("later", StatusWaiting); r.Attempts != 0 {
			t.Errorf("the run started during the stop was claimed (%d attempts)", r.Attempts)
		}

		release = make(chan struct{})
		stop = work(20 * time.Millisecond)
		if id := <-entered; id != "later" {
			t.Fatalf("claimed %q, want later", id)
		}
		stop() // StopTimeout passes with the step still in flight
		if r := h.wantStatus("later", StatusWaiting); !r.WakeAt.Equal(h.clock.Now()) || r.Attempts != 0 {
			t.Errorf("the interrupted run: due %v, attempts %d; want given back, due now, the attempt not counted", r.WakeAt, r.Attempts)
		}
	})
}

// TestWorkerTicksWhileAPollerIsBusy: without hints, the tick wakes an idle
// poller even while the worker's first poller is inside a long step, so a
// run started meanwhile is done at once, not when that step ends.
func TestWorkerTicksWhileAPollerIsBusy(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		entered := make(chan struct{}, 1)
		release := make(chan struct{})
		long := Register("long", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.From(func(ctx context.Context) (string, error) {
				entered <- struct{}{}
				select {
				case <-release:
					return "finished", nil
				case <-ctx.Done():
					return "", ctx.Err()
				}
			}))
		})
		quick := Register("quick", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.Succeed("ok "+in))
		})
		h.start(long, "long-1", "x")
		ctx, stop := context.WithCancel(h.ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			opts := WorkerOptions{Concurrency: 2, Tick: 20 * time.Millisecond, StopTimeout: time.Second, Hints: HintSettings{Off: true}}
			if _, err := h.e.Work(ctx, []Workflow{long.Erase(), quick.Erase()}, opts); err != nil {
				t.Errorf("Work: %v", err)
			}
		}()
		<-entered // the first poller holds long-1 in its step
		time.Sleep(100 * time.Millisecond)
		h.start(quick, "quick-1", "x")
		deadline := time.Now().Add(10 * time.Second)
		for {
			r, _, err := h.e.Describe(h.ctx, "quick-1")
			if err == nil && r.Status == StatusDone {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("quick-1 is %v (%v) after 10 s while long-1's step runs: the idle poller never ticked", r.Status, err)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		close(release)
		stop()
		<-done
	})
}
