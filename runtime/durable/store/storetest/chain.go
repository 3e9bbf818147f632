package storetest

import (
	"errors"
	"slices"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, chainCases...) }

// chainCases: the completion that claims the next run (a PollWith of
// several runs), compaction in batches, the pinned claim with limits and a
// schedule declared on the database's clock.
var chainCases = []storeCase{
	{"CompleteAndClaimPinnedAndStale", func(f *fixture) {
		f.insert("r1", "w", 1, T0)
		f.insert("r2", "w", 1, T0.Add(time.Second))
		f.insert("r3", "w", 2, T0.Add(2*time.Second))
		f.claim(T0.Add(time.Minute), "A", "r1")
		now := T0.Add(2 * time.Minute)
		byName := store.NextClaim{Names: []string{"w"}, Lease: Lease, Token: "B", Worker: "worker-B"}
		pinned := store.NextClaim{Keys: []store.VersionKey{{Name: "w", Version: 1}}, Pinned: true, Lease: Lease, Token: "C", Worker: "worker-C"}
		last := JournalSteps(1)[0]
		// By name, journalling the last step with the completion.
		c, ok, done, err := f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "r1", Token: "A"}, &last, `"one"`, now, byName)
		if err != nil || done != nil || !ok || c.ID != "r2" {
			f.t.Fatalf("CompleteAndClaim(r1) = %q, %v, %v, %v; want r2 claimed", c.ID, ok, done, err)
		}
		f.step(store.OpComplete, "r1", store.StatusRunning, store.StatusDone)
		if got := StepIDs(f.journal("r1")); !slices.Equal(got, []string{"a"}) {
			f.t.Errorf("r1's journal %v, want the last step [a]", got)
		}
		// Pinned to version 1: r3 (version 2) is not taken.
		c, ok, done, err = f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "r2", Token: "B"}, nil, `"two"`, now, pinned)
		if err != nil || done != nil || ok {
			f.t.Fatalf("CompleteAndClaim(r2) = %q, %v, %v, %v; want r2 done and no run claimed", c.ID, ok, done, err)
		}
		if r := f.run("r2"); r.Status != store.StatusDone || r.Output != `"two"` {
			f.t.Errorf("r2 after its completion: %s, output %s", r.Status, r.Output)
		}
		// A completion whose lease was lost claims all the same.
		c, ok, done, err = f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "r2", Token: "stale"}, nil, `"x"`, now, byName)
		if err != nil || !errors.Is(done, store.ErrLeaseLost) || !ok || c.ID != "r3" {
			f.t.Fatalf("CompleteAndClaim with a stale token = %q, %v, %v, %v; want ErrLeaseLost and r3 (a claim by name takes any version)", c.ID, ok, done, err)
		}
		pinned.Keys[0].Version = 2
		_, ok, done, err = f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "r3", Token: "B"}, &last, `"three"`, now, pinned)
		if err != nil || done != nil || ok {
			f.t.Fatalf("CompleteAndClaim(r3) = %v, %v, %v; want r3 done and nothing left to claim", ok, done, err)
		}
		if r := f.run("r3"); r.Status != store.StatusDone || len(f.journal("r3")) != 1 {
			f.t.Errorf("r3 after its completion: %s, journal %v", r.Status, f.journal("r3"))
		}
	}},
	{"CompactBatchCompactsFinishedRunsOldestFirst", func(f *fixture) {
		for i, id := range []string{"a", "b", "c"} {
			f.insert(id, "w", 1, T0.Add(time.Duration(i)*time.Second))
		}
		for i, id := range []string{"a", "b"} {
			at := T0.Add(time.Minute + time.Duration(i)*time.Second)
			f.claim(at, "T"+id, id)
			f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: id, Token: "T" + id}, &JournalSteps(1)[0], `"ok"`, at))
		}
		runs, rows, last, err := f.s.CompactBatch(f.ctx, time.Hour, 10, time.Time{}, T0.Add(2*time.Hour), store.Scope{})
		if err != nil || runs != 2 || rows != 2 || !last.Equal(T0.Add(time.Second)) {
			f.t.Fatalf("CompactBatch = %d runs, %d rows, last %v, %v; want 2 runs, 2 rows, last created at T0+1s", runs, rows, last, err)
		}
		if j := f.journal("a"); len(j) != 0 {
			f.t.Errorf("compacted run a still has %d journal rows", len(j))
		}
		if r := f.run("c"); r.Status != store.StatusWaiting {
			f.t.Errorf("the unfinished run c is %s", r.Status)
		}
	}},
	{"PinnedClaimWithLimitsSkipsARefusedRun", func(f *fixture) {
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w", Concurrency: 1}, T0))
		f.insertWith("w1", "w", 0, "", T0)
		f.insertWith("w2", "w", 0, "", T0.Add(time.Second))
		f.insertWith("u1", "u", 0, "", T0.Add(2*time.Second))
		keys := []store.VersionKey{{Name: "w", Version: 1}, {Name: "u", Version: 1}}
		var got []string
		for i := range 3 {
			c, ok, _, err := f.s.ClaimLimited(f.ctx, store.LimitedClaim{Keys: keys, Pinned: true, Limited: []string{"w"}, Lease: Lease,
				Token: "p" + string(rune('a'+i)), Worker: "w1"}, T0.Add(time.Minute))
			f.ok("ClaimLimited", err)
			if ok {
				got = append(got, c.ID)
			}
		}
		if want := []string{"w1", "u1"}; !slices.Equal(got, want) {
			f.t.Errorf("pinned claims with a concurrency of 1 took %v, want %v", got, want)
		}
	}},
	{"ScheduleOnTheDatabaseClock", func(f *fixture) {
		if f.d.Dialect() != db.Postgres {
			return // only PostgreSQL has a database clock; SQLite's callers always pass one
		}
		var seen time.Time
		next := func(at time.Time) time.Time { seen = at; return at.Add(time.Hour) }
		sc, err := f.s.PutSchedule(f.ctx, store.Schedule{ID: "hourly", Workflow: "w", Version: 1, Cron: "@every 1h", Input: `1`}, time.Time{}, next)
		f.ok("PutSchedule", err)
		if seen.IsZero() || !sc.NextAt.Equal(seen.Add(time.Hour)) {
			f.t.Errorf("a schedule declared without a clock reading: next tick %v from %v; want the database's now plus an hour", sc.NextAt, seen)
		}
	}},
}

