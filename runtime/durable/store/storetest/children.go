package storetest

import (
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

// The cases of composed workflows (store.Composer): child runs, the wake-up
// of a parent by its children, events.
func init() { cases = append(cases, childCases...) }

// parentWithChildren inserts run "p" and claims it at T0 (token "P"), then
// inserts its children (due a second later, so the claim took the parent)
// in group (none when ""); it returns the parent's fence.
func (f *fixture) parentWithChildren(group string, keys ...string) store.Fence {
	f.t.Helper()
	f.insert("p", "w", 1, T0)
	f.claim(T0, "P", "p")
	news := make([]store.NewChild, len(keys))
	for i, k := range keys {
		news[i] = store.NewChild{ID: "p/" + k, Input: `{"k":"` + k + `"}`}
	}
	n, err := f.s.InsertChildren(f.ctx, f.d, "p", group, "w", 1, news, T0.Add(time.Second))
	if err != nil || n != int64(len(keys)) {
		f.t.Fatalf("InsertChildren = %d, %v; want %d inserted", n, err, len(keys))
	}
	return store.Fence{RunID: "p", Token: "P"}
}

// finish claims the child id (the only due run of "w" at now) and completes
// it (or, when dead, fails it for good).
func (f *fixture) finish(id string, now time.Time, dead bool) {
	f.t.Helper()
	f.claim(now, "C"+id, id)
	fence := store.Fence{RunID: id, Token: "C" + id}
	if dead {
		f.ok("Fail "+id, f.s.Fail(f.ctx, fence, "boom in "+id, "", time.Second, true, now))
		return
	}
	f.ok("Complete "+id, f.s.Complete(f.ctx, fence, nil, `"out-`+id+`"`, now))
}

// wantParked checks that the parent waits for marker with no wake time.
func (f *fixture) wantParked(marker string) {
	f.t.Helper()
	r := f.run("p")
	if r.Status != store.StatusWaiting || !r.WakeAt.IsZero() || r.WaitingSignal != marker {
		f.t.Fatalf("parent: %s, due %v, waiting for %q; want waiting with no wake time for %q", r.Status, r.WakeAt, r.WaitingSignal, marker)
	}
}

// wantDue checks that the parent is waiting and due at at.
func (f *fixture) wantDue(at time.Time) {
	f.t.Helper()
	r := f.run("p")
	if r.Status != store.StatusWaiting || !r.WakeAt.Equal(at) {
		f.t.Fatalf("parent: %s, due %v; want waiting, due at %v", r.Status, r.WakeAt, at)
	}
}

var childCases = []storeCase{
	{"ChildrenAreInsertedOnceWithTheirParent", func(f *fixture) {
		f.parentWithChildren("g", "a", "b", "c")
		again, err := f.s.InsertChildren(f.ctx, f.d, "p", "g", "w", 1, []store.NewChild{{ID: "p/a", Input: `1`}, {ID: "p/d", Input: `2`}}, T0.Add(2*time.Second))
		if err != nil || again != 1 {
			f.t.Fatalf("InsertChildren of one existing and one new child = %d, %v; want 1 inserted", again, err)
		}
		if r := f.run("p/a"); r.ParentID != "p" || r.Input != `{"k":"a"}` || r.Status != store.StatusWaiting || !r.WakeAt.Equal(T0.Add(time.Second)) {
			f.t.Errorf("child p/a: %+v; want parent p, its first input, waiting and due at its start", r)
		}
		if r := f.run("p"); r.ParentID != "" {
			f.t.Errorf("the parent's own parent is %q, want none", r.ParentID)
		}
		kids, err := f.s.ListRuns(f.ctx, store.ListFilter{Parent: "p", Limit: 10})
		f.ok("ListRuns by parent", err)
		var ids []string
		for _, k := range kids {
			ids = append(ids, k.ID)
		}
		if diff := cmp.Diff([]string{"p/d", "p/c", "p/b", "p/a"}, ids); diff != "" {
			f.t.Errorf("children of p, newest first (-want +got):\n%s", diff)
		}
		done, err := f.s.ListRuns(f.ctx, store.ListFilter{Parent: "p", Status: store.StatusRunning, Limit: 10})
		if err != nil || len(done) != 0 {
			f.t.Errorf("running children of p = %v, %v; want none", done, err)
		}
		states, err := f.s.ReadChildren(f.ctx, []string{"p/b", "p/a", "p/nope"})
		f.ok("ReadChildren", err)
		if len(states) != 2 {
			f.t.Fatalf("ReadChildren of two children and an unknown id = %+v; want the two", states)
		}
		for _, st := range states {
			if st.ParentID != "p" || st.Workflow != "w" || st.Status != store.StatusWaiting || st.Finished() {
				f.t.Errorf("child state %+v", st)
			}
		}
	}},
	{"AChildsCompletionWakesItsParkedParent", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		w := store.ChildWait{ChildID: "p/a"}
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, w, T0.Add(time.Second)))
		f.wantParked("sky:child:p/a")
		at := T0.Add(5 * time.Second)
		f.finish("p/a", at, false)
		f.wantDue(at)
		f.claim(at, "P2", "p")
	}},
	{"AwaitingAFinishedChildIsDueAtOnce", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		// The child finishes while the parent still runs: its wake-up finds
		// nothing parked, so the parent's suspension must see it.
		f.finish("p/a", T0.Add(2*time.Second), false)
		at := T0.Add(3 * time.Second)
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{ChildID: "p/a"}, at))
		f.wantDue(at)
	}},
	{"AwaitChildrenIsFenced", func(f *fixture) {
		f.parentWithChildren("", "a")
		f.wantLeaseLost("AwaitChildren with a stale token", f.s.AwaitChildren(f.ctx, store.Fence{RunID: "p", Token: "stale"}, store.ChildWait{ChildID: "p/a"}, T0))
		if r := f.run("p"); r.Status != store.StatusRunning {
			f.t.Errorf("after a fenced-out AwaitChildren the parent is %s, want still running", r.Status)
		}
	}},
	{"AGroupWakesItsParentWhenTheLastChildIsDone", func(f *fixture) {
		fence := f.parentWithChildren("g", "a", "b")
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{Group: "g"}, T0.Add(time.Second)))
		f.wantParked("sky:all:g")
		f.finish("p/a", T0.Add(2*time.Second), false)
		f.wantParked("sky:all:g")
		last := T0.Add(3 * time.Second)
		f.finish("p/b", last, false)
		f.wantDue(last)
	}},
	{"ADeadChildOfAGroupWakesItsParentAtOnce", func(f *fixture) {
		fence := f.parentWithChildren("g", "a", "b")
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{Group: "g"}, T0.Add(time.Second)))
		at := T0.Add(2 * time.Second)
		f.finish("p/a", at, true)
		f.wantDue(at)
	}},
	{"ACancelledChildWakesItsParent", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{ChildID: "p/a"}, T0.Add(time.Second)))
		at := T0.Add(4 * time.Second)
		ok, err := f.s.CancelRun(f.ctx, "p/a", at)
		if err != nil || !ok {
			f.t.Fatalf("CancelRun = %v, %v", ok, err)
		}
		f.wantDue(at)
	}},
	{"ACompletionThatClaimsWakesTheParentToo", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{ChildID: "p/a"}, T0.Add(time.Second)))
		at := T0.Add(5 * time.Second)
		f.claim(at, "C", "p/a")
		c, ok, done, err := f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "p/a", Token: "C"}, nil, `"x"`, at,
			store.NextClaim{Names: []string{"w"}, Lease: Lease, Token: "P2", Worker: "worker-P2"})
		if err != nil || done != nil || (ok && c.ID != "p") {
			f.t.Fatalf("CompleteAndClaim = %+v, %v, %v, %v; want the child done (and nothing or the woken parent claimed)", c, ok, done, err)
		}
		// On PostgreSQL the claim of the same statement reads the snapshot
		// from before the child's trigger woke the parent: it is due after.
		if !ok {
			f.wantDue(at)
		}
	}},
	{"AnotherChildDoesNotWakeAParentAwaitingOne", func(f *fixture) {
		fence := f.parentWithChildren("", "a", "b")
		f.ok("AwaitChildren", f.s.AwaitChildren(f.ctx, fence, store.ChildWait{ChildID: "p/b"}, T0.Add(time.Second)))
		f.claim(T0.Add(2*time.Second), "Ca", "p/a")
		f.ok("Complete p/a", f.s.Complete(f.ctx, store.Fence{RunID: "p/a", Token: "Ca"}, nil, `"x"`, T0.Add(2*time.Second)))
		f.wantParked("sky:child:p/b")
	}},
	{"EventsKeepTheLatestValuePerKey", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		if _, found, err := f.s.GetEvent(f.ctx, "r", "progress"); err != nil || found {
			f.t.Fatalf("GetEvent before any = %v, %v; want not found", found, err)
		}
		f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "r", "progress", `10`, T0))
		f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "r", "progress", `50`, T0.Add(time.Second)))
		f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "r", "stage", `"pack"`, T0))
		for key, want := range map[string]string{"progress": `50`, "stage": `"pack"`} {
			v, found, err := f.s.GetEvent(f.ctx, "r", key)
			if err != nil || !found || v != want {
				f.t.Errorf("GetEvent(%s) = %q, %v, %v; want %s", key, v, found, err, want)
			}
		}
		if _, found, _ := f.s.GetEvent(f.ctx, "other", "progress"); found {
			f.t.Errorf("another run's event was found")
		}
	}},
}
