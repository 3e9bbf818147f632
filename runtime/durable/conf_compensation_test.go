package durable

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// saga is debit, then credit; when credit fails (finally), a compensating
// refund step, then a sleep (so the run resumes and replays the whole path).
func saga(name string, policy RetryPolicy, cnt *counter, credit func(attempt int) error) Def[string, string] {
	return RegisterWith(policy, name, str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Step(c, str, "debit", cnt.effect("debit", "debited")), func(string) task.Task[string] {
			creditTask := task.From(func(context.Context) (string, error) {
				n := cnt.hit("credit")
				if err := credit(n); err != nil {
					return "", err
				}
				return "credited", nil
			})
			paid := task.OnError(Step(c, str, "credit", creditTask), func(err error) task.Task[string] {
				return task.Map(Step(c, str, "refund", cnt.effect("refund", "refunded")), func(string) string {
					return "refunded after: " + errText(err)
				})
			})
			return task.AndThen(paid, func(s string) task.Task[string] {
				return task.Map(Sleep(c, 1000), func(struct{}) string { return s })
			})
		})
	})
}

func wantJournal(t *testing.T, j []JournalEntry, want string) {
	t.Helper()
	parts := make([]string, len(j))
	for i, e := range j {
		parts[i] = e.StepID + ":" + string(e.Kind)
	}
	if got := strings.Join(parts, ","); got != want {
		t.Errorf("journal %s, want %s", got, want)
	}
}

func TestCompensationReplaysTheFailurePath(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)

		t.Run("a permanent failure is handed to the body and journalled", func(t *testing.T) {
			cnt := newCounter()
			def := saga("saga-permanent", RetryPolicy{MaxAttempts: 5}, cnt, func(int) error {
				return task.New(task.NotFound, "account 42 is closed")
			})
			h.start(def, "p1", "x")
			h.drain(h.e, def.Erase())
			h.wantStatus("p1", StatusWaiting) // at the sleep, after the refund
			// The pre-deploy check replays the journalled failure too.
			g, err := h.e.Gate([]Workflow{def.Erase()})
			if err != nil {
				t.Fatal(err)
			}
			if r, j := h.describe("p1"); g.Check(h.ctx, r, j).Verdict != Compatible {
				t.Errorf("the gate finds %s, want the run compatible with its own code", g.Check(h.ctx, r, j))
			}
			h.clock.Advance(2 * time.Second)
			h.drain(h.e, def.Erase()) // replays debit, the credit failure and refund
			r, j := h.describe("p1")
			if r.Status != StatusDone || r.Output != `"refunded after: account 42 is closed"` {
				t.Fatalf("run %s output %s (%q), want done with the compensated output", r.Status, r.Output, r.LastError)
			}
			wantJournal(t, j, "debit:step,credit:error,refund:step,sleep:1:sleep")
			if cnt.get("debit") != 1 || cnt.get("credit") != 1 || cnt.get("refund") != 1 {
				t.Errorf("effects ran debit=%d credit=%d refund=%d, want once each", cnt.get("debit"), cnt.get("credit"), cnt.get("refund"))
			}
			wantContains(t, j[1].Result, `"kind":"NotFound"`, "account 42 is closed")
		})

		t.Run("a transient failure is retried, and handed to the body on the last attempt", func(t *testing.T) {
			cnt := newCounter()
			def := saga("saga-transient", RetryPolicy{MaxAttempts: 3}, cnt, func(int) error {
				return task.New(task.Unavailable, "bank offline")
			})
			h.start(def, "t1", "x")
			for attempt := 1; attempt <= 2; attempt++ {
				h.drain(h.e, def.Erase())
				r, j := h.describe("t1")
				if r.Status != StatusFailed || cnt.get("refund") != 0 {
					t.Fatalf("after attempt %d: %s, refund ran %d times; want failed, no refund", attempt, r.Status, cnt.get("refund"))
				}
				wantContains(t, r.LastError, "Unavailable", "bank offline")
				wantJournal(t, j, "debit:step")
				h.clock.Advance(time.Hour)
			}
			h.drain(h.e, def.Erase())
			h.clock.Advance(2 * time.Second)
			h.drain(h.e, def.Erase())
			r, j := h.describe("t1")
			if r.Status != StatusDone {
				t.Fatalf("run %s (%q), want done", r.Status, r.LastError)
			}
			wantJournal(t, j, "debit:step,credit:error,refund:step,sleep:1:sleep")
			if cnt.get("credit") != 3 || cnt.get("refund") != 1 {
				t.Errorf("credit ran %d times, refund %d; want 3 and 1", cnt.get("credit"), cnt.get("refund"))
			}
		})

		t.Run("a body that swallows a transient failure is still retried", func(t *testing.T) {
			cnt := newCounter()
			def := RegisterWith(RetryPolicy{MaxAttempts: 2}, "swallow-step", str, str, func(c *Ctx, in string) task.Task[string] {
				flaky := task.From(func(context.Context) (string, error) {
					cnt.hit("flaky")
					return "", task.New(task.Timeout, "slow")
				})
				return task.OnError(Step(c, str, "flaky", flaky), func(error) task.Task[string] { return task.Succeed("fallback") })
			})
			h.start(def, "s1", "x")
			h.poll(h.e, def.Erase())
			if r := h.wantStatus("s1", StatusFailed); !strings.Contains(r.LastError, "slow") {
				t.Errorf("last_error %q, want the step's error", r.LastError)
			}
			h.clock.Advance(time.Hour)
			h.drain(h.e, def.Erase())
			r, j := h.describe("s1")
			if r.Status != StatusDone || r.Output != `"fallback"` || cnt.get("flaky") != 2 {
				t.Errorf("run %s output %s, step ran %d times; want done \"fallback\" after 2", r.Status, r.Output, cnt.get("flaky"))
			}
			wantJournal(t, j, "flaky:error")
		})

		t.Run("a swallowed failure is recorded at its step, not at the refused step after it", func(t *testing.T) {
			def := RegisterWith(RetryPolicy{MaxAttempts: 2}, "swallow-then-step", str, str, func(c *Ctx, in string) task.Task[string] {
				failing := Step(c, str, "charge", task.Fail[string](task.New(task.Unavailable, "bank offline")))
				caught := task.OnError(failing, func(error) task.Task[string] { return task.Succeed("") })
				return task.AndThen(caught, func(string) task.Task[string] {
					return Step(c, str, "notify", task.Succeed("sent"))
				})
			})
			h.start(def, "at1", "x")
			h.poll(h.e, def.Erase())
			h.wantStatus("at1", StatusFailed)
			history, err := h.e.History(h.ctx, "at1")
			if err != nil {
				t.Fatal(err)
			}
			last := history[len(history)-1]
			if last.Kind != store.EventFailed || last.Step != "charge" {
				t.Errorf("last event %s at step %q, want failed at step \"charge\" (the step that failed)", last.Kind, last.Step)
			}
			for _, line := range strings.Split(h.logText(), "\n") {
				if strings.Contains(line, "run=at1 ") && strings.Contains(line, "attempt failed") && !strings.Contains(line, "step=charge") {
					t.Errorf("log %q, want the failed attempt logged at step=charge", line)
				}
			}
		})
	})
}

