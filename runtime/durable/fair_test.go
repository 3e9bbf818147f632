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
