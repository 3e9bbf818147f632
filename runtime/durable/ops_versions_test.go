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

// checkoutV1 and checkoutV2 are two versions of one workflow with different
// step shapes: running a run on the other version's code would fail the
// determinism check (or journal the wrong steps). Each step records which
// worker ran which version in cnt.
func checkoutV1(cnt *counter) Def[string, string] {
	return Register("checkout", str, str, func(c *Ctx, in string) task.Task[string] {
		who := c.e.WorkerID() + ":v1"
		return task.AndThen(Step(c, str, "reserve", cnt.effect(who, "v1-reserve")), func(r string) task.Task[string] {
			return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
				return task.Map(Step(c, str, "charge", cnt.effect(who, "v1-charge")), func(ch string) string {
					return r + "+" + ch
				})
			})
		})
	})
}

func checkoutV2(cnt *counter) Def[string, string] {
	return Register("checkout", str, str, func(c *Ctx, in string) task.Task[string] {
		who := c.e.WorkerID() + ":v2"
		return task.AndThen(Step(c, str, "reserve-all", cnt.effect(who, "v2-reserve")), func(r string) task.Task[string] {
			return task.AndThen(SleepAs(c, "settle", 1000), func(struct{}) task.Task[string] {
				return task.Map(Step(c, str, "capture", cnt.effect(who, "v2-capture")), func(ch string) string {
					return r + "+" + ch
				})
			})
		})
	}).Versioned(2)
}

// TestRollingDeploy runs an old worker (version 1 only) and a new worker
// (version 2 only) side by side, concurrently, under the default policy
// PinToStart: every run finishes on the version it was started with, and no
// worker ever runs a version it does not have.
func TestRollingDeploy(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		v1, v2 := checkoutV1(cnt), checkoutV2(cnt)
		old, fresh := h.engine("old"), h.engine("new")

		// Before the deploy: version 1 runs, started and advanced to their sleep.
		for i := range 10 {
			h.start(v1, fmt.Sprintf("v1-%d", i), "x")
		}
		h.drain(old, v1.Erase())
		// The deploy: new starts are version 2; old runs are still sleeping.
		for i := range 10 {
			h.start(v2, fmt.Sprintf("v2-%d", i), "x")
		}
		if r := h.wantStatus("v2-0", StatusWaiting); r.Version != 2 {
			t.Fatalf("a run started from version 2 is stamped version %d", r.Version)
		}
		h.clock.Advance(2 * time.Second)

		// Both workers poll at once until all 20 runs are done; an idle
		// worker moves the virtual clock on so sleeps end.
		ctx, cancel := context.WithTimeout(h.ctx, time.Minute)
		defer cancel()
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		for _, w := range []struct {
			e   *Engine
			def Workflow
		}{{old, v1.Erase()}, {fresh, v2.Erase()}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					worked, err := w.e.Poll(ctx, []Workflow{w.def})
					if err != nil {
						errs <- err
						return
					}
					if !worked {
						h.clock.Advance(time.Second)
					}
					if doneCount(ctx, h.e) == 20 {
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("poll: %v", err)
		}
		for i := range 10 {
			r, j := h.describe(fmt.Sprintf("v1-%d", i))
			if r.Status != StatusDone || r.Output != `"v1-reserve+v1-charge"` || fmt.Sprint(stepIDs(j)) != "[reserve sleep:1 charge]" {
				t.Errorf("run v1-%d: %s %s %v (%s), want done on version 1", i, r.Status, r.Output, stepIDs(j), r.LastError)
			}
			r, j = h.describe(fmt.Sprintf("v2-%d", i))
			if r.Status != StatusDone || r.Output != `"v2-reserve+v2-capture"` || fmt.Sprint(stepIDs(j)) != "[reserve-all settle capture]" {
				t.Errorf("run v2-%d: %s %s %v (%s), want done on version 2", i, r.Status, r.Output, stepIDs(j), r.LastError)
			}
		}
		if n := cnt.get("old:v2") + cnt.get("new:v1"); n != 0 {
			t.Errorf("a worker ran a version it does not have %d times", n)
		}
		if cnt.get("old:v1") != 20 || cnt.get("new:v2") != 20 {
			t.Errorf("steps run: old:v1 %d, new:v2 %d; want 20 each (two steps × 10 runs)", cnt.get("old:v1"), cnt.get("new:v2"))
		}
	})
}

