package durable

// The conformance suite: every test runs unchanged on SQLite and PostgreSQL
// (dbtest.ForEachDriver) with a virtual clock. Tests named TestGuaranteeNN
// hold DESIGN.md's guarantee NN.

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// twoSteps is a workflow: step "a", sleep 1s, step "b"; output "<a>+<b>+<input>".
func twoSteps(cnt *counter) Def[string, string] {
	return Register("two-steps", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Step(c, str, "a", cnt.effect("a", "A")), func(a string) task.Task[string] {
			return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
				return task.Map(Step(c, str, "b", cnt.effect("b", "B")), func(b string) string {
					return a + "+" + b + "+" + in
				})
			})
		})
	})
}

func TestGuarantee01IdempotentStart(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := twoSteps(cnt)
		h.start(w, "order-1", "first")
		h.start(w, "order-1", "second") // a no-op: the first input wins
		runs, err := h.e.List(h.ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 || runs[0].Input != `"first"` {
			t.Fatalf("runs after two starts: %+v, want one run with input \"first\"", runs)
		}
		other := Register("refund", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		err = Start(h.ctx, h.e, other, "order-1", "x")
		wantErrContains(t, err, task.Conflict, `"order-1"`, `"refund"`, `"two-steps"`)
	})
}

func TestGuarantee02ExactlyOnceJournal(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := twoSteps(cnt).Erase()
		h.start(twoSteps(cnt), "r1", "in")
		if !h.poll(h.e, w) {
			t.Fatal("first poll did no work")
		}
		h.wantStatus("r1", StatusWaiting)
		h.clock.Advance(time.Second)
		b := h.engine("B")
		if !h.poll(b, w) {
			t.Fatal("second poll (worker B) did no work")
		}
		r := h.wantStatus("r1", StatusDone)
		if r.Output != `"A+B+in"` {
			t.Errorf("output %s, want \"A+B+in\"", r.Output)
		}
		// Replays on any worker never re-run a journalled step.
		if err := h.e.Wake(h.ctx, "r1"); err == nil {
			t.Error("waking a done run succeeded")
		}
		if got := [2]int{cnt.get("a"), cnt.get("b")}; got != [2]int{1, 1} {
			t.Errorf("effect runs a,b = %v, want [1 1]", got)
		}
		_, j := h.describe("r1")
		if diff := cmp.Diff([]string{"a", "sleep:1", "b"}, stepIDs(j)); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
	})
}

// TestGuarantee03Fencing drives two workers by hand: A's lease expires while
// its step runs, B claims the run and finishes it, then every write A tries
// is rejected and A's Poll returns normally.
func TestGuarantee03Fencing(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		b := h.engine("B")
		cnt := newCounter()
		var wf Workflow
		def := Register("fenced", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "one", cnt.effect("one", "1")), func(one string) task.Task[string] {
				return Step(c, str, "two", task.From(func(ctx context.Context) (string, error) {
					if cnt.hit("two") == 1 {
						// Worker A stalls past its lease; worker B takes over.
						h.clock.Advance(DefaultLease + time.Minute)
						if !h.poll(b, wf) {
							t.Error("worker B could not claim the expired run")
						}
						return "from-A", nil
					}
					return "from-B", nil
				}))
			})
		})
		wf = def.Erase()
		h.start(def, "r1", "x")
		worked, err := h.e.Poll(h.ctx, []Workflow{wf})
		if err != nil || !worked {
			t.Fatalf("worker A poll = %v, %v; want true, nil (a lost lease is not an error)", worked, err)
		}
		r, j := h.describe("r1")
		if r.Status != StatusDone || r.Output != `"from-B"` {
			t.Fatalf("run = %s output %s, want done with B's output", r.Status, r.Output)
		}
		if diff := cmp.Diff([]string{"one", "two"}, stepIDs(j)); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if j[1].Result != `"from-B"` {
			t.Errorf("step two journalled %s, want B's result", j[1].Result)
		}
		if r.ClaimedBy != "B" {
			t.Errorf("claimed_by %q, want B", r.ClaimedBy)
		}
		wantContains(t, h.logText(), "lease lost", "worker=A")
	})
}

