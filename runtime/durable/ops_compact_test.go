package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// stepThenSignal journals step "a", then waits for signal "go", then
// journals step "b"; with input "fail" step "b" always fails.
func stepThenSignal(cnt *counter) Def[string, string] {
	return RegisterWith(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Minute}, "live", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Step(c, str, "a", cnt.effect("a", "A")), func(a string) task.Task[string] {
			return task.AndThen(AwaitSignal(c, str, "go"), func(g string) task.Task[string] {
				return Step(c, str, "b", task.From(func(context.Context) (string, error) {
					cnt.hit("b")
					if in == "fail" {
						return "", task.New(task.Unavailable, "b is down")
					}
					return a + g, nil
				}))
			})
		})
	})
}

// TestCompactOlderThan compacts finished runs past the retention in
// batches, keeps their rows, and never touches a live run (waiting,
// running, failed, dead) however old, nor a recent finished run.
func TestCompactOlderThan(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := stepThenSignal(cnt)
		defs := []Workflow{w.Erase()}

		// Five old done runs, one old cancelled run, each with a journal
		// and a signal row.
		for i := range 5 {
			id := fmt.Sprintf("done-%d", i)
			h.start(w, id, "ok")
			h.signal(id, "go", `"!"`)
		}
		h.start(w, "cancelled", "ok")
		h.drain(h.e, defs...)
		if err := h.e.Cancel(h.ctx, "cancelled"); err != nil {
			t.Fatal(err)
		}
		// Old live runs: waiting for a signal, failed in backoff, dead, and
		// one running (claimed by a worker that is mid-step).
		for _, id := range []string{"waiting", "running", "failed", "dead"} {
			input := "ok"
			if id == "failed" || id == "dead" {
				input = "fail"
			}
			h.start(w, id, input)
		}
		h.drain(h.e, defs...)
		h.signal("failed", "go", `"!"`)
		h.signal("dead", "go", `"!"`)
		h.drain(h.e, defs...) // both fail once: failed, due in a minute
		h.clock.Advance(2 * time.Minute)
		worked, err := h.e.PollWith(h.ctx, defs, PollOptions{MaxRuns: 2})
		if err != nil || !worked {
			t.Fatalf("poll: %v %v", worked, err)
		}
		h.wantStatus("failed", StatusDead) // MaxAttempts 2: both are dead now
		if err := h.e.Retry(h.ctx, "failed"); err != nil {
			t.Fatal(err)
		}
		if worked, err := h.e.PollWith(h.ctx, defs, PollOptions{MaxRuns: 1}); err != nil || !worked {
			t.Fatalf("poll: %v %v", worked, err)
		}
		h.wantStatus("failed", StatusFailed)
		h.wantStatus("dead", StatusDead)
		h.signal("running", "go", `"!"`)
		if _, ok, err := h.e.store.ClaimRun(h.ctx, []string{"live"}, h.clock.Now(), time.Hour, "tok", "busy-worker"); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		h.wantStatus("running", StatusRunning)
		h.wantStatus("waiting", StatusWaiting)

		// Much later: one recent done run, inside the retention, finished by
		// a worker whose lease is long enough not to reclaim "running".
		h.clock.Advance(48 * time.Hour)
		h.start(w, "recent", "ok")
		h.signal("recent", "go", `"!"`)
		h.drain(h.engine("patient", func(o *Options) { o.Lease, o.Heartbeat = 100*time.Hour, -1 }), defs...)
		h.wantStatus("recent", StatusDone)

		before := map[string]int{}
		for _, id := range []string{"waiting", "running", "failed", "dead", "recent"} {
			_, j := h.describe(id)
			before[id] = len(j)
		}
		var batches []CompactBatch
		res, err := h.e.CompactOlderThan(h.ctx, 24*time.Hour, CompactOptions{BatchSize: 4, OnBatch: func(b CompactBatch) { batches = append(batches, b) }})
		if err != nil {
			t.Fatal(err)
		}
		// 6 finished old runs; each had 3 journal rows (or 1 for the
		// cancelled one) and 1 signal row (0 for the cancelled one).
		if res.Runs != 6 || res.Batches != 2 || len(batches) != 2 || batches[0].Runs != 4 || batches[1].Runs != 2 || res.Rows != 5*4+1 {
			t.Fatalf("compaction: %+v, batches %+v; want 6 runs in batches of 4 and 2, 21 rows", res, batches)
		}
		if res.LongestBatch <= 0 || res.LongestBatch < batches[1].Took {
			t.Errorf("longest batch %s is not the longest of %+v", res.LongestBatch, batches)
		}
		for _, id := range []string{"done-0", "done-4", "cancelled"} {
			r, j := h.describe(id)
			sigs, err := h.e.Signals(h.ctx, id)
			if err != nil || len(j) != 0 || len(sigs) != 0 || r.CompactedAt.IsZero() {
				t.Errorf("%s after compaction: journal %d, signals %d (%v), compacted_at %v; want all gone and stamped", id, len(j), len(sigs), err, r.CompactedAt)
			}
		}
		if r, _ := h.describe("done-0"); r.Status != StatusDone || r.Output != `"A!"` || r.Input != `"ok"` {
			t.Errorf("a compacted run lost its row: %+v", r)
		}
		for id, n := range before {
			r, j := h.describe(id)
			if len(j) != n || !r.CompactedAt.IsZero() {
				t.Errorf("%s (%s) was touched: journal %d → %d, compacted_at %v", id, r.Status, n, len(j), r.CompactedAt)
			}
		}
		h.wantStatus("running", StatusRunning)

		// Again: nothing left to do.
		if res, err := h.e.CompactOlderThan(h.ctx, 24*time.Hour, CompactOptions{}); err != nil || res.Runs != 0 || res.Batches != 0 {
			t.Errorf("second compaction: %+v, %v; want nothing", res, err)
		}
		_, err = h.e.CompactOlderThan(h.ctx, -time.Hour, CompactOptions{})
		wantErrContains(t, err, task.InvalidInput, "-1h0m0s", "negative")
	})
}

