package durable

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// abcSteps is a workflow of steps a, b and c whose output joins their
// results; cnt counts its body's runs ("body") and each step's effect.
func abcSteps(name string, cnt *counter) Def[string, string] {
	return Register(name, str, str, func(c *Ctx, in string) task.Task[string] {
		cnt.hit("body")
		return task.AndThen(Step(c, str, "a", cnt.effect("a", in+"-a")), func(a string) task.Task[string] {
			return task.AndThen(Step(c, str, "b", cnt.effect("b", "b")), func(b string) task.Task[string] {
				return task.Map(Step(c, str, "c", cnt.effect("c", "c")), func(c string) string { return a + b + c })
			})
		})
	})
}

// TestRunNowAdvancesTheRunInTheCaller: RunNow inserts the run claimed by
// its engine and runs it there, with no claim statement; its answer is
// Result's for the state the attempt left.
func TestRunNowAdvancesTheRunInTheCaller(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)

		t.Run("done in this attempt: the output", func(t *testing.T) {
			cnt := newCounter()
			def := abcSteps("three", cnt)
			h.takeOps()
			out, err := RunNow(h.ctx, h.e, def, "three-1", "x")
			if err != nil || out == nil || *out != "x-abc" {
				t.Fatalf("RunNow = %v, %v; want x-abc", out, err)
			}
			if ops := h.takeOps(); ops[0] != "start+claim" || slices.Contains(ops, "claim") {
				t.Errorf("statements %v: want the insert-claim first and no claim", ops)
			}
			r, j := h.describe("three-1")
			if r.Status != StatusDone || r.Attempts != 1 || r.ClaimedBy != "A" || r.Output != `"x-abc"` {
				t.Errorf("run %+v; want done in attempt 1 by worker A", r)
			}
			if diff := cmp.Diff([]string{"a", "b", "c"}, stepIDs(j)); diff != "" {
				t.Errorf("journal (-want +got):\n%s", diff)
			}
			if got, err := h.e.History(h.ctx, "three-1"); err != nil || len(got) != 1 || got[0].Kind != store.EventDone || got[0].Actor != "A" {
				t.Errorf("history %+v, %v; want only its done, by A (a first claim records nothing)", got, err)
			}

			// The id exists: Result's answer, the body not run again.
			out, err = RunNow(h.ctx, h.e, def, "three-1", "y")
			if err != nil || out == nil || *out != "x-abc" {
				t.Errorf("RunNow of a done id = %v, %v; want its output", out, err)
			}
			if n := cnt.get("body"); n != 1 {
				t.Errorf("the body ran %d times, want once", n)
			}
			other := Register("other", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
			_, err = RunNow(h.ctx, h.e, other, "three-1", "z")
			wantErrContains(t, err, task.Conflict, `cannot start run "three-1" of workflow "other"`, `workflow "three"`)
			if !errors.Is(err, ErrWorkflowMismatch) {
				t.Errorf("%v is not ErrWorkflowMismatch, as Start's is", err)
			}
		})

		t.Run("a sleep: nil, and a poll after the wake finishes it", func(t *testing.T) {
			cnt := newCounter()
			def := Register("sleepy", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.AndThen(Step(c, str, "a", cnt.effect("a", "a")), func(a string) task.Task[string] {
					return task.AndThen(Sleep(c, 60_000), func(struct{}) task.Task[string] { return Step(c, str, "b", cnt.effect("b", a+"b")) })
				})
			})
			out, err := RunNow(h.ctx, h.e, def, "sleepy-1", "x")
			if err != nil || out != nil {
				t.Fatalf("RunNow of a sleeping run = %v, %v; want nil, nil", out, err)
			}
			h.wantStatus("sleepy-1", StatusWaiting)
			if h.poll(h.e, def.Erase()) {
				t.Fatal("a poll before the wake did work")
			}
			h.clock.Advance(time.Minute)
			h.drain(h.e, def.Erase())
			if out, err := Result(h.ctx, h.e, def, "sleepy-1"); err != nil || out == nil || *out != "ab" {
				t.Errorf("Result after the wake = %v, %v; want ab", out, err)
			}
			if cnt.get("a") != 1 || cnt.get("b") != 1 {
				t.Errorf("effects a %d, b %d; want each once", cnt.get("a"), cnt.get("b"))
			}
		})

		t.Run("a retry pending: nil; dead: Result's error", func(t *testing.T) {
			cnt := newCounter()
			flaky := RegisterWith(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}, "flaky", str, str,
				func(c *Ctx, in string) task.Task[string] {
					return Step(c, str, "call", task.From(func(ctx context.Context) (string, error) {
						return "", task.Errorf(task.Unavailable, "down %d", cnt.hit("call"))
					}))
				})
			out, err := RunNow(h.ctx, h.e, flaky, "flaky-1", "x")
			if err != nil || out != nil {
				t.Fatalf("RunNow of a failing run = %v, %v; want nil, nil (retried later)", out, err)
			}
			h.wantStatus("flaky-1", StatusFailed)

			once := RegisterWith(RetryPolicy{MaxAttempts: 1}, "once", str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "call", task.Fail[string](task.New(task.Unavailable, "gone for good")))
			})
			_, err = RunNow(h.ctx, h.e, once, "once-1", "x")
			h.wantStatus("once-1", StatusDead)
			_, want := Result(h.ctx, h.e, once, "once-1")
			wantErrContains(t, err, task.Unavailable, `run "once-1"`, "is dead", "gone for good")
			if want == nil || err.Error() != want.Error() {
				t.Errorf("RunNow's error %q, Result's %q: want the same", err, want)
			}
		})

		t.Run("cancelled mid-run: Result's error", func(t *testing.T) {
			def := Register("self-cancel", str, str, func(c *Ctx, in string) task.Task[string] {
				// An operator's cancel, outside the step's transaction.
				cancel := task.From(func(context.Context) (string, error) { return "", h.e.Cancel(h.ctx, c.RunID()) })
				return task.AndThen(Step(c, str, "cancel", cancel), func(string) task.Task[string] { return Step(c, str, "after", task.Succeed("no")) })
			})
			_, err := RunNow(h.ctx, h.e, def, "cancel-1", "x")
			wantErrContains(t, err, task.Unavailable, `run "cancel-1"`, "is cancelled")
		})

		t.Run("limits: started for a worker, not run here", func(t *testing.T) {
			cnt := newCounter()
			def := abcSteps("limited", cnt).WithLimits(Limits{Concurrency: 1}, nil)
			out, err := RunNow(h.ctx, h.e, def, "limited-1", "x")
			if err != nil || out != nil {
				t.Fatalf("RunNow of a limited workflow = %v, %v; want nil, nil", out, err)
			}
			if r := h.wantStatus("limited-1", StatusWaiting); r.Attempts != 0 || cnt.get("body") != 0 {
				t.Errorf("attempts %d, body runs %d; want neither", r.Attempts, cnt.get("body"))
			}
			h.drain(h.e, def.Erase())
			h.wantStatus("limited-1", StatusDone)
			if out, err := RunNow(h.ctx, h.e, def, "limited-1", "x"); err != nil || out == nil || *out != "x-abc" {
				t.Errorf("RunNow of the finished limited run = %v, %v; want its output", out, err)
			}
		})
	})
}

