package durable

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// PollWith with MaxRuns > 1 completes a run and claims the next in one
// statement on PostgreSQL (completeAndClaim).

// TestPollWithChainsCompletionAndClaim: three one-step runs in one call:
// every run done, with its step journalled; on PostgreSQL one statement per
// run after the first claim, and the completion whose claim finds nothing
// due ends the call without another claim.
func TestPollWithChainsCompletionAndClaim(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		w := Register("chain", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(Step(c, str, "a", task.Succeed("A")), func(a string) string { return in + a })
		})
		for _, id := range []string{"r1", "r2", "r3"} {
			h.start(w, id, id)
		}
		h.takeOps()
		worked, err := h.e.PollWith(h.ctx, []Workflow{w.Erase()}, PollOptions{MaxRuns: 10})
		if !worked || err != nil {
			t.Fatalf("PollWith = %v, %v", worked, err)
		}
		ops := h.takeOps()
		for _, id := range []string{"r1", "r2", "r3"} {
			r, j := h.describe(id)
			if r.Status != StatusDone || r.Output != `"`+id+`A"` || strings.Join(stepIDs(j), ",") != "a" {
				t.Errorf("%s: %s %s journal %v; want done %q, [a]", id, r.Status, r.Output, stepIDs(j), id+"A")
			}
		}
		// The first poll of an engine also probes for due runs, runs past
		// their deadline and due schedule ticks (Engine.background).
		want := []string{"probe", "claim", "complete+claim", "complete+claim", "complete+claim"}
		if driver == "sqlite" {
			want = []string{"probe", "claim", "append", "complete", "claim", "append", "complete", "claim", "append", "complete", "claim"}
		}
		if diff := cmp.Diff(want, ops); diff != "" {
			t.Errorf("statements (-want +got):\n%s", diff)
		}
	})
}

// TestPollWithChainAfterALostLease: the completion of a run cancelled while
// its body ran is refused, and the same statement's claim still hands the
// worker the next run, which completes.
func TestPollWithChainAfterALostLease(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		w := Register("chainlost", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", task.Succeed("A")), func(a string) task.Task[string] {
				if in != "cancel me" {
					return task.Succeed(a)
				}
				return task.From(func(ctx context.Context) (string, error) { return a, h.e.Cancel(ctx, c.RunID()) })
			})
		})
		h.start(w, "first", "cancel me")
		h.start(w, "second", "x")
		worked, err := h.e.PollWith(h.ctx, []Workflow{w.Erase()}, PollOptions{MaxRuns: 10})
		if !worked || err != nil {
			t.Fatalf("PollWith = %v, %v", worked, err)
		}
		h.wantStatus("first", StatusCancelled)
		if r := h.wantStatus("second", StatusDone); r.Output != `"A"` {
			t.Errorf("second's output %s, want \"A\"", r.Output)
		}
		wantContains(t, h.logText(), "durable lease lost", "run=first")
	})
}
