package durable

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestKeysTakeTurns: a workflow with a perKey limit claims its runs in turns
// across keys. With 1,000 runs of key A waiting and one of key B started
// after them, B's run is among the next pollers × MaxRuns + 1 claims (here
// 1 × 1 + 1: the second), where before it waited for all of A's; and runs
// of three keys started key after key run A, B, C, A, B, C, ...
func TestKeysTakeTurns(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var mu sync.Mutex
		var order []string
		def := RegisterWithLimits(Limits{PerKey: 5}, func(in string) (string, error) { return in[:1], nil }, DefaultRetryPolicy, "fair", str, str,
			func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "s", task.From(func(context.Context) (string, error) {
					mu.Lock()
					order = append(order, in)
					mu.Unlock()
					return in, nil
				}))
			})
		wf := def.Erase()
		for i := range 1000 {
			h.start(def, fmt.Sprint("A-", i), fmt.Sprint("A", i))
		}
		h.clock.Advance(time.Second)
		h.start(def, "B-0", "B0")
		for range 2 {
			h.clock.Advance(time.Millisecond)
			h.poll(h.e, wf)
		}
		if want := []string{"A0", "B0"}; !slices.Equal(order, want) {
			t.Errorf("the first two runs = %v, want %v (B's run second, not after 1,000 of A's)", order, want)
		}
		for h.poll(h.e, wf) {
		}
		if len(order) != 1001 {
			t.Fatalf("%d runs done, want 1001", len(order))
		}

		order = nil
		for _, k := range []string{"C", "D", "E"} {
			for i := range 3 {
				h.clock.Advance(time.Millisecond)
				h.start(def, fmt.Sprint(k, "-", i), fmt.Sprint(k, i))
			}
		}
		for range 9 {
			h.clock.Advance(time.Millisecond)
			h.poll(h.e, wf)
		}
		if want := []string{"C0", "D0", "E0", "C1", "D1", "E1", "C2", "D2", "E2"}; !slices.Equal(order, want) {
			t.Errorf("claim order %v, want the keys taking turns %v", order, want)
		}
	})
}

// TestAQueuedRunLeavesItsKeysQueue: a run queued behind its key's head that
// ends without being claimed (cancelled, or timed out while it queued)
// leaves the queue: it is no longer key_queued, and the key's other runs
// still run in turn when the head is done (the trigger of migration 0014,
// an AFTER trigger on both stores since PostgreSQL's 0018).
func TestAQueuedRunLeavesItsKeysQueue(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var order []string
		def := RegisterWithLimits(Limits{PerKey: 1}, func(in string) (string, error) { return in[:1], nil }, DefaultRetryPolicy, "queued", str, str,
			func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "s", task.From(func(context.Context) (string, error) {
					order = append(order, in)
					return in, nil
				}))
			})
		wf := def.Erase()
		h.start(def, "K-0", "K0")
		h.clock.Advance(time.Millisecond)
		h.start(def, "K-1", "K1")
		h.clock.Advance(time.Millisecond)
		if err := StartWith(h.ctx, h.e, StartOptions{Deadline: time.Minute}, def, "K-2", "K2"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Millisecond)
		h.start(def, "K-3", "K3")
		for _, id := range []string{"K-1", "K-2", "K-3"} {
			if r, _ := h.describe(id); !r.KeyQueued {
				t.Fatalf("%s is not queued behind its key's head", id)
			}
		}
		if err := h.e.Cancel(h.ctx, "K-1"); err != nil {
			t.Fatal(err)
		}
		h.clock.Advance(time.Minute)
		h.drain(h.e, wf)
		for id, want := range map[string]Status{"K-1": StatusCancelled, "K-2": StatusTimedOut} {
			if r := h.wantStatus(id, want); r.KeyQueued {
				t.Errorf("%s is %s and still key_queued", id, want)
			}
		}
		h.wantStatus("K-3", StatusDone)
		if want := []string{"K0", "K3"}; !slices.Equal(order, want) {
			t.Errorf("runs done %v, want %v", order, want)
		}
	})
}
