package durable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// A plain step's journal row is written when the body reaches its next
// durable operation, or with the run's outcome (Ctx.pending). These tests
// check that every way out of a body keeps or refuses that row correctly.

// TestLastStepIsJournalledWithTheCompletion: the body's last step is in the
// journal of the done run, with its value in the output.
func TestLastStepIsJournalledWithTheCompletion(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := Register("last", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", cnt.effect("a", "A")), func(a string) task.Task[string] {
				return task.Map(Step(c, str, "b", cnt.effect("b", "B")), func(b string) string { return in + a + b })
			})
		})
		h.start(w, "r", "x")
		h.drain(h.e, w.Erase())
		r, j := h.describe("r")
		if r.Status != StatusDone || r.Output != `"xAB"` {
			t.Fatalf("run: %s %s, want done \"xAB\"", r.Status, r.Output)
		}
		if diff := cmp.Diff([]string{"a", "b"}, stepIDs(j)); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if j[1].Result != `"B"` || j[1].Seq != 2 {
			t.Errorf("last entry: %+v, want seq 2 result \"B\"", j[1])
		}
	})
}

// TestPendingStepIsJournalledWhenTheBodyFails: a body failing after a step
// keeps the step: the retry replays it instead of running its effect again.
func TestPendingStepIsJournalledWhenTheBodyFails(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := RegisterWith(RetryPolicy{MaxAttempts: 3}, "fails", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "charge", cnt.effect("charge", "paid")), func(v string) task.Task[string] {
				if c.Attempt() == 1 {
					return task.Fail[string](task.Errorf(task.Unexpected, "boom after the charge"))
				}
				return task.Succeed(v)
			})
		})
		h.start(w, "r", "x")
		h.poll(h.e, w.Erase())
		r, j := h.describe("r")
		if r.Status != StatusFailed || !strings.Contains(r.LastError, "boom after the charge") {
			t.Fatalf("after attempt 1: %s %q, want failed with the body's error", r.Status, r.LastError)
		}
		if diff := cmp.Diff([]string{"charge"}, stepIDs(j)); diff != "" {
			t.Errorf("journal after the failed attempt (-want +got):\n%s", diff)
		}
		h.clock.Advance(time.Hour)
		h.drain(h.e, w.Erase())
		if r := h.wantStatus("r", StatusDone); r.Output != `"paid"` {
			t.Errorf("output %s, want \"paid\"", r.Output)
		}
		if n := cnt.get("charge"); n != 1 {
			t.Errorf("the charge ran %d times, want once", n)
		}
	})
}

// TestUnjournalledStepStopsTheBody: when the pending row of step "a" cannot
// be written, the next durable operation fails, and so does every later one
// even if the body swallows the error (its position would be a's), and a
// body that then returns a value still fails the attempt: the journal has
// no gap, and the retry runs "a" again.
func TestUnjournalledStepStopsTheBody(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		refuse := map[string][2]string{
			"sqlite": {`CREATE TRIGGER refuse_a BEFORE INSERT ON _sky_durable_journal WHEN NEW.step_id = 'a' BEGIN SELECT RAISE(ABORT, 'journal refuses a'); END`,
				`DROP TRIGGER refuse_a`},
			"postgres": {`ALTER TABLE _sky_durable_journal ADD CONSTRAINT refuse_a CHECK (step_id <> 'a')`,
				`ALTER TABLE _sky_durable_journal DROP CONSTRAINT refuse_a`},
		}[driver]
		if _, err := d.ExecRaw(h.ctx, refuse[0]); err != nil {
			t.Fatal(err)
		}
		cnt := newCounter()
		var errB, errC error
		w := RegisterWith(RetryPolicy{MaxAttempts: 3}, "gap", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", cnt.effect("a", "A")), func(a string) task.Task[string] {
				swallow := func(id string, into *error) task.Task[string] {
					return task.OnError(Step(c, str, id, cnt.effect(id, id)), func(err error) task.Task[string] {
						*into = err
						return task.Succeed("")
					})
				}
				return task.AndThen(swallow("b", &errB), func(string) task.Task[string] {
					return task.AndThen(swallow("c", &errC), func(string) task.Task[string] { return task.Succeed(a) })
				})
			})
		})
		h.start(w, "r", "x")
		h.poll(h.e, w.Erase())
		for name, err := range map[string]error{"b": errB, "c": errC} {
			if err == nil || !strings.Contains(err.Error(), `the result of step "a" could not be journalled`) {
				t.Errorf("step %s got %v, want the error naming step a", name, err)
			}
		}
		r, j := h.describe("r")
		if r.Status != StatusFailed || !strings.Contains(r.LastError, `the result of step "a" could not be journalled`) {
			t.Fatalf("after attempt 1: %s %q, want failed naming step a", r.Status, r.LastError)
		}
		if len(j) != 0 || cnt.get("b")+cnt.get("c") != 0 {
			t.Fatalf("journal %v, b ran %d, c ran %d; want nothing written and neither run", stepIDs(j), cnt.get("b"), cnt.get("c"))
		}
		if _, err := d.ExecRaw(h.ctx, refuse[1]); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Hour)
		h.drain(h.e, w.Erase())
		r, j = h.describe("r")
		if r.Status != StatusDone || r.Output != `"A"` || strings.Join(stepIDs(j), ",") != "a,b,c" || cnt.get("a") != 2 {
			t.Errorf("after the retry: %s %s, journal %v, a ran %d times; want done \"A\", [a b c], twice", r.Status, r.Output, stepIDs(j), cnt.get("a"))
		}
	})
}

// TestCancelledWorkerKeepsItsLastStep: a worker whose context ends right
// after a step still writes that step's row (detached from the context),
// so the run resumes after it.
func TestCancelledWorkerKeepsItsLastStep(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		ctx, cancel := context.WithCancel(h.ctx)
		defer cancel()
		w := Register("stop", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", task.From(func(context.Context) (string, error) {
				cnt.hit("a")
				cancel() // the worker is told to stop while "a" runs
				return "A", nil
			})), func(a string) task.Task[string] {
				return task.AndThen(task.From(func(ctx context.Context) (string, error) { return "", ctx.Err() }), func(string) task.Task[string] {
					return Step(c, str, "b", task.Succeed("B"))
				})
			})
		})
		h.start(w, "r", "x")
		if _, err := h.e.Poll(ctx, []Workflow{w.Erase()}); !errors.Is(err, context.Canceled) && !strings.Contains(errText(err), "cancel") {
			t.Fatalf("poll of a stopping worker = %v, want its cancellation", err)
		}
		if _, j := h.describe("r"); strings.Join(stepIDs(j), ",") != "a" {
			t.Fatalf("journal %v, want [a]", stepIDs(j))
		}
	})
}