// TestGuarantee03OnlyARunningRunHoldsAToken checks the invariant the fence
// rests on (PostgreSQL's writes match a run by id and lease token only): a
// run holds a lease token while it is running, and every way out of running
// (done, suspended, failed, dead, cancelled) clears it.
func TestGuarantee03OnlyARunningRunHoldsAToken(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		tokens := func(where string) int64 {
			t.Helper()
			var n int64
			if err := d.QueryRow(h.ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE lease_token IS NOT NULL AND `+where).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		var heldWhileRunning int64
		ok := Register("tok.ok", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", task.From(func(context.Context) (string, error) {
				heldWhileRunning = tokens("id = 'ok' AND status = 'running'")
				return in, nil
			}))
		})
		sleeper := Register("tok.sleep", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(Sleep(c, time.Hour.Milliseconds()), func(struct{}) string { return in })
		})
		flaky := RegisterWith(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}, "tok.flaky", str, str,
			func(c *Ctx, in string) task.Task[string] {
				return task.Fail[string](task.Errorf(task.Unexpected, "always"))
			})
		defs := []Workflow{ok.Erase(), sleeper.Erase(), flaky.Erase()}
		h.start(ok, "ok", "x")
		h.start(sleeper, "sleep", "x")
		h.start(flaky, "flaky", "x")
		h.drain(h.e, defs...)
		if err := h.e.Cancel(h.ctx, "sleep"); err != nil {
			t.Fatal(err)
		}
		h.wantStatus("flaky", StatusFailed)
		h.clock.Advance(2 * time.Second)
		h.start(sleeper, "sleep2", "x")
		h.start(flaky, "flaky2", "x")
		h.drain(h.e, defs...)
		h.wantStatus("flaky2", StatusFailed)
		h.wantStatus("ok", StatusDone)
		h.wantStatus("sleep", StatusCancelled)
		h.wantStatus("sleep2", StatusWaiting)
		h.wantStatus("flaky", StatusDead)
		if heldWhileRunning != 1 {
			t.Errorf("while its step ran, run ok held %d lease tokens, want 1", heldWhileRunning)
		}
		if n := tokens("status <> 'running'"); n != 0 {
			t.Errorf("%d runs that are not running hold a lease token, want none", n)
		}
	})
}

// TestGuarantee03FencingRejectsEveryWrite checks each fenced write of a
// stale worker (journal row, suspension, completion, failure) directly.
func TestGuarantee03FencingRejectsEveryWrite(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		h.start(def, "r1", "x")
		s := h.e.store
		stale, ok, err := s.ClaimRun(h.ctx, []string{"w"}, h.clock.Now(), DefaultLease, "tok-A", "A")
		if err != nil || !ok {
			t.Fatalf("claim A: %v %v", ok, err)
		}
		h.clock.Advance(DefaultLease + time.Second)
		if _, ok, err := s.ClaimRun(h.ctx, []string{"w"}, h.clock.Now(), DefaultLease, "tok-B", "B"); err != nil || !ok {
			t.Fatalf("claim B after expiry: %v %v", ok, err)
		}
		f := store.Fence{RunID: stale.ID, Token: "tok-A"}
		now := h.clock.Now()
		writes := map[string]error{
			"append":         s.AppendEntry(h.ctx, d, f, JournalEntry{Seq: 1, StepID: "s", Kind: KindStep, Result: "1"}, now),
			"suspend":        s.Suspend(h.ctx, f, now.Add(time.Hour), "", now),
			"suspend-signal": s.Suspend(h.ctx, f, time.Time{}, "go", now),
			"complete":       s.Complete(h.ctx, f, nil, `"x"`, now),
			"fail":           s.Fail(h.ctx, f, "boom", "", time.Second, false, now),
			"dead":           s.Fail(h.ctx, f, "boom", "", 0, true, now),
		}
		for name, err := range writes {
			if !IsLeaseLost(err) {
				t.Errorf("%s with a stale lease: %v, want lease lost", name, err)
			}
		}
		r, j := h.describe("r1")
		if r.Status != StatusRunning || r.ClaimedBy != "B" || len(j) != 0 {
			t.Errorf("after stale writes: status %s claimed_by %s journal %d; want running, B, empty", r.Status, r.ClaimedBy, len(j))
		}
	})
}
