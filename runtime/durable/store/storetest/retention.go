package storetest

import (
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, retentionCases...) }

// orphans lists the orphan signals as "run/name" (ListOrphanSignals).
func (f *fixture) orphans(limit int) []string {
	f.t.Helper()
	found, err := f.s.ListOrphanSignals(f.ctx, limit, store.Scope{})
	f.ok("ListOrphanSignals", err)
	out := []string{}
	for _, o := range found {
		out = append(out, o.RunID+"/"+o.Name)
	}
	return out
}

// retentionCases pin the retention work's store operations: one turn per
// period, and the orphan signals listed and expired.
var retentionCases = []storeCase{
	{"TakeTurnGivesOneTurnPerPeriod", func(f *fixture) {
		take := func(job string, at time.Time) bool {
			f.t.Helper()
			ok, err := f.s.TakeTurn(f.ctx, job, time.Minute, at)
			f.ok("TakeTurn", err)
			return ok
		}
		got := []bool{
			take("retention", T0),                      // the first turn ever
			take("retention", T0.Add(time.Second)),     // taken: next at T0+1m
			take("other", T0.Add(time.Second)),         // another job has its own turns
			take("retention", T0.Add(time.Minute)),     // due again
			take("retention", T0.Add(90*time.Second)),  // taken at T0+1m: next at T0+2m
			take("retention", T0.Add(121*time.Second)), // due
		}
		if want := []bool{true, false, true, true, false, true}; !cmp.Equal(got, want) {
			f.t.Errorf("TakeTurn over time = %v, want %v", got, want)
		}
	}},
	{"OrphanSignalsAreListedAndExpired", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		put := func(run, name string, at time.Time) {
			f.t.Helper()
			stored, err := f.s.PutSignal(f.ctx, run, name, `"x"`, "", at)
			f.ok("PutSignal", err)
			if !stored {
				f.t.Fatalf("PutSignal(%s, %s) was not stored", run, name)
			}
		}
		put("r", "go", T0)                          // its run exists: not an orphan
		put("typo", "go", T0.Add(time.Second))      // never started
		put("later", "go", T0.Add(2*time.Second))   // its run starts after it
		put("typo", "stop", T0.Add(3*time.Second))  // never started
		put("fresh", "go", T0.Add(10*24*time.Hour)) // recent
		if got, want := f.orphans(10), []string{"typo/go", "later/go", "typo/stop", "fresh/go"}; !cmp.Equal(got, want) {
			f.t.Errorf("orphans = %v, want %v (oldest first)", got, want)
		}
		if got, want := f.orphans(2), []string{"typo/go", "later/go"}; !cmp.Equal(got, want) {
			f.t.Errorf("orphans limit 2 = %v, want %v", got, want)
		}
		found, err := f.s.ListOrphanSignals(f.ctx, 1, store.Scope{})
		f.ok("ListOrphanSignals", err)
		if want := (store.OrphanSignal{RunID: "typo", Name: "go", Bytes: 3, CreatedAt: T0.Add(time.Second)}); len(found) != 1 || !found[0].CreatedAt.Equal(want.CreatedAt) ||
			found[0].RunID != want.RunID || found[0].Bytes != want.Bytes {
			f.t.Errorf("oldest orphan = %+v, want %+v", found, want)
		}
		f.insert("later", "w", 1, T0.Add(time.Hour)) // its signal is its own now
		now := T0.Add(7*24*time.Hour + 2*time.Second)
		// Limit 1: the oldest expired orphan only.
		if n, err := f.s.ExpireOrphanSignals(f.ctx, 7*24*time.Hour, 1, now); err != nil || n != 1 {
			f.t.Fatalf("ExpireOrphanSignals limit 1 = %d, %v; want 1", n, err)
		}
		if got, want := f.orphans(10), []string{"typo/stop", "fresh/go"}; !cmp.Equal(got, want) {
			f.t.Errorf("orphans after expiring one = %v, want %v", got, want)
		}
		// typo/stop was sent at T0+3s: not yet 7 days old at now.
		if n, err := f.s.ExpireOrphanSignals(f.ctx, 7*24*time.Hour, 10, now); err != nil || n != 0 {
			f.t.Fatalf("ExpireOrphanSignals before the TTL = %d, %v; want 0", n, err)
		}
		if n, err := f.s.ExpireOrphanSignals(f.ctx, 7*24*time.Hour, 10, now.Add(2*time.Second)); err != nil || n != 1 {
			f.t.Fatalf("ExpireOrphanSignals = %d, %v; want 1 (typo/stop)", n, err)
		}
		if got, want := f.orphans(10), []string{"fresh/go"}; !cmp.Equal(got, want) {
			f.t.Errorf("orphans after expiring = %v, want %v", got, want)
		}
		// The signals of runs that exist are never touched.
		for _, id := range []string{"r", "later"} {
			if box := f.mailbox(id); len(box) != 1 {
				f.t.Errorf("mailbox of %s = %v, want its one signal kept", id, box)
			}
		}
	}},
}
