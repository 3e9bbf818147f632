package storetest

import (
	"time"

	"skydurable/runtime/durable/store"
)

// The bulk action cases (store.BulkStore).
func init() { cases = append(cases, bulkCases...) }

// bulkRun inserts run id of workflow at at (a child of parent when not "")
// and takes it to status: parked waiting on a signal, running, failed (due
// again in an hour), dead or done, with lastError for a failure. Every run
// inserted before it is then not due at at, so the claim takes this one.
func (f *fixture) bulkRun(id, workflow, parent string, status store.Status, lastError string, at time.Time) {
	f.t.Helper()
	if parent != "" {
		if n, err := f.s.InsertChildren(f.ctx, f.d, parent, "", workflow, 1, []store.NewChild{{ID: id, Input: `1`}}, at); err != nil || n != 1 {
			f.t.Fatalf("InsertChildren(%s) = %d, %v", id, n, err)
		}
	} else {
		f.insert(id, workflow, 1, at)
	}
	c, ok, err := f.s.ClaimRun(f.ctx, []string{workflow}, at, Lease, "t-"+id, "worker")
	if err != nil || !ok || c.ID != id {
		f.t.Fatalf("ClaimRun to make %s %s = %q, %v, %v", id, status, c.ID, ok, err)
	}
	fence := store.Fence{RunID: id, Token: "t-" + id}
	switch status {
	case store.StatusWaiting:
		f.ok("Suspend", f.s.Suspend(f.ctx, fence, time.Time{}, "go", at))
	case store.StatusFailed:
		f.ok("Fail", f.s.Fail(f.ctx, fence, lastError, "", time.Hour, false, at))
	case store.StatusDead:
		f.ok("Fail", f.s.Fail(f.ctx, fence, lastError, "", 0, true, at))
	case store.StatusDone:
		f.ok("Complete", f.s.Complete(f.ctx, fence, nil, `"ok"`, at))
	}
	if got := f.run(id).Status; got != status {
		f.t.Fatalf("run %s is %s, want %s", id, got, status)
	}
}

// bulk applies op to every run bf selects, limit a batch, as the engine
// does, and returns how many it changed and how many batches it took.
func (f *fixture) bulk(op store.Op, bf store.BulkFilter, limit int, now time.Time) (changed, batches int) {
	f.t.Helper()
	from := store.Cursor{CreatedAt: bf.CreatedAfter}
	for {
		b, err := f.s.BulkAct(f.ctx, op, bf, from, limit, now)
		if err != nil {
			f.t.Fatalf("BulkAct(%s, %+v): %v", op, bf, err)
		}
		batches++
		changed += b.Changed
		if b.Selected > 0 && !(from.CreatedAt.Before(b.Last.CreatedAt) || from.CreatedAt.Equal(b.Last.CreatedAt) && from.ID < b.Last.ID) {
			f.t.Fatalf("BulkAct(%s) did not move its cursor on: from %+v to %+v", op, from, b.Last)
		}
		if b.Selected < limit {
			return changed, batches
		}
		from = b.Last
	}
}

// wantStatuses checks the status of each run.
func (f *fixture) wantStatuses(what string, want map[string]store.Status) {
	f.t.Helper()
	for id, st := range want {
		if got := f.run(id).Status; got != st {
			f.t.Errorf("%s: run %s is %s, want %s", what, id, got, st)
		}
	}
}

