package durable

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// approval awaits signal "approve" then sleeps, so a later replay reads the
// payload from the journal; output is "approved by <payload>".
func approval() Def[string, string] {
	return Register("approval", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(AwaitSignal(c, str, "approve"), func(who string) task.Task[string] {
			return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
				return task.Succeed("approved by " + who)
			})
		})
	})
}

func TestGuarantee09SignalsAreADurableMailbox(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := approval()
		wf := def.Erase()

		t.Run("a signal sent before start is kept", func(t *testing.T) {
			h.signal("early", "approve", `"ann"`)
			h.start(def, "early", "x")
			h.drain(h.e, wf)
			h.clock.Advance(time.Second)
			h.drain(h.e, wf)
			if r := h.wantStatus("early", StatusDone); r.Output != `"approved by ann"` {
				t.Errorf("output %s", r.Output)
			}
		})

		t.Run("a signal wakes only a run waiting for that name", func(t *testing.T) {
			h.start(def, "r1", "x")
			h.drain(h.e, wf)
			r := h.wantStatus("r1", StatusWaiting)
			if r.WaitingSignal != "approve" || !r.WakeAt.IsZero() {
				t.Fatalf("waiting_signal %q wake_at %v; want approve and never", r.WaitingSignal, r.WakeAt)
			}
			h.signal("r1", "reject", `"bob"`)
			if h.poll(h.e, wf) {
				t.Fatal("a signal of another name woke the run")
			}
			h.signal("r1", "approve", `"cy"`)
			if !h.poll(h.e, wf) {
				t.Fatal("the awaited signal did not wake the run")
			}
			// A resend after delivery changes nothing.
			h.signal("r1", "approve", `"mallory"`)
			h.clock.Advance(time.Second)
			h.drain(h.e, wf)
			r, j := h.describe("r1")
			if r.Status != StatusDone || r.Output != `"approved by cy"` {
				t.Fatalf("run %s output %s, want done, approved by cy", r.Status, r.Output)
			}
			want := []JournalEntry{
				{Seq: 1, StepID: "signal:approve", Kind: KindSignal, Result: `"cy"`},
				{Seq: 2, StepID: "sleep:1", Kind: KindSleep, Result: fmt.Sprintf(`{"wakeAt":%d}`, h.clock.Now().UnixMilli())},
			}
			if diff := cmp.Diff(want, j, cmpEntries); diff != "" {
				t.Errorf("journal (-want +got):\n%s", diff)
			}
		})

		t.Run("the first delivery wins over a resend (a retried webhook)", func(t *testing.T) {
			h.signal("r2", "approve", `"first"`)
			h.signal("r2", "approve", `"second"`)
			h.start(def, "r2", "x")
			h.drain(h.e, wf)
			_, j := h.describe("r2")
			if len(j) == 0 || j[0].Result != `"first"` {
				t.Errorf("journal %+v, want the first payload consumed", j)
			}
		})

		t.Run("an operator replaces an unconsumed payload, not a consumed one", func(t *testing.T) {
			if out, err := h.e.SignalRun(h.ctx, "r3", "approve", `"typo"`); err != nil || out != SignalNoRunYet {
				t.Fatalf("SignalRun before the start = %v, %v", out, err)
			}
			if out, err := h.e.SignalRun(h.ctx, "r3", "approve", `"again"`); err != nil || out != SignalDuplicate {
				t.Fatalf("a repeated SignalRun = %v, %v; want SignalDuplicate", out, err)
			}
			h.start(def, "r3", "x")
			if out, err := h.e.ReplaceSignal(h.ctx, "r3", "approve", `"dee"`); err != nil || out != SignalReplaced {
				t.Fatalf("ReplaceSignal = %v, %v; want SignalReplaced", out, err)
			}
			h.drain(h.e, wf)
			_, j := h.describe("r3")
			if len(j) == 0 || j[0].Result != `"dee"` {
				t.Fatalf("journal %+v, want the replaced payload consumed", j)
			}
			_, err := h.e.ReplaceSignal(h.ctx, "r3", "approve", `"late"`)
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("ReplaceSignal after consumption = %v, want ErrRefused", err)
			}
			wantContains(t, err.Error(), `signal "approve"`, `"r3"`, "already consumed")
			h.clock.Advance(2 * time.Second)
			h.drain(h.e, wf)
			h.wantStatus("r3", StatusDone)
			if out, err := h.e.SignalRun(h.ctx, "r3", "approve", `"later"`); err != nil || out != SignalRunDone {
				t.Fatalf("SignalRun to a done run = %v, %v; want SignalRunDone, no error", out, err)
			}
			if err := h.e.Signal(h.ctx, "r3", "other", `1`); err != nil {
				t.Fatalf("Signal to a done run = %v, want Ok", err)
			}
			if box, err := h.e.Signals(h.ctx, "r3"); err != nil || len(box) != 1 || box[0].Payload != `"dee"` {
				t.Errorf("mailbox of the done run = %+v, %v; want only the consumed signal", box, err)
			}
		})

		t.Run("an operator's replace of a signal never sent sends it, replacing nothing", func(t *testing.T) {
			h.start(def, "r4", "x")
			h.drain(h.e, wf)
			h.wantStatus("r4", StatusWaiting)
			if out, err := h.e.ReplaceSignal(h.ctx, "r4", "approve", `"new"`); err != nil || out != SignalSentNew {
				t.Fatalf("ReplaceSignal of a signal never sent = %v, %v; want SignalSentNew", out, err)
			}
			history, err := h.e.History(h.ctx, "r4")
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range history {
				if ev.Kind == EventKind("signal_replaced") {
					t.Errorf("a signal_replaced event though nothing was replaced: %+v", ev)
				}
			}
			h.drain(h.e, wf)
			if _, j := h.describe("r4"); len(j) == 0 || j[0].Result != `"new"` {
				t.Fatalf("journal %+v, want the sent payload consumed", j)
			}
			if out, err := h.e.ReplaceSignal(h.ctx, "r5", "approve", `"early"`); err != nil || out != SignalNoRunYet {
				t.Fatalf("ReplaceSignal to an id with no run and no signal = %v, %v; want SignalNoRunYet", out, err)
			}
		})
	})
}