// TestRunNowCrashIsReclaimedAfterTheLease: a RunNow whose process is gone
// (an injected crash after step b's commit) leaves the run running under
// its lease; once the lease ends a worker reclaims it and finishes it, each
// step's effect having run once.
func TestRunNowCrashIsReclaimedAfterTheLease(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		gone := h.engine("gone", func(o *Options) {
			o.OnBoundary = func(p Point) error {
				if p.StepID == "b" && p.Boundary == AfterCommit {
					return errors.New("killed")
				}
				return nil
			}
		})
		cnt := newCounter()
		def := abcSteps("three", cnt)
		out, err := RunNow(h.ctx, gone, def, "r", "x")
		if err != nil || out != nil {
			t.Fatalf("RunNow that crashed = %v, %v; want nil, nil", out, err)
		}
		if r := h.wantStatus("r", StatusRunning); r.ClaimedBy != "gone" {
			t.Errorf("claimed by %q, want gone", r.ClaimedBy)
		}
		if h.poll(h.e, def.Erase()) {
			t.Fatal("a worker took the run while its lease held")
		}
		h.clock.Advance(gone.heldLease() + time.Second)
		h.drain(h.e, def.Erase())
		r, j := h.describe("r")
		if r.Status != StatusDone || r.Output != `"x-abc"` || r.Attempts != 2 {
			t.Errorf("run %+v; want done by the second attempt", r)
		}
		if diff := cmp.Diff([]string{"a", "b", "c"}, stepIDs(j)); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		for _, s := range []string{"a", "b", "c"} {
			if n := cnt.get(s); n != 1 {
				t.Errorf("step %s ran %d times, want once", s, n)
			}
		}
		events, err := h.e.History(h.ctx, "r")
		if err != nil || len(events) < 1 || events[0].Kind != store.EventReclaimed || events[0].Detail != "gone" || events[0].Actor != "A" {
			t.Errorf("history %+v, %v; want A's reclaim from gone first", events, err)
		}
	})
}

// TestRunNowInANamespaceWithKeys: RunNow goes through the engine's
// namespace and sealing like Start and Poll: the run is the namespace's,
// its input and output sealed at rest, and read back plain.
func TestRunNowInANamespaceWithKeys(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		e := h.engine("billing-A", func(o *Options) { o.Namespace, o.Keys = "billing", testKey("k1", 7) })
		def := abcSteps("three", newCounter())
		for range 2 { // the second reads the finished run
			out, err := RunNow(h.ctx, e, def, "r", secret)
			if err != nil || out == nil || *out != secret+"-abc" {
				t.Fatalf("RunNow = %v, %v; want %s-abc", out, err, secret)
			}
		}
		if _, err := h.e.ReadRun(h.ctx, "r"); task.As(err).Kind != task.NotFound {
			t.Errorf("the default namespace reads the run: %v", err)
		}
		rows, err := d.QueryMaps(h.ctx, `SELECT id, input, output, claimed_by FROM _sky_durable_runs`)
		if err != nil || len(rows) != 1 {
			t.Fatalf("rows %v, %v; want one", rows, err)
		}
		row := rows[0]
		if row["id"] != "billing"+store.NamespaceSep+"r" || row["claimed_by"] != "billing-A" ||
			strings.Contains(row["input"], secret) || strings.Contains(row["output"], secret) {
			t.Errorf("stored row %q; want the namespace's id, claimed by billing-A, input and output sealed", row)
		}
	})
}