var bulkCases = []storeCase{
	{"BulkActionsSelectByFilterInBatches", func(f *fixture) {
		at := func(s int) time.Time { return T0.Add(time.Duration(s) * time.Second) }
		f.bulkRun("d1", "w", "", store.StatusDead, "Unavailable: provider down", at(1))
		f.bulkRun("d2", "w", "", store.StatusDead, "InvalidInput: bad card", at(2))
		f.bulkRun("d3", "x", "", store.StatusDead, "Unavailable: provider down", at(3))
		f.bulkRun("f1", "w", "", store.StatusFailed, "Unavailable: timeout", at(4))
		f.bulkRun("w1", "w", "", store.StatusWaiting, "", at(5))
		f.bulkRun("r1", "w", "", store.StatusRunning, "", at(6))
		f.bulkRun("ok", "w", "", store.StatusDone, "", at(7))
		f.bulkRun("p", "w", "", store.StatusWaiting, "", at(8))
		f.bulkRun("p/a", "w", "p", store.StatusDead, "boom", at(9))
		f.bulkRun("p/b", "w", "p", store.StatusFailed, "boom", at(10))

		for _, c := range []struct {
			f    store.BulkFilter
			want int64
		}{
			{store.BulkFilter{Status: store.StatusDead}, 4},
			{store.BulkFilter{Status: store.StatusDead, Workflow: "w"}, 3},
			{store.BulkFilter{Status: store.StatusDead, ErrorContains: "provider down"}, 2},
			{store.BulkFilter{Status: store.StatusDead, ErrorContains: "Provider"}, 0}, // case-sensitive
			{store.BulkFilter{Status: store.StatusDead, Parent: "p"}, 1},
			{store.BulkFilter{Status: store.StatusFailed, Parent: "p", Workflow: "x"}, 0},
			{store.BulkFilter{Status: store.StatusDead, CreatedAfter: at(2), CreatedBefore: at(3)}, 1},
			{store.BulkFilter{Status: store.StatusWaiting}, 2},
		} {
			if n, err := f.s.CountRuns(f.ctx, c.f); err != nil || n != c.want {
				f.t.Errorf("CountRuns(%+v) = %d, %v; want %d", c.f, n, err, c.want)
			}
		}

		now := T0.Add(time.Minute)
		// Retry: by parent, by workflow and error, then every dead run one
		// a batch.
		if n, _ := f.bulk(store.OpRetry, store.BulkFilter{Status: store.StatusDead, Parent: "p"}, 10, now); n != 1 {
			f.t.Errorf("retry of p's dead children changed %d runs, want 1", n)
		}
		if n, _ := f.bulk(store.OpRetry, store.BulkFilter{Status: store.StatusDead, Workflow: "w", ErrorContains: "provider"}, 10, now); n != 1 {
			f.t.Errorf("retry of w's dead runs with provider in their error changed %d, want 1", n)
		}
		f.wantStatuses("after two retries", map[string]store.Status{"p/a": store.StatusWaiting, "d1": store.StatusWaiting, "d2": store.StatusDead, "d3": store.StatusDead})
		if n, batches := f.bulk(store.OpRetry, store.BulkFilter{Status: store.StatusDead}, 1, now); n != 2 || batches != 3 {
			f.t.Errorf("retry of every dead run one a batch changed %d in %d batches, want 2 in 3", n, batches)
		}
		for _, id := range []string{"d1", "d2", "d3", "p/a"} {
			r := f.step(store.OpRetry, id, store.StatusDead, store.StatusWaiting)
			if r.Attempts != 0 || !r.WakeAt.Equal(now) || !r.ClaimedAt.IsZero() {
				f.t.Errorf("retried run %s: attempts %d, due %v, claimed %v; want 0, due now, free", id, r.Attempts, r.WakeAt, r.ClaimedAt)
			}
		}
		// A status the action does not take changes nothing.
		if n, _ := f.bulk(store.OpRetry, store.BulkFilter{Status: store.StatusWaiting, Workflow: "w"}, 10, now); n != 0 {
			f.t.Errorf("retry of waiting runs changed %d", n)
		}

		// Release: the running run, as ReleaseRun (no error: waiting).
		if n, _ := f.bulk(store.OpRelease, store.BulkFilter{Status: store.StatusRunning, Parent: "p"}, 10, now); n != 0 {
			f.t.Errorf("release of p's running children changed %d, want 0", n)
		}
		if n, _ := f.bulk(store.OpRelease, store.BulkFilter{Status: store.StatusRunning, Workflow: "x"}, 10, now); n != 0 {
			f.t.Errorf("release of x's running runs changed %d, want 0", n)
		}
		if n, _ := f.bulk(store.OpRelease, store.BulkFilter{Status: store.StatusRunning}, 10, now); n != 1 {
			f.t.Errorf("release of the running runs changed %d, want 1", n)
		}
		if r := f.step(store.OpRelease, "r1", store.StatusRunning, store.StatusWaiting); r.Attempts != 1 || !r.WakeAt.Equal(now) || !r.ClaimedAt.IsZero() {
			f.t.Errorf("released run: attempts %d, due %v, claimed %v; want its attempt kept, due now, free", r.Attempts, r.WakeAt, r.ClaimedAt)
		}

		// Cancel: a failed child by its parent, w's failed runs, then the
		// parent by its creation time, with its unfinished child.
		if n, _ := f.bulk(store.OpCancel, store.BulkFilter{Status: store.StatusFailed, Parent: "p"}, 10, now); n != 1 {
			f.t.Errorf("cancel of p's failed children changed %d, want 1", n)
		}
		if n, _ := f.bulk(store.OpCancel, store.BulkFilter{Status: store.StatusFailed, Workflow: "w"}, 10, now); n != 1 {
			f.t.Errorf("cancel of w's failed runs changed %d, want 1", n)
		}
		if n, _ := f.bulk(store.OpCancel, store.BulkFilter{Status: store.StatusWaiting, CreatedAfter: at(8), CreatedBefore: at(9)}, 10, now); n != 1 {
			f.t.Errorf("cancel of the waiting runs created in [8s, 9s) changed %d, want 1", n)
		}
		f.step(store.OpCancel, "p", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "p/a", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "p/b", store.StatusFailed, store.StatusCancelled)
		f.step(store.OpCancel, "f1", store.StatusFailed, store.StatusCancelled)
		f.wantStatuses("at the end", map[string]store.Status{"w1": store.StatusWaiting, "ok": store.StatusDone, "d1": store.StatusWaiting, "r1": store.StatusWaiting})
		if n, err := f.s.CountRuns(f.ctx, store.BulkFilter{Status: store.StatusCancelled}); err != nil || n != 4 {
			f.t.Errorf("CountRuns(cancelled) = %d, %v; want 4", n, err)
		}
		// Each run a bulk action changed records it, as the single-run
		// action does, by the operator.
		for id, kind := range map[string]store.EventKind{"d2": store.EventRetried, "r1": store.EventReleased, "f1": store.EventCancelled} {
			events, err := f.s.ReadHistory(f.ctx, id)
			f.ok("ReadHistory", err)
			if len(events) == 0 || events[len(events)-1].Kind != kind || events[len(events)-1].Actor != store.ActorOf(f.ctx) {
				f.t.Errorf("history of %s = %+v; want it to end with %s by %s", id, events, kind, store.ActorOf(f.ctx))
			}
		}
		if events, err := f.s.ReadHistory(f.ctx, "w1"); err != nil || len(events) != 1 || events[0].Kind != store.EventSuspended {
			f.t.Errorf("history of w1, which no bulk action changed = %+v, %v; want only its suspension", events, err)
		}
	}},
}
