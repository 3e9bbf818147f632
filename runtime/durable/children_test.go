package durable

// Conformance of composed workflows (children.go, results.go) on SQLite and
// PostgreSQL, with the virtual clock: a parent woken by its children never
// needs the clock to move.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// shipWorkflow is a child: one step that counts its runs, output
// "shipped:<input>".
func shipWorkflow(cnt *counter) Def[string, string] {
	return Register("ship", str, str, func(c *Ctx, in string) task.Task[string] {
		return Step(c, str, "ship", cnt.effect("ship:"+c.RunID(), "shipped:"+in))
	})
}

// orderWorkflow starts child "ship-1" and awaits it.
func orderWorkflow(ship Def[string, string]) Def[string, string] {
	return Register("order", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(StartChild(c, ship, "ship-1", in), func(struct{}) task.Task[string] {
			return task.Map(AwaitChild(c, ship, "ship-1"), func(out string) string { return "order:" + out })
		})
	})
}

// fanOut starts one ship child per comma-separated key of its input.
func fanOut(ship Def[string, string]) Def[string, string] {
	return Register("fan-out", str, str, func(c *Ctx, in string) task.Task[string] {
		var kids []Child[string]
		for _, k := range strings.Split(in, ",") {
			kids = append(kids, Child[string]{Key: k, Input: k})
		}
		return task.Map(All(c, ship, kids), func(outs []string) string { return strings.Join(outs, "|") })
	})
}

func count(ops []string, op string) int {
	n := 0
	for _, o := range ops {
		if o == op {
			n++
		}
	}
	return n
}

func TestChildStartAndAwait(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		ship := shipWorkflow(cnt)
		order := orderWorkflow(ship)
		defs := []Workflow{order.Erase(), ship.Erase()}
		h.start(order, "o1", "box")

		// The parent starts its child and suspends on it.
		h.poll(h.e, order.Erase())
		p := h.wantStatus("o1", StatusWaiting)
		if p.WaitingSignal != "sky:child:o1/ship-1" || !p.WakeAt.IsZero() {
			t.Fatalf("parent waits for %q until %v; want the child and no wake time", p.WaitingSignal, p.WakeAt)
		}
		child := h.wantStatus("o1/ship-1", StatusWaiting)
		if child.ParentID != "o1" || child.Input != `"box"` || child.Workflow != "ship" {
			t.Fatalf("child: %+v", child)
		}
		// The child's completion makes the parent due at once.
		h.poll(h.e, ship.Erase())
		p = h.wantStatus("o1", StatusWaiting)
		if p.WakeAt.IsZero() || p.WakeAt.After(h.clock.Now()) {
			t.Fatalf("after its child finished the parent is due at %v; want now (%v)", p.WakeAt, h.clock.Now())
		}
		h.takeOps()
		h.drain(h.e, defs...)
		p = h.wantStatus("o1", StatusDone)
		if p.Output != `"order:shipped:box"` {
			t.Errorf("parent output %s", p.Output)
		}
		if n := cnt.get("ship:o1/ship-1"); n != 1 {
			t.Errorf("the child's step ran %d times, want 1", n)
		}
		_, j := h.describe("o1")
		if diff := cmp.Diff([]string{"child:ship-1", "await:ship-1"}, stepIDs(j)); diff != "" {
			t.Errorf("parent journal (-want +got):\n%s", diff)
		}
		if n := count(h.takeOps(), "children"); n != 0 {
			t.Errorf("the resumed parent inserted children %d times; its replay must not", n)
		}
		kids, err := h.e.ListRuns(h.ctx, ListFilter{Parent: "o1"})
		if err != nil || len(kids) != 1 || kids[0].ID != "o1/ship-1" {
			t.Errorf("ListRuns(parent o1) = %v, %v", kids, err)
		}
	})
}