func TestAwaitSignalForJournalsTheTimeout(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := Register("deadline", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(AwaitSignalFor(c, str, "pay", 30_000), func(p *string) task.Task[string] {
				return task.AndThen(Step(c, str, "after", cnt.effect("after", "x")), func(string) task.Task[string] {
					if p == nil {
						return task.Succeed("timed out")
					}
					return task.Succeed("paid " + *p)
				})
			})
		})
		wf := def.Erase()
		h.start(def, "slow", "x")
		h.start(def, "fast", "x")
		h.drain(h.e, wf)
		r := h.wantStatus("slow", StatusWaiting)
		if want := h.clock.Now().Add(30 * time.Second); r.WaitingSignal != "pay" || !r.WakeAt.Equal(want) {
			t.Fatalf("waiting_signal %q wake_at %v; want pay at %v", r.WaitingSignal, r.WakeAt, want)
		}
		h.clock.Advance(10 * time.Second)
		h.signal("fast", "pay", `"42"`)
		h.drain(h.e, wf)
		h.clock.Advance(20 * time.Second)
		h.drain(h.e, wf)
		// A signal after the timeout does not change the journalled outcome.
		h.signal("slow", "pay", `"late"`)
		if r := h.wantStatus("slow", StatusDone); r.Output != `"timed out"` {
			t.Errorf("slow output %s", r.Output)
		}
		if r := h.wantStatus("fast", StatusDone); r.Output != `"paid 42"` {
			t.Errorf("fast output %s", r.Output)
		}
		_, j := h.describe("slow")
		if got := fmt.Sprintf("%v %s %s", stepIDs(j), j[1].Kind, j[1].Result); got != "[deadline:pay signal:pay after] timeout null" {
			t.Errorf("slow journal: %s", got)
		}
	})
}

