package durable

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestDeadlinePassingWhileRunning: a run whose deadline passes during a
// step stops at the next step boundary (its journal write is refused), ends
// timed_out at the next poll and is never retried.
func TestDeadlinePassingWhileRunning(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := Register("deadline-slow", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", cnt.effect("a", "1")), func(string) task.Task[string] {
				slow := task.From(func(context.Context) (string, error) {
					cnt.hit("b")
					h.clock.Advance(2 * time.Minute) // the step outlives the deadline
					return "2", nil
				})
				return task.AndThen(Step(c, str, "b", slow), func(string) task.Task[string] {
					return Step(c, str, "c", cnt.effect("c", "3"))
				})
			})
		})
		wf := def.Erase()
		if err := StartWith(h.ctx, h.e, StartOptions{Deadline: time.Minute, Priority: 3}, def, "slow-1", "x"); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, wf)
		r, j := h.describe("slow-1")
		if r.Status != StatusTimedOut {
			t.Fatalf("run is %s (last_error %q), want timed_out", r.Status, r.LastError)
		}
		wantContains(t, r.LastError, "deadline passed at 2030-01-02 03:05:05.000Z")
		if ids := stepIDs(j); slices.Contains(ids, "b") || slices.Contains(ids, "c") {
			t.Errorf("journal %v: a step past the deadline was journalled", ids)
		}
		if cnt.get("c") != 0 || cnt.get("b") != 1 {
			t.Errorf("step runs: b %d, c %d; want b once, c never", cnt.get("b"), cnt.get("c"))
		}
		// Not retried, however long we wait.
		h.clock.Advance(2 * DefaultLease)
		if n := h.drain(h.e, wf); n != 0 {
			t.Errorf("%d polls advanced a timed-out run", n)
		}
		h.wantStatus("slow-1", StatusTimedOut)
		wantContains(t, h.logText(), "durable runs timed out")
	})
}

// TestDeadlineWhileWaitingOnASignal: a run parked on a signal (no timeout
// of its own) ends timed_out at its deadline; a late signal is Ok and
// ignored.
func TestDeadlineWhileWaitingOnASignal(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("deadline-approval", str, str, func(c *Ctx, in string) task.Task[string] {
			return AwaitSignal(c, str, "approve")
		})
		wf := def.Erase()
		if err := StartWith(h.ctx, h.e, StartOptions{Deadline: time.Hour}, def, "approval-1", "x"); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, wf)
		h.wantStatus("approval-1", StatusWaiting)
		h.clock.Advance(time.Hour - time.Second)
		h.drain(h.e, wf)
		h.wantStatus("approval-1", StatusWaiting)
		h.clock.Advance(time.Second)
		h.drain(h.e, wf)
		h.wantStatus("approval-1", StatusTimedOut)
		h.signal("approval-1", "approve", `"late"`)
		if out, err := h.e.SignalRun(h.ctx, "approval-1", "approve", `"later"`); err != nil || out != SignalRunTimedOut {
			t.Errorf("SignalRun to a timed-out run = %v, %v; want SignalRunTimedOut", out, err)
		}
		h.drain(h.e, wf)
		if r := h.wantStatus("approval-1", StatusTimedOut); r.Output != "" {
			t.Errorf("output %q", r.Output)
		}
		if err := h.e.Cancel(h.ctx, "approval-1"); !errors.Is(err, ErrRefused) {
			t.Errorf("Cancel of a timed-out run = %v, want ErrRefused", err)
		}
	})
}

// TestDeadlineCancelsChildren: the children of a timed-out run (parent_id)
// are cancelled with it; a run without a deadline is untouched.
func TestDeadlineCancelsChildren(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("deadline-order", str, str, func(c *Ctx, in string) task.Task[string] {
			return AwaitSignal(c, str, "shipped")
		})
		wf := def.Erase()
		if err := StartWith(h.ctx, h.e, StartOptions{Deadline: 10 * time.Minute}, def, "order-1", "x"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"order-1/ship-a", "order-1/ship-b", "order-2"} {
			h.start(def, id, "x")
		}
		// The composition work's startChild records parent_id; until it is
		// merged, the test sets the column (migration 0002) itself.
		if _, err := d.Exec(h.ctx, `UPDATE _sky_durable_runs SET parent_id = 'order-1' WHERE id LIKE 'order-1/%'`); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, wf)
		h.clock.Advance(10 * time.Minute)
		h.drain(h.e, wf)
		h.wantStatus("order-1", StatusTimedOut)
		h.wantStatus("order-1/ship-a", StatusCancelled)
		h.wantStatus("order-1/ship-b", StatusCancelled)
		h.wantStatus("order-2", StatusWaiting)
	})
}

// TestDeadlineSweepCostsOneStatementPerSecond: runs without a deadline cost
// polls nothing but one probe per DeadlineSweep (store.Probe, which also
// looks for due runs and schedule ticks), and no sweep: nothing is overdue;
// a bad deadline is refused, naming the run.
func TestDeadlineSweepCostsOneStatementPerSecond(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("deadline-idle", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		wf := def.Erase()
		h.takeOps()
		for range 5 {
			h.poll(h.e, wf)
		}
		h.clock.Advance(DeadlineSweep)
		h.poll(h.e, wf)
		probes, sweeps := 0, 0
		for _, op := range h.takeOps() {
			switch op {
			case "probe":
				probes++
			case "timeout":
				sweeps++
			}
		}
		if probes != 2 || sweeps != 0 {
			t.Errorf("6 polls over one DeadlineSweep sent %d probes and %d sweeps, want 2 and 0", probes, sweeps)
		}
		err := StartWith(h.ctx, h.e, StartOptions{Deadline: -time.Second}, def, "bad-1", "x")
		if task.As(err) == nil || task.As(err).Kind != task.InvalidInput {
			t.Fatalf("a negative deadline = %v, want InvalidInput", err)
		}
		wantContains(t, err.Error(), `"bad-1"`, "-1s", "hint:")
		if _, _, err := h.e.Describe(h.ctx, "bad-1"); !errors.Is(err, ErrRunNotFound) {
			t.Errorf("a refused start stored the run: %v", err)
		}
	})
}