func TestAllFansOutInOneStatementAndFansInInOrder(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		ship := shipWorkflow(cnt)
		fan := fanOut(ship)
		h.start(fan, "f1", "c,a,b,e,d")
		h.takeOps()
		h.poll(h.e, fan.Erase())
		if n := count(h.takeOps(), "children"); n != 1 {
			t.Errorf("starting 5 children sent %d insert statements, want 1", n)
		}
		h.wantStatus("f1", StatusWaiting)
		// Four children finish: the parent stays parked.
		for range 4 {
			h.poll(h.e, ship.Erase())
		}
		if p := h.wantStatus("f1", StatusWaiting); !p.WakeAt.IsZero() {
			t.Fatalf("the parent is due at %v with a child left; want it parked", p.WakeAt)
		}
		h.drain(h.e, fan.Erase(), ship.Erase())
		p := h.wantStatus("f1", StatusDone)
		if p.Output != `"shipped:c|shipped:a|shipped:b|shipped:e|shipped:d"` {
			t.Errorf("fan-in output %s, want the children's outputs in the order given", p.Output)
		}
		_, j := h.describe("f1")
		if diff := cmp.Diff([]string{"all:c", "all-done:c"}, stepIDs(j)); diff != "" {
			t.Errorf("parent journal (-want +got):\n%s", diff)
		}
		if p.Attempts > 1 {
			t.Errorf("parent attempts %d", p.Attempts)
		}
	})
}

func TestAllOfNoChildren(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ship := shipWorkflow(newCounter())
		w := Register("none", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(All(c, ship, nil), func(outs []string) string { return fmt.Sprint(len(outs)) })
		})
		h.start(w, "n", "")
		h.drain(h.e, w.Erase())
		if p := h.wantStatus("n", StatusDone); p.Output != `"0"` {
			t.Errorf("output %s", p.Output)
		}
	})
}

func TestADeadChildFailsItsParentNamingIt(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		bad := RegisterWith(RetryPolicy{MaxAttempts: 1}, "ship", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "ship", task.Fail[string](task.New(task.Unavailable, "warehouse closed")))
		})
		order := orderWorkflow(bad)
		h.start(order, "o1", "box")
		h.drain(h.e, order.Erase(), bad.Erase())
		h.wantStatus("o1/ship-1", StatusDead)
		p := h.wantStatus("o1", StatusFailed)
		wantContains(t, p.LastError, `child "o1/ship-1"`, "dead", "warehouse closed", "sky durable retry o1/ship-1")
		// Retrying the child and then the parent finishes both.
		if err := h.e.Retry(h.ctx, "o1/ship-1"); err != nil {
			t.Fatal(err)
		}
		good := shipWorkflow(newCounter())
		h.drain(h.e, good.Erase())
		h.clock.Advance(time.Minute)
		h.drain(h.e, order.Erase(), good.Erase())
		if p := h.wantStatus("o1", StatusDone); p.Output != `"order:shipped:box"` {
			t.Errorf("output %s", p.Output)
		}
	})
}