func init() { cases = append(cases, probeCases...) }

// probeCases: Store.Probe, the one statement of a poll's first look in a
// second.
var probeCases = []storeCase{
	{"ProbeSeesDueRunsDeadlinesAndScheduleTicks", func(f *fixture) {
		const horizon = time.Minute
		probe := func(at time.Time, workflows ...string) store.Probe {
			f.t.Helper()
			p, err := f.s.Probe(f.ctx, workflows, at, horizon)
			f.ok("Probe", err)
			return p
		}
		if p := probe(T0, "w"); p != (store.Probe{Next: horizon}) {
			f.t.Errorf("Probe of an empty database = %+v, want nothing, next at the horizon", p)
		}
		f.insert("later", "w", 1, T0.Add(time.Hour))
		if p := probe(T0, "w"); p.Due || p.Next != horizon {
			f.t.Errorf("a run due in an hour is due now or within the horizon: %+v", p)
		}
		if p := probe(T0.Add(time.Hour-20*time.Second), "w"); p.Due || p.Next != 20*time.Second {
			f.t.Errorf("a run due in 20s: %+v, want not due, next in 20s", p)
		}
		if p := probe(T0.Add(time.Hour), "w"); !p.Due || p.Next != 0 {
			f.t.Errorf("a run due now is not seen: %+v", p)
		}
		if p := probe(T0.Add(time.Hour), "other"); p.Due || p.Next != horizon {
			f.t.Errorf("a run of another workflow is seen: %+v", p)
		}
		f.insertWithDeadline("bounded", "x", "", time.Minute, T0)
		if p := probe(T0.Add(30 * time.Second)); p.Overdue || p.Next != 30*time.Second {
			f.t.Errorf("a deadline in 30s: %+v, want not overdue, next in 30s", p)
		}
		if p := probe(T0.Add(2 * time.Minute)); !p.Overdue || p.Next != -time.Minute {
			f.t.Errorf("a deadline passed a minute ago: %+v, want overdue, next a minute ago", p)
		}
		_, err := f.s.PutSchedule(f.ctx, store.Schedule{ID: "hourly", Workflow: "w", Version: 1, Cron: "@every 1h", Input: `1`}, T0,
			func(at time.Time) time.Time { return at.Add(time.Hour) })
		f.ok("PutSchedule", err)
		if p := probe(T0.Add(30*time.Minute), "w"); p.SchedulesDue {
			f.t.Errorf("a tick due in an hour is due: %+v", p)
		}
		for _, id := range []string{"bounded", "later"} {
			_, err := f.s.CancelRun(f.ctx, id, T0.Add(time.Hour-time.Minute))
			f.ok("CancelRun", err)
		}
		if p := probe(T0.Add(time.Hour-10*time.Second), "w"); p.SchedulesDue || p.Next != 10*time.Second {
			f.t.Errorf("a tick due in 10s: %+v, want not due, next in 10s", p)
		}
		if p := probe(T0.Add(2*time.Hour), "w"); !p.SchedulesDue {
			f.t.Errorf("a due tick is not seen: %+v", p)
		}
		if p := probe(T0.Add(2*time.Hour), "x"); p.SchedulesDue || p.Next != horizon {
			f.t.Errorf("a tick of another workflow is seen: %+v", p)
		}
	}},
}