func TestGuarantee10DeterminismCheck(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		first := "a"
		def := RegisterWith(RetryPolicy{MaxAttempts: 1}, "fickle", str, str, func(c *Ctx, in string) task.Task[string] {
			// Reads a Go variable between steps: not deterministic.
			return task.AndThen(Step(c, str, first, task.Succeed("1")), func(string) task.Task[string] {
				return task.AndThen(Sleep(c, 10), func(struct{}) task.Task[string] { return task.Succeed("ok") })
			})
		})
		h.start(def, "r1", "x")
		h.drain(h.e, def.Erase())
		first = "b"
		h.clock.Advance(time.Second)
		h.drain(h.e, def.Erase())
		r := h.wantStatus("r1", StatusDead)
		wantContains(t, r.LastError, "not deterministic", "position 1", `"b"`, `"a"`)

		twice := RegisterWith(RetryPolicy{MaxAttempts: 1}, "twice", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "x", task.Succeed("1")), func(string) task.Task[string] {
				return Step(c, str, "x", task.Succeed("2"))
			})
		})
		h.start(twice, "r2", "x")
		h.drain(h.e, twice.Erase())
		r = h.wantStatus("r2", StatusDead)
		wantContains(t, r.LastError, `"x"`, "used twice")

		nested := RegisterWith(RetryPolicy{MaxAttempts: 1}, "nested", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "outer", Step(c, str, "inner", task.Succeed("1")))
		})
		h.start(nested, "r3", "x")
		h.drain(h.e, nested.Erase())
		r = h.wantStatus("r3", StatusDead)
		wantContains(t, r.LastError, `"inner"`, `"outer"`, "still running")
	})
}

func TestGuarantee11SwallowedSuspension(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := Register("swallow", str, str, func(c *Ctx, in string) task.Task[string] {
			nap := task.OnError(task.Map(Sleep(c, 5000), func(struct{}) string { return "slept" }), func(err error) task.Task[string] {
				if IsSuspend(err) {
					return task.Succeed("swallowed") // wrong, but must not matter
				}
				return task.Fail[string](err)
			})
			return task.AndThen(nap, func(s string) task.Task[string] {
				// The step after a swallowed suspension must not run.
				return task.OnError(Step(c, str, "after", cnt.effect("after", s)), func(err error) task.Task[string] {
					return task.Succeed("recovered " + s)
				})
			})
		})
		h.start(def, "r1", "x")
		h.drain(h.e, def.Erase())
		r := h.wantStatus("r1", StatusWaiting)
		if r.Output != "" || cnt.get("after") != 0 {
			t.Fatalf("a swallowed suspension recorded output %q / ran the next step %d times", r.Output, cnt.get("after"))
		}
		h.clock.Advance(5 * time.Second)
		h.drain(h.e, def.Erase())
		if r := h.wantStatus("r1", StatusDone); r.Output != `"slept"` || cnt.get("after") != 1 {
			t.Errorf("output %s, step ran %d times; want \"slept\" and 1", r.Output, cnt.get("after"))
		}
	})
}

func TestGuarantee12OneClock(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("clocked", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Sleep(c, 50), func(struct{}) task.Task[string] { return task.Succeed("ok") })
		})
		wf := def.Erase()
		// The virtual clock is in 2030: due times follow it, not the host's.
		h.start(def, "virtual", "x")
		if r := h.wantStatus("virtual", StatusWaiting); !r.WakeAt.Equal(h.clock.Now()) || !r.CreatedAt.Equal(h.clock.Now()) {
			t.Errorf("wake_at %v created_at %v, want the virtual now %v", r.WakeAt, r.CreatedAt, h.clock.Now())
		}
		real := h.engine("real", func(o *Options) { o.Clock = nil })
		if h.poll(real, wf) {
			t.Fatal("an engine on the real clock claimed a run due in 2030")
		}
		// With no injected clock: the database clock on PostgreSQL, the
		// system clock on SQLite. A short sleep completes once it has passed.
		if err := Start(h.ctx, real, def, "real", "x"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			if _, err := real.Poll(h.ctx, []Workflow{wf}); err != nil {
				t.Fatal(err)
			}
			r, _ := h.describe("real")
			if r.Status == StatusDone {
				if time.Since(r.CreatedAt) > time.Hour || r.UpdatedAt.Sub(r.CreatedAt) < 50*time.Millisecond {
					t.Errorf("created %v updated %v: not on the real clock, or the sleep ended early", r.CreatedAt, r.UpdatedAt)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run on the real clock not done by the deadline: %+v", r)
			}
			time.Sleep(5 * time.Millisecond) // polling interval, not synchronisation
		}
	})
}

// cmpEntries compares journal entries without their creation time.
var cmpEntries = cmp.Comparer(func(a, b JournalEntry) bool {
	return a.Seq == b.Seq && a.StepID == b.StepID && a.Kind == b.Kind && a.Result == b.Result
})

var _ = context.Background