// TestADeadChildCanBeHandledAtOnce: awaitChild's failure for a dead child
// is handed to the body on the attempt that meets it (the child used its own
// attempts), so a parent compensates at once; its replays, even after an
// operator retried the child to done, take the path its journal recorded.
func TestADeadChildCanBeHandledAtOnce(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		bad := RegisterWith(RetryPolicy{MaxAttempts: 1}, "ship", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "ship", task.Fail[string](task.New(task.Unavailable, "warehouse closed")))
		})
		order := Register("order", str, str, func(c *Ctx, in string) task.Task[string] {
			awaited := task.AndThen(StartChild(c, bad, "ship-1", in), func(struct{}) task.Task[string] {
				return AwaitChild(c, bad, "ship-1")
			})
			handled := task.OnError(awaited, func(err error) task.Task[string] {
				return Step(c, str, "apologise", task.Succeed("sorry: "+task.As(err).Kind.String()))
			})
			return task.AndThen(handled, func(out string) task.Task[string] {
				return task.AndThen(Sleep(c, time.Minute.Milliseconds()), func(struct{}) task.Task[string] {
					return Step(c, str, "final", task.Succeed(out))
				})
			})
		})
		h.start(order, "o1", "box")
		h.drain(h.e, order.Erase(), bad.Erase())
		h.wantStatus("o1/ship-1", StatusDead)
		if p := h.wantStatus("o1", StatusWaiting); p.Attempts != 0 || p.LastError != "" {
			t.Errorf("the parent compensated and sleeps with attempts %d, last error %q; want a clean suspension", p.Attempts, p.LastError)
		}
		if err := h.e.Retry(h.ctx, "o1/ship-1"); err != nil {
			t.Fatal(err)
		}
		good := shipWorkflow(newCounter())
		h.drain(h.e, good.Erase())
		h.wantStatus("o1/ship-1", StatusDone)
		h.clock.Advance(2 * time.Minute)
		h.drain(h.e, order.Erase(), good.Erase())
		if p := h.wantStatus("o1", StatusDone); p.Output != `"sorry: Unavailable"` {
			t.Errorf("output %s, want the compensation's", p.Output)
		}
		_, j := h.describe("o1")
		if diff := cmp.Diff([]string{"child:ship-1", "apologise", "sleep:1", "final"}, stepIDs(j)); diff != "" {
			t.Errorf("parent journal (-want +got):\n%s", diff)
		}
	})
}

func TestACancelledChildFailsItsParent(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ship := shipWorkflow(newCounter())
		fan := fanOut(ship)
		h.start(fan, "f1", "a,b")
		h.poll(h.e, fan.Erase())
		if err := h.e.Cancel(h.ctx, "f1/b"); err != nil {
			t.Fatal(err)
		}
		// Cancelling one child wakes the parent at once: it fails.
		h.poll(h.e, fan.Erase())
		p := h.wantStatus("f1", StatusFailed)
		wantContains(t, p.LastError, `child "f1/b"`, "cancelled")
	})
}

func TestChildBadInput(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ship := shipWorkflow(newCounter())
		fan := fanOut(ship)
		h.start(fan, "dup", "a,b,a")
		h.start(fan, "empty", "a,,b")
		other := Register("other", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		h.start(other, "taken/x", "")
		taker := Register("taker", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(StartChild(c, ship, "x", in), func(struct{}) string { return "" })
		})
		h.start(taker, "taken", "")
		reuse := Register("reuse", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(StartChild(c, ship, "x", in), func(struct{}) task.Task[string] {
				return task.Map(All(c, ship, []Child[string]{{Key: "y", Input: in}, {Key: "x", Input: in}}), func([]string) string { return "" })
			})
		})
		h.start(reuse, "reuse", "")
		aw := Register("awaits-nothing", str, str, func(c *Ctx, in string) task.Task[string] { return AwaitChild(c, ship, "never") })
		h.start(aw, "aw", "")
		h.drain(h.e, fan.Erase(), taker.Erase(), aw.Erase(), reuse.Erase())
		wantContains(t, h.wantStatus("dup", StatusDead).LastError, `the child key "a" is given twice`, "a permanent error")
		wantContains(t, h.wantStatus("empty", StatusDead).LastError, "empty child key")
		wantContains(t, h.wantStatus("taken", StatusDead).LastError, "a permanent error", `cannot start child "taken/x"`, `workflow "other"`, "use another child key")
		wantContains(t, h.wantStatus("reuse", StatusDead).LastError, "a permanent error", `cannot start child "reuse/x"`, "started by Durable.startChild")
		wantContains(t, h.wantStatus("aw", StatusDead).LastError, `found no child "never"`, "Durable.startChild")
		if kids, _ := h.e.ListRuns(h.ctx, ListFilter{Parent: "dup"}); len(kids) != 0 {
			t.Errorf("a refused fan-out started %d children", len(kids))
		}
	})
}

