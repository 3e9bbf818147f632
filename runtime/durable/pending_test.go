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
// then gives the run back (due at once, the attempt not counted), so a peer
// resumes it after that step without waiting for the lease to expire.
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
		r, j := h.describe("r")
		if strings.Join(stepIDs(j), ",") != "a" {
			t.Fatalf("journal %v, want [a]", stepIDs(j))
		}
		if r.Status != StatusWaiting || r.Attempts != 0 || r.WakeAt.After(h.clock.Now()) {
			t.Fatalf("after the stop: %s, %d attempts, due %v (now %v); want waiting, 0 attempts, due now", r.Status, r.Attempts, r.WakeAt, h.clock.Now())
		}
		wantContains(t, h.logText(), "durable run released")
		if n := h.drain(h.engine("B"), w.Erase()); n != 1 { // the same clock: no lease has expired
			t.Fatalf("a peer advanced %d runs, want the released one", n)
		}
		r, j = h.describe("r")
		if r.Status != StatusDone || r.Output != `"B"` || strings.Join(stepIDs(j), ",") != "a,b" || cnt.get("a") != 1 {
			t.Errorf("after the peer: %s %s, journal %v, a ran %d times; want done \"B\", [a b], once", r.Status, r.Output, stepIDs(j), cnt.get("a"))
		}
	})
}

// TestStoppedRetryStaysFailed: a run stopped during a retry is given back
// as it was before that claim: failed, with its last error and its earlier
// attempt counted, due at once.
func TestStoppedRetryStaysFailed(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ctx, cancel := context.WithCancel(h.ctx)
		defer cancel()
		tries := 0
		w := RegisterWith(RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, MaxBackoff: time.Second}, "retry-stop", str, str,
			func(c *Ctx, in string) task.Task[string] {
				return task.From(func(ctx context.Context) (string, error) {
					if tries++; tries == 1 {
						return "", task.Errorf(task.Unavailable, "first try fails")
					}
					cancel() // the worker is told to stop during the retry
					return "", ctx.Err()
				})
			})
		h.start(w, "r", "x")
		h.poll(h.e, w.Erase())
		h.clock.Advance(2 * time.Second)
		if _, err := h.e.Poll(ctx, []Workflow{w.Erase()}); err == nil {
			t.Fatal("poll of a stopping worker returned no error, want its cancellation")
		}
		r, _ := h.describe("r")
		if r.Status != StatusFailed || r.Attempts != 1 || !strings.Contains(r.LastError, "first try fails") || r.WakeAt.After(h.clock.Now()) {
			t.Errorf("after the stop: %s, %d attempts, last error %q, due %v (now %v); want failed, 1 attempt, the first error, due now",
				r.Status, r.Attempts, r.LastError, r.WakeAt, h.clock.Now())
		}
	})
}
