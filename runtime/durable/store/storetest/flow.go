package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// The flow-control and schedule cases join the suite.
func init() { cases = append(cases, flowCases...) }

// CheckFlowMigrated is the check of the migration to 0006 (flow): runs
// from before it have priority 0 and no limit key, and the claim still
// finds them.
func CheckFlowMigrated(t *testing.T, s store.Store, _ *db.DB) {
	t.Helper()
	old, err := s.ReadRun(context.Background(), "old")
	if err != nil || old.Priority != 0 || old.LimitKey != "" {
		t.Errorf("run old after migrating to 0006 = %+v, %v; want priority 0 and no limit key", old, err)
	}
	schedules, err := s.ListSchedules(context.Background())
	if err != nil || len(schedules) != 0 {
		t.Errorf("schedules after migrating = %v, %v; want none", schedules, err)
	}
}

// insertWith inserts a waiting run with a priority and a limit key ("" for
// none), due at at.
func (f *fixture) insertWith(id, workflow string, priority int, key string, at time.Time) {
	f.t.Helper()
	r := store.NewRun{ID: id, Workflow: workflow, Version: 1, Input: `1`, Priority: priority}
	if key != "" {
		r.LimitKey = &key
	}
	if ok, _, err := f.s.InsertRun(f.ctx, r, at); err != nil || !ok {
		f.t.Fatalf("InsertRun(%s) = %v, %v", id, ok, err)
	}
}

// claimLimited claims with limits among names (limited: those declared)
// and returns the run id claimed, "" when none.
func (f *fixture) claimLimited(now time.Time, names, limited []string) string {
	f.t.Helper()
	id, _ := f.claimRated(now, names, limited, nil)
	return id
}

// claimRated is claimLimited with the names of rate-limited workflows
// (rated); it also returns the claim's wait for the next token.
func (f *fixture) claimRated(now time.Time, names, limited, rated []string) (string, time.Duration) {
	f.t.Helper()
	c, ok, wait, err := f.s.ClaimLimited(f.ctx, store.LimitedClaim{Names: names, Limited: limited, Rated: rated, Lease: Lease,
		Token: "tok-" + now.String() + f.t.Name() + time.Now().String(), Worker: "w1"}, now)
	if err != nil {
		f.t.Fatalf("ClaimLimited: %v", err)
	}
	if !ok {
		return "", wait
	}
	if wait != 0 {
		f.t.Errorf("ClaimLimited claimed %s and says wait %v, want 0", c.ID, wait)
	}
	return c.ID, 0
}

func (f *fixture) complete(id string, now time.Time) {
	f.t.Helper()
	r := f.run(id)
	var token string
	f.ok("read token", f.d.QueryRow(f.ctx, `SELECT lease_token FROM _sky_durable_runs WHERE id = ?`, id).Scan(&token))
	if r.Status != store.StatusRunning {
		f.t.Fatalf("run %s is %s, want running", id, r.Status)
	}
	f.ok("Complete "+id, f.s.Complete(f.ctx, store.Fence{RunID: id, Token: token}, nil, `"ok"`, now))
}

// claimRuns claims runs of workflow w with ClaimRun, at most n, until none
// is due, and returns their ids in claim order.
func (f *fixture) claimRuns(now time.Time, n int) []string {
	f.t.Helper()
	var got []string
	for i := 0; i < n; i++ {
		c, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, now, Lease, "t"+string(rune('a'+i)), "w1")
		f.ok("ClaimRun", err)
		if !ok {
			break
		}
		got = append(got, c.ID)
	}
	return got
}

// claims claims with limits until none is due and returns the ids.
func (f *fixture) claims(now time.Time, names, limited []string) []string {
	var ids []string
	for id := f.claimLimited(now, names, limited); id != ""; id = f.claimLimited(now, names, limited) {
		ids = append(ids, id)
	}
	return ids
}