func TestResultAndAwaitResult(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		w := Register("wait-go", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(AwaitSignal(c, str, "go"), func(s string) string { return in + s })
		})
		h.start(w, "r1", "a")
		h.drain(h.e, w.Erase())
		if out, err := Result(h.ctx, h.e, w, "r1"); err != nil || out != nil {
			t.Fatalf("Result of a waiting run = %v, %v; want nil", out, err)
		}
		if out, err := AwaitResult(h.ctx, h.e, w, "r1", 30*time.Millisecond); err != nil || out != nil {
			t.Fatalf("AwaitResult past its timeout = %v, %v; want nil", out, err)
		}
		got := make(chan *string, 1)
		errs := make(chan error, 1)
		go func() {
			out, err := AwaitResult(context.Background(), h.e, w, "r1", time.Minute)
			got <- out
			errs <- err
		}()
		h.signal("r1", "go", `"b"`)
		h.drain(h.e, w.Erase())
		if out, err := <-got, <-errs; err != nil || out == nil || *out != "ab" {
			t.Fatalf("AwaitResult = %v, %v; want ab", out, err)
		}
		if out, err := Result(h.ctx, h.e, w, "r1"); err != nil || out == nil || *out != "ab" {
			t.Fatalf("Result of a done run = %v, %v", out, err)
		}
		if driver == "postgres" {
			// The first AwaitResult installed the trigger that notifies it.
			var n int64
			if err := d.QueryRow(h.ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = '_sky_durable_done_hint'`).Scan(&n); err != nil || n != 1 {
				t.Errorf("done-hint triggers: %d, %v; want 1", n, err)
			}
		}
		_, err := Result(h.ctx, h.e, w, "nope")
		wantErrContains(t, err, task.NotFound, `"nope"`)
		other := Register("other", str, str, nil)
		_, err = Result(h.ctx, h.e, other, "r1")
		wantErrContains(t, err, task.Conflict, `workflow "wait-go", not "other"`)
		h.start(w, "r2", "")
		if err := h.e.Cancel(h.ctx, "r2"); err != nil {
			t.Fatal(err)
		}
		_, err = AwaitResult(h.ctx, h.e, w, "r2", time.Minute)
		wantErrContains(t, err, task.Unavailable, `"r2"`, "cancelled")
	})
}

// progress sets event "progress" twice around a step, then waits for "go".
func progressWorkflow(cnt *counter) Def[string, string] {
	return Register("progress", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(SetEvent(c, codec.Int, "progress", 10), func(struct{}) task.Task[string] {
			return task.AndThen(Step(c, str, "work", cnt.effect("work", "w")), func(string) task.Task[string] {
				return task.AndThen(SetEvent(c, codec.Int, "progress", 50), func(struct{}) task.Task[string] {
					return AwaitSignal(c, str, "go")
				})
			})
		})
	})
}

func TestEventsAreJournalledAndKeepTheLatestValue(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := progressWorkflow(cnt)
		h.start(w, "p1", "")
		if v, err := GetEvent(h.ctx, h.e, "p1", "progress", codec.Int); err != nil || v != nil {
			t.Fatalf("GetEvent before any = %v, %v; want nil", v, err)
		}
		h.drain(h.e, w.Erase())
		v, err := GetEvent(h.ctx, h.e, "p1", "progress", codec.Int)
		if err != nil || v == nil || *v != 50 {
			t.Fatalf("GetEvent = %v, %v; want 50", v, err)
		}
		_, err = GetEvent(h.ctx, h.e, "p1", "progress", codec.String)
		wantErrContains(t, err, task.Decode, `event "progress"`, `"p1"`)
		h.takeOps()
		h.signal("p1", "go", `"x"`)
		h.drain(h.e, w.Erase())
		h.wantStatus("p1", StatusDone)
		if n := count(h.takeOps(), "event"); n != 0 {
			t.Errorf("the replay wrote events %d times, want 0", n)
		}
		_, j := h.describe("p1")
		if diff := cmp.Diff([]string{"event:progress", "work", "event:progress#2", "signal:go"}, stepIDs(j)); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if v, _ := GetEvent(h.ctx, h.e, "p1", "progress", codec.Int); v == nil || *v != 50 {
			t.Errorf("after the replay the event is %v, want still 50", v)
		}
	})
}

func TestSignalWithStart(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		w := Register("wait-go", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(AwaitSignal(c, str, "go"), func(s string) string { return in + s })
		})
		if err := SignalWithStart(h.ctx, h.e, w, "s1", "in:", "go", str, "first"); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, w.Erase())
		if p := h.wantStatus("s1", StatusDone); p.Output != `"in:first"` {
			t.Errorf("output %s", p.Output)
		}
		// A start of another workflow under that id fails, and its signal
		// is not stored either (one transaction).
		other := Register("other", str, str, nil)
		err := SignalWithStart(h.ctx, h.e, other, "s1", "", "late", str, "x")
		wantErrContains(t, err, task.Conflict, `"s1"`)
		if !errors.Is(err, ErrWorkflowMismatch) {
			t.Errorf("error %v is not ErrWorkflowMismatch", err)
		}
		sigs, err := h.e.Signals(h.ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(sigs, func(s SignalInfo) bool { return s.Name == "late" }) {
			t.Errorf("the refused start's signal was stored: %+v", sigs)
		}
		err = SignalWithStart(h.ctx, h.e, w, "s2", "", " ", str, "x")
		wantErrContains(t, err, task.InvalidInput, "empty signal name")
		if _, err := h.e.store.ReadRun(h.ctx, "s2"); err == nil {
			t.Errorf("a refused signalWithStart started its run")
		}
	})
}

// TestChildRoundTrips counts the statements of composed workflows (the
// costs docs/durable.md lists): starting children is one insert in the
// step's transaction, whatever their number; a parent that just started a
// fan-out suspends without reading its children; a child's completion is
// its usual statements (the parent's wake-up is its trigger); the resumed
// parent reads its children once and journals their outputs with its
// completion.
func TestChildRoundTrips(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ship := shipWorkflow(newCounter())
		fan := fanOut(ship)
		h.start(fan, "f1", "a,b,c")
		h.takeOps()
		h.poll(h.e, fan.Erase())
		suspend := []string{"await"}
		if driver == "postgres" {
			suspend = []string{"lock", "await", "await"} // the run, its unfinished children FOR SHARE, the suspension
		}
		// The first poll of the engine also probes for due runs, deadlines
		// and schedule ticks.
		want := append([]string{"probe", "claim", "children", "append"}, suspend...)
		if diff := cmp.Diff(want, h.takeOps()); diff != "" {
			t.Errorf("first attempt of a fan-out of 3 (-want +got):\n%s", diff)
		}
		h.drain(h.e, ship.Erase())
		h.takeOps()
		h.poll(h.e, fan.Erase())
		want = []string{"claim", "children.read", "complete"}
		if driver == "sqlite" {
			want = []string{"claim", "children.read", "append", "complete"} // SQLite: one transaction
		}
		if diff := cmp.Diff(want, h.takeOps()); diff != "" {
			t.Errorf("the woken parent (-want +got):\n%s", diff)
		}
		h.wantStatus("f1", StatusDone)
	})
}

// TestChildrenCarryTheirPerKeyKey: children of a workflow with a perKey
// limit store the key computed from their input, as started runs do, so
// the limit holds them too.
func TestChildrenCarryTheirPerKeyKey(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		ship := shipWorkflow(newCounter()).WithLimits(Limits{PerKey: 1}, func(in string) (string, error) { return in[:1], nil })
		fan := fanOut(ship)
		h.start(fan, "f1", "a1,a2,b1")
		h.poll(h.e, fan.Erase())
		for id, want := range map[string]string{"f1/a1": "a", "f1/a2": "a", "f1/b1": "b"} {
			if r := h.wantStatus(id, StatusWaiting); r.LimitKey != want {
				t.Errorf("child %s has limit key %q, want %q", id, r.LimitKey, want)
			}
		}
		h.drain(h.e, fan.Erase(), ship.Erase())
		if p := h.wantStatus("f1", StatusDone); p.Output != `"shipped:a1|shipped:a2|shipped:b1"` {
			t.Errorf("parent output %s", p.Output)
		}
	})
}
