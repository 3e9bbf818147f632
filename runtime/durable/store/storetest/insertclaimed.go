package storetest

import (
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

// The cases of InsertClaimedRun (durable.RunNow): a start that is also the
// run's first claim.
func init() {
	cases = append(cases,
		storeCase{"InsertClaimedRunLeavesTheRunAsAClaimWould", func(f *fixture) {
			const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
			r := store.NewRun{ID: "r", Workflow: "w", Version: 2, Input: `{"id":"r"}`, TraceContext: tp, Priority: 3}
			c, inserted, existing, err := f.s.InsertClaimedRun(f.ctx, r, T0, Lease, "A", "worker-A")
			if err != nil || !inserted || existing != "" {
				f.t.Fatalf("InsertClaimedRun = %v, %q, %v; want inserted", inserted, existing, err)
			}
			want := store.Claimed{ID: "r", Workflow: "w", Version: 2, Input: `{"id":"r"}`, Attempts: 1, Now: T0, TraceContext: tp, JournalRead: true}
			if diff := cmp.Diff(want, c); diff != "" {
				f.t.Errorf("the claimed run returned (-want +got):\n%s", diff)
			}
			// A start and its claim, in one statement.
			run := f.step(store.OpClaim, "r", store.StatusWaiting, store.StatusRunning)
			if run.Attempts != 1 || run.ClaimedBy != "worker-A" || !run.ClaimedAt.Equal(T0) || !run.WakeAt.Equal(T0.Add(Lease)) ||
				!run.CreatedAt.Equal(T0) || run.LastError != "" || run.Priority != 3 || run.Input != `{"id":"r"}` {
				f.t.Errorf("run inserted claimed: %+v; want attempt 1 by worker-A at T0, due at the lease's end", run)
			}
			// A first claim is recorded nowhere.
			f.wantHistory("r", nil)
			// The lease holds against claims until it ends.
			f.claim(T0.Add(Lease-time.Second), "B", "")
			// The fence is the token the insert took.
			f.wantLeaseLost("AppendEntry with another token", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "B"}, JournalSteps(1)[0], T0))
			steps := JournalSteps(3)
			for i, je := range steps[:2] {
				f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, je, T0.Add(time.Duration(i+1)*time.Second)))
			}
			f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: "A"}, &steps[2], `"out"`, T0.Add(3*time.Second)))
			if run := f.step(store.OpComplete, "r", store.StatusRunning, store.StatusDone); run.Output != `"out"` {
				f.t.Errorf("output %q, want \"out\"", run.Output)
			}
			if diff := cmp.Diff(steps, f.journal("r"), IgnoreTimes); diff != "" {
				f.t.Errorf("journal (-want +got):\n%s", diff)
			}
		}},
		storeCase{"InsertClaimedRunOfAnExistingIdChangesNothing", func(f *fixture) {
			f.insert("r", "w", 1, T0)
			for _, workflow := range []string{"w", "other"} {
				c, inserted, existing, err := f.s.InsertClaimedRun(f.ctx, store.NewRun{ID: "r", Workflow: workflow, Version: 1, Input: `1`},
					T0.Add(time.Second), Lease, "A", "worker-A")
				if err != nil || inserted || existing != "w" || c.ID != "" {
					f.t.Fatalf("InsertClaimedRun(%s) of an existing id = %+v, %v, %q, %v; want nothing claimed, existing workflow w", workflow, c, inserted, existing, err)
				}
			}
			if run := f.run("r"); run.Status != store.StatusWaiting || run.Attempts != 0 || run.ClaimedBy != "" || run.Input != `{"id":"r"}` {
				f.t.Errorf("the existing run changed: %+v", run)
			}
			// And a start of an id inserted claimed finds it.
			if _, inserted, _, err := f.s.InsertClaimedRun(f.ctx, store.NewRun{ID: "s", Workflow: "w", Version: 1, Input: `1`}, T0, Lease, "A", "worker-A"); err != nil || !inserted {
				f.t.Fatalf("InsertClaimedRun(s) = %v, %v", inserted, err)
			}
			if inserted, existing, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "s", Workflow: "x", Version: 1, Input: `2`}, T0); err != nil || inserted || existing != "w" {
				f.t.Errorf("InsertRun of an id inserted claimed = %v, %q, %v; want not inserted, existing workflow w", inserted, existing, err)
			}
		}},
		storeCase{"InsertClaimedRunIsReclaimedAfterItsLease", func(f *fixture) {
			if _, inserted, _, err := f.s.InsertClaimedRun(f.ctx, store.NewRun{ID: "r", Workflow: "w", Version: 1, Input: `1`}, T0, Lease, "A", "worker-A"); err != nil || !inserted {
				f.t.Fatalf("InsertClaimedRun = %v, %v", inserted, err)
			}
			first := JournalSteps(1)
			f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, first[0], T0.Add(time.Second)))
			// Its worker is gone: once the lease the step renewed ends, a
			// claim takes the run over with its journal.
			at := T0.Add(time.Second + Lease + time.Minute)
			c := f.claim(at, "B", "r")
			f.step(store.OpClaim, "r", store.StatusRunning, store.StatusRunning)
			j := c.Journal
			if !c.JournalRead {
				j = f.journal("r")
			}
			if c.Attempts != 2 || !cmp.Equal(first, j, IgnoreTimes) {
				f.t.Errorf("reclaim: attempt %d, journal %+v; want attempt 2 with the step", c.Attempts, j)
			}
			f.wantHistory("r", []store.Event{{Pos: 1, At: at, Kind: store.EventReclaimed, Actor: "worker-B", Attempt: 2, Detail: "worker-A"}})
			f.wantLeaseLost("the gone worker's append", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, JournalSteps(2)[1], at))
		}},
	)
}