// TestListRunsFilters filters by status and workflow in SQL, newest first,
// and rejects an unknown status.
func TestListRunsFilters(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		a := Register("alpha", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		b := Register("beta", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		for i := range 3 {
			h.start(a, fmt.Sprintf("a%d", i), "x")
			h.clock.Advance(time.Second)
			h.start(b, fmt.Sprintf("b%d", i), "x")
			h.clock.Advance(time.Second)
		}
		if !h.poll(h.e, a.Erase()) { // the most overdue alpha run: a0
			t.Fatal("no alpha run claimed")
		}
		ids := func(f ListFilter) string {
			runs, err := h.e.ListRuns(h.ctx, f)
			if err != nil {
				t.Fatalf("ListRuns(%+v): %v", f, err)
			}
			out := ""
			for _, r := range runs {
				out += r.ID + " "
			}
			return out
		}
		for _, c := range []struct {
			f    ListFilter
			want string
		}{
			{ListFilter{}, "b2 a2 b1 a1 b0 a0 "},
			{ListFilter{Limit: 2}, "b2 a2 "},
			{ListFilter{Workflow: "alpha"}, "a2 a1 a0 "},
			{ListFilter{Status: StatusDone}, "a0 "},
			{ListFilter{Status: StatusWaiting, Workflow: "alpha"}, "a2 a1 "},
			{ListFilter{Workflow: "gamma"}, ""},
		} {
			if got := ids(c.f); got != c.want {
				t.Errorf("ListRuns(%+v) = %q, want %q", c.f, got, c.want)
			}
		}
		_, err := h.e.ListRuns(h.ctx, ListFilter{Status: "sleeping"})
		wantErrContains(t, err, task.InvalidInput, `"sleeping"`, "waiting")
	})
}