var flowCases = []storeCase{
	{"PriorityOrdersTheClaim", func(f *fixture) {
		f.insertWith("low", "w", -1, "", T0)
		f.insertWith("normal", "w", 0, "", T0)
		f.insertWith("urgent-late", "w", 5, "", T0.Add(2*time.Second))
		f.insertWith("urgent", "w", 5, "", T0.Add(time.Second))
		f.insertWith("future", "w", 10, "", T0.Add(time.Hour))
		now := T0.Add(time.Minute)
		got := f.claimRuns(now, 5)
		if want := []string{"urgent", "urgent-late", "normal", "low"}; !slices.Equal(got, want) {
			f.t.Errorf("claims in order %v, want %v (a run not yet due is never claimed)", got, want)
		}
		if r := f.run("urgent"); r.Priority != 5 {
			f.t.Errorf("run urgent has priority %d, want 5", r.Priority)
		}
	}},
	{"StartedRunsComeFirst", func(f *fixture) {
		// Within a priority, a run already started and waiting again (here
		// one that slept) is claimed before the runs not yet started,
		// however overdue those are; a running run whose lease ended (its
		// worker was lost) is due with those, at its lease's end; a higher
		// priority still comes first.
		for _, id := range []string{"slept", "lost"} {
			f.insertWith(id, "w", 0, "", T0)
		}
		for _, id := range []string{"slept", "lost"} {
			c, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, T0, Lease, "tok-"+id, "w1")
			if err != nil || !ok || c.ID != id {
				f.t.Fatalf("claim of %s = %+v, %v, %v", id, c, ok, err)
			}
		}
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "slept", Token: "tok-slept"}, T0.Add(time.Hour), "", T0))
		f.insertWith("fresh", "w", 0, "", T0.Add(time.Second))
		f.insertWith("fresh-later", "w", 0, "", T0.Add(2*time.Second))
		f.insertWith("urgent", "w", 1, "", T0.Add(3*time.Hour))
		// Started after the lost run's lease ended: it comes after that run,
		// which a stream of fresh starts never starves.
		f.insertWith("fresh-after-lease", "w", 0, "", T0.Add(Lease+time.Second))
		now := T0.Add(4 * time.Hour)
		got := f.claimRuns(now, 7)
		if want := []string{"urgent", "slept", "fresh", "fresh-later", "lost", "fresh-after-lease"}; !slices.Equal(got, want) {
			f.t.Errorf("claims in order %v, want %v (priority first, then the started runs, then the fresh and the running ones by due time)", got, want)
		}
	}},
	{"ConcurrencyLimitHoldsRuns", func(f *fixture) {
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w", Concurrency: 2}, T0))
		for _, id := range []string{"w1", "w2", "w3"} {
			f.insertWith(id, "w", 0, "", T0)
		}
		f.insertWith("free", "u", 0, "", T0.Add(time.Second))
		now := T0.Add(time.Minute)
		got := f.claims(now, []string{"w", "u"}, []string{"w"})
		if want := []string{"w1", "w2", "free"}; !slices.Equal(got, want) {
			f.t.Fatalf("claims %v, want %v: two of w (its limit), then the unlimited run", got, want)
		}
		f.complete("w1", now)
		if got := f.claims(now, []string{"w"}, []string{"w"}); !slices.Equal(got, []string{"w3"}) {
			f.t.Errorf("claims after one finished = %v, want [w3]", got)
		}
		// A run whose lease expired holds no slot: it is claimable again.
		later := now.Add(Lease + time.Second)
		if got := f.claims(later, []string{"w"}, []string{"w"}); len(got) != 2 {
			f.t.Errorf("claims after the leases expired = %v, want the two stale runs back", got)
		}
	}},
	{"PerKeyLimitSerialisesAKey", func(f *fixture) {
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w", PerKey: 1}, T0))
		f.insertWith("a1", "w", 0, "a", T0)
		f.insertWith("a2", "w", 0, "a", T0.Add(time.Second))
		f.insertWith("b1", "w", 0, "b", T0.Add(2*time.Second))
		now := T0.Add(time.Minute)
		if got := f.claims(now, []string{"w"}, []string{"w"}); !slices.Equal(got, []string{"a1", "b1"}) {
			f.t.Fatalf("claims = %v, want [a1 b1]: a2 waits for a1", got)
		}
		states, err := f.s.FlowStates(f.ctx, []string{"w"}, Lease, now)
		f.ok("FlowStates", err)
		if len(states) != 1 || states[0].PerKey != 1 || states[0].Running != 2 || states[0].RunningByKey["a"] != 1 {
			f.t.Errorf("FlowStates = %+v, want per key 1, 2 running, 1 of key a", states)
		}
		f.complete("a1", now)
		if got := f.claims(now, []string{"w"}, []string{"w"}); !slices.Equal(got, []string{"a2"}) {
			f.t.Errorf("claims after a1 finished = %v, want [a2]", got)
		}
		if r := f.run("a2"); r.LimitKey != "a" {
			f.t.Errorf("run a2 has limit key %q, want a", r.LimitKey)
		}
	}},
	{"RateLimitSpacesClaims", func(f *fixture) {
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w", RatePerSecond: 2}, T0))
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			f.insertWith(id, "w", 0, "", T0)
		}
		at := func(ms int) time.Time { return T0.Add(time.Minute + time.Duration(ms)*time.Millisecond) }
		for _, c := range []struct {
			ms   int
			want string
		}{{0, "r1"}, {0, ""}, {499, ""}, {500, "r2"}, {900, ""}, {1000, "r3"}, {5000, "r4"}} {
			if got := f.claimLimited(at(c.ms), []string{"w"}, []string{"w"}); got != c.want {
				f.t.Errorf("claim at +%d ms = %q, want %q (2 a second: one every 500 ms)", c.ms, got, c.want)
			}
		}
		// A claim more than half an interval late puts the next half an
		// interval after it (RateLimitCatchesUpWithinItsWindow).
		states, err := f.s.FlowStates(f.ctx, []string{"w"}, Lease, at(5000))
		f.ok("FlowStates", err)
		if len(states) != 1 || !states[0].NextClaimAt.Equal(at(5250)) {
			f.t.Errorf("FlowStates = %+v, want the next claim at +5250 ms", states)
		}
		// Declaring no limits drops them: every run is claimable at once.
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w"}, T0))
		if states, _ := f.s.FlowStates(f.ctx, []string{"w"}, Lease, at(5000)); len(states) != 0 {
			f.t.Errorf("FlowStates after dropping the limits = %+v, want none", states)
		}
	}},
	{"RateLimitRefusalWaitsForTheNextToken", func(f *fixture) {
		// A claim the rate limit refuses says when its next token is due;
		// a claim at that moment is admitted, and one that finds no due
		// run, or no rate limit, says wait 0 (the worker's tick).
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "r", RatePerSecond: 20}, T0))
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "k", PerKey: 1}, T0))
		for i, id := range []string{"r1", "r2", "r3", "k1", "k2"} {
			f.insertWith(id, id[:1], 0, map[bool]string{true: "a"}[id[0] == 'k'], T0.Add(time.Duration(i)*time.Second))
		}
		at := func(ms int) time.Time { return T0.Add(time.Minute + time.Duration(ms)*time.Millisecond) }
		names, limited, rated := []string{"r", "k"}, []string{"r", "k"}, []string{"r"}
		for _, c := range []struct {
			ms   int
			want string
			wait time.Duration
		}{
			{0, "r1", 0},
			{0, "k1", 0}, // r's token is taken: the run of another workflow
			{0, "", 50 * time.Millisecond},
			{13, "", 37 * time.Millisecond},
			{50, "r2", 0},
			{99, "", time.Millisecond},
			{100, "r3", 0},
			{100, "", 50 * time.Millisecond}, // no run of r is due, and its token is not either
			{150, "", 0},                     // k2 is held by its key, which has no rate
		} {
			if got, wait := f.claimRated(at(c.ms), names, limited, rated); got != c.want || wait != c.wait {
				f.t.Errorf("claim at +%d ms = %q, wait %v; want %q, wait %v (20 a second: one every 50 ms)", c.ms, got, wait, c.want, c.wait)
			}
		}
	}},
	{"RateLimitCatchesUpWithinItsWindow", func(f *fixture) {
		// 4 a second: the next claim is one interval (250 ms) after the
		// last on the grid, so a claim a little late is caught up by the
		// next; and never sooner than 1 s after the claim 4 before, so no
		// second holds 5.
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "r", RatePerSecond: 4}, T0))
		for i := range 7 {
			f.insertWith(fmt.Sprintf("r%d", i+1), "r", 0, "", T0.Add(time.Duration(i)*time.Millisecond))
		}
		at := func(ms int) time.Time { return T0.Add(time.Minute + time.Duration(ms)*time.Millisecond) }
		names := []string{"r"}
		for _, c := range []struct {
			ms   int
			want string
			wait time.Duration
		}{
			{0, "r1", 0},
			{260, "r2", 0}, // 10 ms late
			{499, "", time.Millisecond},
			{500, "r3", 0}, // on the grid again
			{750, "r4", 0},
			{999, "", time.Millisecond},
			{1000, "r5", 0},
			{1000, "", 260 * time.Millisecond}, // the grid says 1250, but r2 was at 260: 1260
			{1260, "r6", 0},
			{2000, "r7", 0}, // 500 ms late: the next is 125 ms after it, not on the grid
		} {
			if got, wait := f.claimRated(at(c.ms), names, names, names); got != c.want || wait != c.wait {
				f.t.Errorf("claim at +%d ms = %q, wait %v; want %q, wait %v", c.ms, got, wait, c.want, c.wait)
			}
		}
		states, err := f.s.FlowStates(f.ctx, names, Lease, at(2000))
		f.ok("FlowStates", err)
		if len(states) != 1 || !states[0].NextClaimAt.Equal(at(2125)) {
			f.t.Errorf("FlowStates = %+v, want the next claim at +2125 ms", states)
		}
	}},
	{"RestoreRatesGivesTheTokenBack", func(f *fixture) {
		// The test kit saves a rate limit's state before a claim and puts
		// it back when an injected crash lost the claim: the next claim is
		// then admitted as if the lost one never happened, and only the
		// rated workflows are saved.
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "w", RatePerSecond: 2}, T0))
		f.ok("DeclareLimits", f.s.DeclareLimits(f.ctx, store.Limits{Workflow: "c", Concurrency: 1}, T0))
		for _, id := range []string{"r1", "r2", "r3", "r4"} {
			f.insertWith(id, "w", 0, "", T0)
		}
		at := func(ms int) time.Time { return T0.Add(time.Minute + time.Duration(ms)*time.Millisecond) }
		names := []string{"w"}
		claim := func(ms int, want string) {
			f.t.Helper()
			if got := f.claimLimited(at(ms), names, names); got != want {
				f.t.Errorf("claim at +%d ms = %q, want %q", ms, got, want)
			}
		}
		save := func() []store.RateState {
			f.t.Helper()
			states, err := f.s.SaveRates(f.ctx, []string{"w", "c", "none"})
			f.ok("SaveRates", err)
			if len(states) != 1 || states[0].Workflow != "w" {
				f.t.Fatalf("SaveRates = %+v, want the state of w alone", states)
			}
			return states
		}
		fresh := save()
		claim(0, "r1")
		f.ok("RestoreRates", f.s.RestoreRates(f.ctx, fresh))
		claim(0, "r2") // r1's token is back
		claim(0, "")
		afterTwo := save()
		claim(500, "r3")
		f.ok("RestoreRates", f.s.RestoreRates(f.ctx, afterTwo))
		states, err := f.s.FlowStates(f.ctx, names, Lease, at(500))
		f.ok("FlowStates", err)
		if len(states) != 1 || !states[0].NextClaimAt.Equal(at(500)) {
			f.t.Errorf("FlowStates after RestoreRates = %+v, want the next claim at +500 ms again", states)
		}
		claim(500, "r4")
		claim(500, "")
		// The empty state is a rate limit no claim has used.
		f.insertWith("r5", "w", 0, "", T0)
		f.ok("RestoreRates", f.s.RestoreRates(f.ctx, []store.RateState{{Workflow: "w"}}))
		claim(500, "r5")
	}},
	{"SchedulesFireEachTickOnce", func(f *fixture) {
		every := func(t time.Time) time.Time { return t.Truncate(time.Minute).Add(time.Minute) }
		s, err := f.s.PutSchedule(f.ctx, store.Schedule{ID: "digest", Workflow: "w", Version: 2, Cron: "* * * * *", Input: `{"n":1}`}, T0, every)
		f.ok("PutSchedule", err)
		first := every(T0)
		if !s.NextAt.Equal(first) {
			f.t.Fatalf("next tick = %v, want %v", s.NextAt, first)
		}
		// Declaring it again with the same expression keeps the pending tick.
		s, err = f.s.PutSchedule(f.ctx, store.Schedule{ID: "digest", Workflow: "w", Version: 2, Cron: "* * * * *", Input: `{"n":2}`}, T0.Add(90*time.Second), every)
		f.ok("PutSchedule again", err)
		if !s.NextAt.Equal(first) || s.Input != `{"n":2}` {
			f.t.Fatalf("after re-declaring: %+v, want the tick %v kept and the new input", s, first)
		}
		ticks := func(s store.Schedule, now time.Time) store.SchedulePlan {
			var out []time.Time
			for t := s.NextAt; !t.After(now); t = every(t) {
				out = append(out, t)
			}
			return store.SchedulePlan{Ticks: out[len(out)-1:], Next: every(now)}
		}
		if n, err := f.s.FireSchedules(f.ctx, []string{"other"}, first.Add(time.Hour), ticks); err != nil || n != 0 {
			f.t.Errorf("FireSchedules for another workflow = %d, %v; want 0", n, err)
		}
		now := first.Add(2*time.Minute + time.Second)
		if n, err := f.s.FireSchedules(f.ctx, []string{"w"}, now, ticks); err != nil || n != 1 {
			f.t.Fatalf("FireSchedules = %d, %v; want 1 run (the latest missed tick)", n, err)
		}
		id := store.RunIDOf("digest", first.Add(2*time.Minute))
		if r := f.run(id); r.Workflow != "w" || r.Version != 2 || r.Input != `{"n":2}` || r.Status != store.StatusWaiting {
			f.t.Errorf("scheduled run %s = %+v", id, r)
		}
		if n, err := f.s.FireSchedules(f.ctx, []string{"w"}, now, ticks); err != nil || n != 0 {
			f.t.Errorf("FireSchedules again = %d, %v; want 0 (the tick is fired)", n, err)
		}
		list, err := f.s.ListSchedules(f.ctx)
		f.ok("ListSchedules", err)
		if len(list) != 1 || !list[0].NextAt.Equal(every(now)) || list[0].LastRunID != id {
			f.t.Errorf("schedules = %+v; want next tick %v and last run %s", list, every(now), id)
		}
		if ok, err := f.s.DeleteSchedule(f.ctx, "digest"); err != nil || !ok {
			f.t.Errorf("DeleteSchedule = %v, %v", ok, err)
		}
		if ok, err := f.s.DeleteSchedule(f.ctx, "digest"); err != nil || ok {
			f.t.Errorf("DeleteSchedule of a deleted schedule = %v, %v; want false", ok, err)
		}
	}},
}