func TestPermanentErrorsAreNotRetried(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		fail := map[string]error{
			"marked":   Permanent(task.New(task.Unavailable, "card declined")),
			"notfound": task.New(task.NotFound, "no such order"),
			"denied":   task.New(task.PermissionDenied, "not yours"),
			"invalid":  task.New(task.InvalidInput, "amount -3"),
		}
		for id, want := range fail {
			def := Register("perm-"+id, str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "charge", task.From(func(context.Context) (string, error) {
					cnt.hit(id)
					return "", want
				}))
			})
			h.start(def, id, "x")
			h.drain(h.e, def.Erase())
			r, j := h.describe(id)
			if r.Status != StatusDead || r.Attempts != 1 || cnt.get(id) != 1 {
				t.Errorf("%s: run %s after %d attempts, step ran %d times; want dead after 1", id, r.Status, r.Attempts, cnt.get(id))
			}
			wantContains(t, r.LastError, task.As(want).Message, "permanent")
			if len(j) != 0 {
				t.Errorf("%s: journal %v, want empty (an unhandled failure is not journalled, so retry runs the step again)", id, stepIDs(j))
			}
			if err := h.e.Retry(h.ctx, id); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, def.Erase())
			if cnt.get(id) != 2 {
				t.Errorf("%s: after a manual retry the step ran %d times, want 2", id, cnt.get(id))
			}
		}
		if !IsPermanent(fail["marked"]) || IsPermanent(task.New(task.Unavailable, "x")) || IsPermanent(suspendError("r", "why")) {
			t.Error("IsPermanent: want true for a marked error, false for a plain Unavailable one and for the suspend sentinel")
		}
		if got := Permanent(errors.New("plain")); got.Kind != task.Unexpected || !IsPermanent(got) {
			t.Errorf("Permanent(plain Go error) = %v, want a permanent Unexpected error", got)
		}
	})
}

func TestNonDeterminismIsNotRetried(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		changed := false
		def := Register("drift", str, str, func(c *Ctx, in string) task.Task[string] {
			id := "first"
			if changed {
				id = "renamed"
			}
			return task.AndThen(Step(c, str, id, task.Succeed("a")), func(string) task.Task[string] {
				return task.Map(Sleep(c, 1000), func(struct{}) string { return "done" })
			})
		})
		h.start(def, "nd", "x")
		h.drain(h.e, def.Erase())
		changed = true
		h.clock.Advance(2 * time.Second)
		h.drain(h.e, def.Erase())
		r := h.wantStatus("nd", StatusDead)
		if r.Attempts != 1 {
			t.Errorf("attempts %d, want 1: a non-determinism error is never retried", r.Attempts)
		}
		wantContains(t, r.LastError, "not deterministic", `"renamed"`, `"first"`)
	})
}