func doneCount(ctx context.Context, e *Engine) int {
	runs, err := e.ListRuns(ctx, ListFilter{Status: StatusDone, Limit: 1000})
	if err != nil {
		return -1
	}
	return len(runs)
}

// TestPinToStartLeavesOtherVersions: a worker without a run's version does
// not claim it, and one worker may hold several versions of a name.
func TestPinToStartLeavesOtherVersions(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		v1, v2 := checkoutV1(cnt), checkoutV2(cnt)
		h.start(v2, "new-run", "x")
		if h.poll(h.e, v1.Erase()) {
			t.Fatal("a worker with only version 1 claimed a version 2 run")
		}
		r := h.wantStatus("new-run", StatusWaiting)
		if r.Attempts != 0 || r.LastError != "" {
			t.Fatalf("the left run changed: attempts %d, error %q", r.Attempts, r.LastError)
		}
		// A worker with both versions runs each run on its own version.
		h.start(v1, "old-run", "x")
		both := []Workflow{v1.Erase(), v2.Erase()}
		h.drain(h.e, both...)
		h.clock.Advance(2 * time.Second)
		h.drain(h.e, both...)
		if r, _ := h.describe("old-run"); r.Output != `"v1-reserve+v1-charge"` {
			t.Errorf("old-run output %s, want version 1's", r.Output)
		}
		if r, _ := h.describe("new-run"); r.Output != `"v2-reserve+v2-capture"` {
			t.Errorf("new-run output %s, want version 2's", r.Output)
		}
	})
}

// TestFailSafeFailsUnregisteredVersion: under FailSafe a worker claims by
// name and fails a run of a version it lacks with a clear message, retried
// with backoff, dead after the attempts; Retry after deploying it finishes.
func TestFailSafeFailsUnregisteredVersion(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		v1 := checkoutV1(cnt)
		v3 := Register("checkout", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "all", cnt.effect("v3", "v3"))
		}).Versioned(3)
		h.start(v3, "future", "x")
		failSafe := PollOptions{Versions: FailSafe}
		for attempt := 1; attempt <= DefaultRetryPolicy.MaxAttempts; attempt++ {
			worked, err := h.e.PollWith(h.ctx, []Workflow{v1.Erase()}, failSafe)
			if err != nil || !worked {
				t.Fatalf("attempt %d: FailSafe poll = %v, %v; want it to claim the run", attempt, worked, err)
			}
			h.clock.Advance(10 * time.Minute)
		}
		r := h.wantStatus("future", StatusDead)
		wantContains(t, r.LastError, "workflow checkout version 3 is not registered in this worker (it has 1)", "hint:")
		if cnt.get("v3")+cnt.get("A:v1") != 0 {
			t.Fatal("a body ran for a run of an unregistered version")
		}
		wantContains(t, h.logText(), `msg="durable attempt failed" run=future workflow=checkout attempt=1`, `msg="durable run dead" run=future`)

		// Deploying version 3 and retrying finishes the run.
		if err := h.e.Retry(h.ctx, "future"); err != nil {
			t.Fatal(err)
		}
		worked, err := h.e.PollWith(h.ctx, []Workflow{v1.Erase(), v3.Erase()}, failSafe)
		if err != nil || !worked {
			t.Fatalf("poll after deploying version 3: %v, %v", worked, err)
		}
		if r := h.wantStatus("future", StatusDone); r.Output != `"v3"` {
			t.Errorf("output %s, want \"v3\"", r.Output)
		}
	})
}
