// Package storetest is the one conformance suite every durable store
// (runtime/durable/store/postgres, runtime/durable/store/sqlite, and any
// store added later) must pass. It drives the store.Store interface
// directly, with an explicit clock reading on every call, and checks each
// status change against the run state machine (store.Machine).
//
// A store package runs it from its own tests:
//
//	func TestStoreConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
//			d := dbtest.Open(t, "postgres")
//			return postgres.New(d, nil), d
//		})
//	}
//
// It may import runtime/durable/store, runtime/db, runtime/task, go-cmp and
// the standard library; never a store package (each store's tests call it) nor the engine.
package storetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Open makes a store over a fresh, empty database (Setup not yet called)
// and returns the database too, for the statements that take it.
type Open func(t *testing.T) (store.Store, *db.DB)

// Lease is the lease the suite's claims take.
const Lease = 30 * time.Minute

// T0 is the suite's first clock reading.
var T0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// JournalSteps is n plain step entries with ids a, b, ... and results "1",
// "2", ...
func JournalSteps(n int) []store.JournalEntry {
	var out []store.JournalEntry
	for i := 1; i <= n; i++ {
		out = append(out, store.JournalEntry{Seq: i, StepID: string(rune('a' + i - 1)), Kind: store.KindStep, Result: `"` + string(rune('0'+i)) + `"`})
	}
	return out
}

// IgnoreTimes compares journals without their creation times.
var IgnoreTimes = cmp.Transformer("noTime", func(e store.JournalEntry) store.JournalEntry { e.CreatedAt = time.Time{}; return e })

// StepIDs are the step ids of a journal, in order.
func StepIDs(j []store.JournalEntry) []string {
	ids := make([]string, len(j))
	for i, e := range j {
		ids[i] = e.StepID
	}
	return ids
}

// lanes is how many cases Run runs at once: a case waits on its database's
// round trips more than it computes, and shares nothing with another.
const lanes = 4

// Run runs every case of the suite against the stores open makes, each on
// its own database, lanes at a time (open must be safe for concurrent
// use). It returns when every case has ended.
func Run(t *testing.T, open Open) {
	next := make(chan storeCase)
	var wg sync.WaitGroup
	for range lanes {
		wg.Add(1)
		go func() { // t.Run may be called from several goroutines at once
			defer wg.Done()
			for c := range next {
				t.Run(c.name, func(t *testing.T) {
					s, d := open(t)
					f := &fixture{t: t, ctx: context.Background(), s: s, d: d}
					if err := s.Setup(f.ctx); err != nil {
						t.Fatalf("Setup: %v", err)
					}
					if err := s.Setup(f.ctx); err != nil {
						t.Fatalf("Setup again (it must be idempotent): %v", err)
					}
					c.run(f)
				})
			}
		}()
	}
	for _, c := range cases {
		next <- c
	}
	close(next)
	wg.Wait()
}

// fixture is one case's store and helpers that fail the test on error.
type fixture struct {
	t   *testing.T
	ctx context.Context
	s   store.Store
	d   *db.DB
}

func (f *fixture) insert(id, workflow string, version int, at time.Time) {
	f.t.Helper()
	inserted, existing, err := f.s.InsertRun(f.ctx, store.NewRun{ID: id, Workflow: workflow, Version: version, Input: `{"id":"` + id + `"}`}, at)
	if err != nil || !inserted || existing != "" {
		f.t.Fatalf("InsertRun(%s) = %v, %q, %v; want inserted", id, inserted, existing, err)
	}
}

// claim claims a run of workflow w at now with token, and fails unless it
// got want ("" = none).
func (f *fixture) claim(now time.Time, token, want string) store.Claimed {
	f.t.Helper()
	c, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, now, Lease, token, "worker-"+token)
	if err != nil {
		f.t.Fatalf("ClaimRun: %v", err)
	}
	if got := map[bool]string{true: c.ID}[ok]; got != want {
		f.t.Fatalf("ClaimRun at %v claimed %q, want %q", now.Sub(T0), got, want)
	}
	return c
}

func (f *fixture) run(id string) store.Run {
	f.t.Helper()
	r, err := f.s.ReadRun(f.ctx, id)
	if err != nil {
		f.t.Fatalf("ReadRun(%s): %v", id, err)
	}
	return r
}

// step checks that op moved run id from status from to the status it has
// now, and that the machine allows it; it returns the run.
func (f *fixture) step(op store.Op, id string, from store.Status, want store.Status) store.Run {
	f.t.Helper()
	r := f.run(id)
	if r.Status != want {
		f.t.Fatalf("after %s, run %s is %s, want %s", op, id, r.Status, want)
	}
	if !store.Allowed(op, from, r.Status) {
		f.t.Fatalf("%s moved run %s from %s to %s, which store.Machine does not allow", op, id, from, r.Status)
	}
	return r
}

func (f *fixture) journal(id string) []store.JournalEntry {
	f.t.Helper()
	j, err := f.s.LoadJournal(f.ctx, id)
	if err != nil {
		f.t.Fatalf("LoadJournal(%s): %v", id, err)
	}
	return j
}

func (f *fixture) wantLeaseLost(what string, err error) {
	f.t.Helper()
	if !errors.Is(err, store.ErrLeaseLost) {
		f.t.Errorf("%s = %v, want store.ErrLeaseLost", what, err)
	}
}

func (f *fixture) ok(what string, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatalf("%s: %v", what, err)
	}
}

// storeCase is one case of the suite.
type storeCase struct {
	name string
	run  func(f *fixture)
}

var cases = []storeCase{
	{"InsertIsIdempotent", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		inserted, existing, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "r", Workflow: "other", Version: 1, Input: `1`}, T0.Add(time.Second))
		if err != nil || inserted || existing != "w" {
			f.t.Fatalf("second InsertRun = %v, %q, %v; want not inserted, existing workflow w", inserted, existing, err)
		}
		r := f.run("r")
		if r.Status != store.StatusWaiting || r.Input != `{"id":"r"}` || r.Workflow != "w" || r.Version != 1 || r.Attempts != 0 {
			f.t.Errorf("run after a repeated insert: %+v", r)
		}
		if !r.CreatedAt.Equal(T0) || !r.WakeAt.Equal(T0) {
			f.t.Errorf("created %v, due %v; want both %v", r.CreatedAt, r.WakeAt, T0)
		}
	}},
	{"ReadUnknownRun", func(f *fixture) {
		if _, err := f.s.ReadRun(f.ctx, "nope"); !errors.Is(err, store.ErrRunNotFound) {
			f.t.Errorf("ReadRun of an unknown id = %v, want store.ErrRunNotFound", err)
		}
	}},
	{"ClaimTakesDueRunsOfItsWorkflowsOnly", func(f *fixture) {
		f.insert("later", "w", 1, T0.Add(10*time.Minute))
		f.insert("other", "x", 1, T0)
		f.claim(T0, "A", "")
		f.insert("due", "w", 1, T0)
		c := f.claim(T0, "A", "due")
		if c.Workflow != "w" || c.Version != 1 || c.Input != `{"id":"due"}` || c.Attempts != 1 || c.LastError != "" {
			f.t.Errorf("claimed %+v", c)
		}
		r := f.step(store.OpClaim, "due", store.StatusWaiting, store.StatusRunning)
		if r.ClaimedBy != "worker-A" || !r.ClaimedAt.Equal(T0) || !r.WakeAt.Equal(T0.Add(Lease)) {
			f.t.Errorf("claimed run: by %q at %v, due %v; want worker-A at %v, due at the lease's end", r.ClaimedBy, r.ClaimedAt, r.WakeAt, T0)
		}
		f.claim(T0.Add(time.Minute), "B", "")
		f.claim(T0.Add(10*time.Minute), "B", "later")
	}},
	{"ClaimPinnedTakesItsVersionsOnly", func(f *fixture) {
		f.insert("v1", "w", 1, T0)
		f.insert("v2", "w", 2, T0.Add(time.Second))
		c, ok, err := f.s.ClaimPinned(f.ctx, []store.VersionKey{{Name: "w", Version: 2}}, T0.Add(time.Minute), Lease, "A", "A")
		if err != nil || !ok || c.ID != "v2" || c.Version != 2 {
			f.t.Fatalf("ClaimPinned(w v2) = %+v, %v, %v; want run v2", c, ok, err)
		}
		if _, ok, err := f.s.ClaimPinned(f.ctx, []store.VersionKey{{Name: "w", Version: 3}}, T0.Add(time.Minute), Lease, "B", "B"); ok || err != nil {
			f.t.Fatalf("ClaimPinned(w v3) = %v, %v; want nothing", ok, err)
		}
	}},
	{"ClaimReturnsTheJournalAfterLeaseExpiry", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		a := f.claim(T0, "A", "r")
		if !a.JournalRead || len(a.Journal) != 0 {
			f.t.Fatalf("A's claim of a fresh run: journal %v (read %v), want empty and read", a.Journal, a.JournalRead)
		}
		want := JournalSteps(2)
		for i, je := range want {
			f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, je, T0.Add(time.Duration(i+1)*time.Second)))
		}
		// Each journalled step renews the lease.
		f.claim(T0.Add(Lease), "B", "")
		t1 := T0.Add(2*time.Second + Lease + time.Minute)
		b := f.claim(t1, "B", "r")
		f.step(store.OpClaim, "r", store.StatusRunning, store.StatusRunning)
		if b.Attempts != 2 {
			f.t.Errorf("B's claim counts attempt %d, want 2", b.Attempts)
		}
		j := b.Journal
		if !b.JournalRead {
			j = f.journal("r")
		}
		if diff := cmp.Diff(want, j, IgnoreTimes); diff != "" {
			f.t.Errorf("journal handed to B (-want +got):\n%s", diff)
		}
		if got := j[1].CreatedAt; !got.Equal(T0.Add(2 * time.Second)) {
			f.t.Errorf("second entry's time = %v, want %v", got, T0.Add(2*time.Second))
		}
		f.wantLeaseLost("A's append after B's claim", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"},
			store.JournalEntry{Seq: 3, StepID: "c", Kind: store.KindStep, Result: `3`}, t1))
		if diff := cmp.Diff(want, f.journal("r"), IgnoreTimes); diff != "" {
			f.t.Errorf("journal after A's fenced-out append (-want +got):\n%s", diff)
		}
	}},
	{"FencedWritesNeedTheToken", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		bad := store.Fence{RunID: "r", Token: "stolen"}
		t1 := T0.Add(time.Second)
		f.wantLeaseLost("AppendEntry", f.s.AppendEntry(f.ctx, f.d, bad, JournalSteps(1)[0], t1))
		f.wantLeaseLost("Suspend", f.s.Suspend(f.ctx, bad, t1.Add(time.Hour), "", t1))
		f.wantLeaseLost("Complete", f.s.Complete(f.ctx, bad, nil, `"out"`, t1))
		f.wantLeaseLost("Fail", f.s.Fail(f.ctx, bad, "boom", "", time.Minute, false, t1))
		f.wantLeaseLost("Release", f.s.Release(f.ctx, bad, t1))
		if _, err := f.s.ConsumeSignal(f.ctx, bad, "go", store.JournalEntry{Seq: 1, StepID: "go", Kind: store.KindSignal}, func(p, _ string) (string, error) { return p, nil }, t1); err != nil && !errors.Is(err, store.ErrLeaseLost) {
			f.t.Errorf("ConsumeSignal with a stolen token = %v", err)
		}
		r := f.run("r")
		if r.Status != store.StatusRunning || r.ClaimedBy != "worker-A" || r.Output != "" || r.LastError != "" || len(f.journal("r")) != 0 {
			f.t.Errorf("writes with a stolen token changed the run: %+v, journal %v", r, f.journal("r"))
		}
	}},
	{"TimerSuspend", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		wake := T0.Add(time.Hour)
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, wake, "", T0))
		r := f.step(store.OpSuspend, "r", store.StatusRunning, store.StatusWaiting)
		if !r.WakeAt.Equal(wake) || !r.ClaimedAt.IsZero() || r.WaitingSignal != "" {
			f.t.Errorf("suspended run: due %v, claimed at %v, waiting for %q; want due %v, unclaimed", r.WakeAt, r.ClaimedAt, r.WaitingSignal, wake)
		}
		f.wantLeaseLost("append after suspending", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, JournalSteps(1)[0], T0))
		f.claim(wake.Add(-time.Millisecond), "B", "")
		f.claim(wake, "B", "r")
	}},
	{"SignalWakesAParkedRunAndIsConsumedOnce", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", T0))
		r := f.step(store.OpSuspend, "r", store.StatusRunning, store.StatusWaiting)
		if !r.WakeAt.IsZero() || r.WaitingSignal != "go" {
			f.t.Fatalf("parked run: due %v, waiting for %q; want never due, waiting for go", r.WakeAt, r.WaitingSignal)
		}
		f.claim(T0.Add(1000*time.Hour), "B", "")
		if stored, err := f.s.PutSignal(f.ctx, "r", "other", `1`, "", T0.Add(time.Second)); err != nil || !stored {
			f.t.Fatalf("PutSignal(other) = %v, %v", stored, err)
		}
		f.claim(T0.Add(time.Second), "B", "")
		t1 := T0.Add(2 * time.Second)
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `{"ok":true}`, "", t1); err != nil || !stored {
			f.t.Fatalf("PutSignal(go) = %v, %v", stored, err)
		}
		f.step(store.OpWake, "r", store.StatusWaiting, store.StatusWaiting)
		f.claim(t1, "B", "r")
		entry := store.JournalEntry{Seq: 1, StepID: "go", Kind: store.KindSignal}
		var seen string
		found, err := f.s.ConsumeSignal(f.ctx, store.Fence{RunID: "r", Token: "B"}, "go", entry, func(p, _ string) (string, error) { seen = p; return p, nil }, t1)
		if err != nil || !found || seen != `{"ok":true}` {
			f.t.Fatalf("ConsumeSignal = %v, %v, payload %q", found, err, seen)
		}
		j := f.journal("r")
		if len(j) != 1 || j[0].Kind != store.KindSignal || j[0].Result != `{"ok":true}` {
			f.t.Errorf("journal after consuming: %+v, want the signal's payload", j)
		}
		found, err = f.s.ConsumeSignal(f.ctx, store.Fence{RunID: "r", Token: "B"}, "go", store.JournalEntry{Seq: 2, StepID: "go2", Kind: store.KindSignal}, func(p, _ string) (string, error) { return p, nil }, t1)
		if err != nil || found {
			f.t.Errorf("second ConsumeSignal = %v, %v; want nothing found", found, err)
		}
		box, err := f.s.ListSignals(f.ctx, "r")
		f.ok("ListSignals", err)
		got := map[string]bool{}
		for _, s := range box {
			got[s.Name] = s.Delivered
		}
		if diff := cmp.Diff(map[string]bool{"other": false, "go": true}, got); diff != "" {
			f.t.Errorf("mailbox delivered flags (-want +got):\n%s", diff)
		}
	}},
	{"SignalBeforeTheRunStartsIsKept", func(f *fixture) {
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `"early"`, "", T0); err != nil || !stored {
			f.t.Fatalf("PutSignal before the run exists = %v, %v", stored, err)
		}
		f.insert("r", "w", 1, T0.Add(time.Second))
		f.claim(T0.Add(time.Second), "A", "r")
		t1 := T0.Add(2 * time.Second)
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", t1))
		f.claim(t1, "B", "r")
		var seen string
		found, err := f.s.ConsumeSignal(f.ctx, store.Fence{RunID: "r", Token: "B"}, "go", store.JournalEntry{Seq: 1, StepID: "go", Kind: store.KindSignal}, func(p, _ string) (string, error) { seen = p; return p, nil }, t1)
		if err != nil || !found || seen != `"early"` {
			f.t.Errorf("ConsumeSignal of the early signal = %v, %v, %q", found, err, seen)
		}
	}},
	{"RefusedSignalPayloadChangesNothing", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		if _, err := f.s.PutSignal(f.ctx, "r", "go", `"bad"`, "", T0); err != nil {
			f.t.Fatal(err)
		}
		f.claim(T0, "A", "r")
		refused := errors.New("does not decode")
		_, err := f.s.ConsumeSignal(f.ctx, store.Fence{RunID: "r", Token: "A"}, "go", store.JournalEntry{Seq: 1, StepID: "go", Kind: store.KindSignal}, func(string, string) (string, error) { return "", refused }, T0)
		if !errors.Is(err, refused) {
			f.t.Errorf("ConsumeSignal with a refusing accept = %v, want its error", err)
		}
		box, err := f.s.ListSignals(f.ctx, "r")
		f.ok("ListSignals", err)
		if len(box) != 1 || box[0].Delivered || box[0].Payload != `"bad"` || len(f.journal("r")) != 0 {
			f.t.Errorf("after a refused payload: mailbox %+v, journal %v; want the signal undelivered and no journal", box, f.journal("r"))
		}
	}},
	{"CompleteRecordsTheOutputAndTheLastStep", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		last := JournalSteps(1)[0]
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: "A"}, &last, `"out"`, T0.Add(time.Second)))
		r := f.step(store.OpComplete, "r", store.StatusRunning, store.StatusDone)
		if r.Output != `"out"` || !r.ClaimedAt.IsZero() {
			f.t.Errorf("done run: output %q, claimed at %v; want unclaimed", r.Output, r.ClaimedAt)
		}
		if diff := cmp.Diff([]store.JournalEntry{last}, f.journal("r"), IgnoreTimes); diff != "" {
			f.t.Errorf("journal (-want +got):\n%s", diff)
		}
		f.claim(T0.Add(1000*time.Hour), "B", "")
	}},
	{"CompleteAndClaimTakesTheNextRun", func(f *fixture) {
		f.insert("a", "w", 1, T0)
		f.insert("b", "w", 1, T0.Add(time.Second))
		f.claim(T0.Add(time.Second), "A", "a")
		next := store.NextClaim{Names: []string{"w"}, Lease: Lease, Token: "A2", Worker: "worker-A"}
		c, ok, done, err := f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "a", Token: "A"}, nil, `"a"`, T0.Add(2*time.Second), next)
		if err != nil || done != nil || !ok || c.ID != "b" {
			f.t.Fatalf("CompleteAndClaim = %+v, %v, %v, %v; want run b claimed", c, ok, done, err)
		}
		f.step(store.OpComplete, "a", store.StatusRunning, store.StatusDone)
		f.step(store.OpClaim, "b", store.StatusWaiting, store.StatusRunning)
		_, ok, done, err = f.s.CompleteAndClaim(f.ctx, store.Fence{RunID: "a", Token: "A"}, nil, `"again"`, T0.Add(3*time.Second), next)
		if err != nil || ok || !errors.Is(done, store.ErrLeaseLost) {
			f.t.Errorf("a second completion = claimed %v, done %v, err %v; want nothing claimed and a lost lease", ok, done, err)
		}
		if r := f.run("a"); r.Output != `"a"` {
			f.t.Errorf("output after a fenced-out completion = %q, want the first", r.Output)
		}
	}},
	{"FailRetriesThenDiesAndRetryRevives", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: "r", Token: "A"}, "Unavailable: down", "", time.Minute, false, T0))
		r := f.step(store.OpFail, "r", store.StatusRunning, store.StatusFailed)
		if r.LastError != "Unavailable: down" || !r.WakeAt.Equal(T0.Add(time.Minute)) || r.Attempts != 1 {
			f.t.Errorf("failed run: %+v; want the error, due after the backoff, 1 attempt", r)
		}
		f.claim(T0.Add(59*time.Second), "B", "")
		c := f.claim(T0.Add(time.Minute), "B", "r")
		if c.Attempts != 2 || c.LastError != "Unavailable: down" {
			f.t.Errorf("retry claim: attempts %d, last error %q", c.Attempts, c.LastError)
		}
		f.step(store.OpClaim, "r", store.StatusFailed, store.StatusRunning)
		f.ok("Fail dead", f.s.Fail(f.ctx, store.Fence{RunID: "r", Token: "B"}, "Unavailable: still down", "", time.Minute, true, T0.Add(time.Minute)))
		f.step(store.OpDie, "r", store.StatusRunning, store.StatusDead)
		f.claim(T0.Add(1000*time.Hour), "C", "")
		t1 := T0.Add(2 * time.Hour)
		if ok, err := f.s.RetryRun(f.ctx, "r", t1); err != nil || !ok {
			f.t.Fatalf("RetryRun(dead) = %v, %v", ok, err)
		}
		r = f.step(store.OpRetry, "r", store.StatusDead, store.StatusWaiting)
		if r.Attempts != 0 || !r.WakeAt.Equal(t1) {
			f.t.Errorf("retried run: attempts %d, due %v; want 0, now", r.Attempts, r.WakeAt)
		}
		if ok, err := f.s.RetryRun(f.ctx, "r", t1); err != nil || ok {
			f.t.Errorf("RetryRun(waiting) = %v, %v; want refused (the machine does not retry a waiting run)", ok, err)
		}
		f.claim(t1, "C", "r")
	}},
	{"ReleaseGivesTheRunBack", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Release", f.s.Release(f.ctx, store.Fence{RunID: "r", Token: "A"}, T0.Add(time.Second)))
		r := f.step(store.OpRelease, "r", store.StatusRunning, store.StatusWaiting)
		if r.Attempts != 0 || !r.ClaimedAt.IsZero() || !r.WakeAt.Equal(T0.Add(time.Second)) {
			f.t.Errorf("released run: %+v; want the attempt not counted, unclaimed, due now", r)
		}
		f.claim(T0.Add(time.Second), "B", "r")
		f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: "r", Token: "B"}, "boom", "", 0, false, T0.Add(time.Second)))
		f.claim(T0.Add(2*time.Second), "C", "r")
		f.ok("Release", f.s.Release(f.ctx, store.Fence{RunID: "r", Token: "C"}, T0.Add(3*time.Second)))
		f.step(store.OpRelease, "r", store.StatusRunning, store.StatusFailed)
	}},
	{"CancelStopsAnUnfinishedRunOnly", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		if ok, err := f.s.CancelRun(f.ctx, "r", T0.Add(time.Second)); err != nil || !ok {
			f.t.Fatalf("CancelRun(running) = %v, %v", ok, err)
		}
		f.step(store.OpCancel, "r", store.StatusRunning, store.StatusCancelled)
		f.wantLeaseLost("append after cancel", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "A"}, JournalSteps(1)[0], T0.Add(time.Second)))
		f.claim(T0.Add(1000*time.Hour), "B", "")
		for _, op := range []struct {
			name string
			do   func() (bool, error)
		}{
			{"CancelRun", func() (bool, error) { return f.s.CancelRun(f.ctx, "r", T0) }},
			{"RetryRun", func() (bool, error) { return f.s.RetryRun(f.ctx, "r", T0) }},
			{"WakeRun", func() (bool, error) { return f.s.WakeRun(f.ctx, "r", T0) }},
		} {
			if ok, err := op.do(); err != nil || ok {
				f.t.Errorf("%s on a cancelled run = %v, %v; want refused", op.name, ok, err)
			}
		}
		if r := f.run("r"); r.Status != store.StatusCancelled {
			f.t.Errorf("run is %s after refused operations, want cancelled", r.Status)
		}
	}},
	{"CompactDeletesTheJournalOfFinishedRunsOnly", func(f *fixture) {
		f.insert("done", "w", 1, T0)
		f.insert("live", "w", 1, T0.Add(time.Second))
		f.claim(T0.Add(time.Second), "A", "done")
		f.ok("append", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "done", Token: "A"}, JournalSteps(1)[0], T0.Add(time.Second)))
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "done", Token: "A"}, nil, `1`, T0.Add(2*time.Second)))
		if ok, _, err := f.s.CompactRun(f.ctx, "live", T0.Add(time.Hour)); err != nil || ok {
			f.t.Errorf("CompactRun(waiting) = %v, %v; want refused", ok, err)
		}
		ok, deleted, err := f.s.CompactRun(f.ctx, "done", T0.Add(time.Hour))
		if err != nil || !ok || deleted != 1 {
			f.t.Fatalf("CompactRun(done) = %v, %d, %v; want 1 row deleted", ok, deleted, err)
		}
		if r := f.run("done"); !r.CompactedAt.Equal(T0.Add(time.Hour)) || r.Output != `1` || len(f.journal("done")) != 0 {
			f.t.Errorf("compacted run: %+v, journal %v", r, f.journal("done"))
		}
		if !store.Terminal(store.StatusDone) || !store.Terminal(store.StatusCancelled) || store.Terminal(store.StatusDead) {
			f.t.Errorf("the machine's finished statuses are not done and cancelled")
		}
	}},
	{"ListRunsFiltersNewestFirst", func(f *fixture) {
		f.insert("a", "w", 1, T0)
		f.insert("b", "x", 1, T0.Add(time.Second))
		f.insert("c", "w", 1, T0.Add(2*time.Second))
		f.claim(T0.Add(3*time.Second), "A", "a")
		for _, c := range []struct {
			filter store.ListFilter
			want   []string
		}{
			{store.ListFilter{Limit: 10}, []string{"c", "b", "a"}},
			{store.ListFilter{Limit: 2}, []string{"c", "b"}},
			{store.ListFilter{Status: store.StatusWaiting, Limit: 10}, []string{"c", "b"}},
			{store.ListFilter{Workflow: "w", Limit: 10}, []string{"c", "a"}},
			{store.ListFilter{Workflow: "w", Status: store.StatusRunning, Limit: 10}, []string{"a"}},
			{store.ListFilter{Status: store.StatusDead, Limit: 10}, nil},
		} {
			runs, err := f.s.ListRuns(f.ctx, c.filter)
			f.ok("ListRuns", err)
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, c.want) {
				f.t.Errorf("ListRuns(%+v) = %v, want %v", c.filter, ids, c.want)
			}
		}
	}},
	{"RunsOfOneMillisecondListByIDOnEveryStore", func(f *fixture) {
		// Started within one millisecond, in the opposite order of their
		// ids, by each way a run is made (start, a child, a fork, a start
		// that is its first claim): every
		// store keeps a run's creation time to the millisecond, so the id
		// breaks the tie and the listing is the same whatever the store's
		// clock precision.
		at := func(us int) time.Time { return T0.Add(time.Duration(us) * time.Microsecond) }
		f.insert("p", "w", 1, at(100))
		if n, err := f.s.InsertChildren(f.ctx, f.d, "p", "", "w", 1, []store.NewChild{{ID: "o", Input: `1`}}, at(200)); err != nil || n != 1 {
			f.t.Fatalf("InsertChildren = %d, %v", n, err)
		}
		if _, err := f.s.ForkRun(f.ctx, store.Fork{Cut: store.Cut{RunID: "p", Seq: 1}, NewID: "n"}, at(300)); err != nil {
			f.t.Fatalf("ForkRun: %v", err)
		}
		if _, inserted, _, err := f.s.InsertClaimedRun(f.ctx, store.NewRun{ID: "m", Workflow: "w", Version: 1, Input: `1`}, at(400), Lease, "A", "worker-A"); err != nil || !inserted {
			f.t.Fatalf("InsertClaimedRun = %v, %v", inserted, err)
		}
		for _, filter := range []store.ListFilter{{}, {Status: store.StatusWaiting}, {Workflow: "w"}, {Workflow: "w", Status: store.StatusWaiting}} {
			filter.Limit = 10
			runs, err := f.s.ListRuns(f.ctx, filter)
			f.ok("ListRuns", err)
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
				if !r.CreatedAt.Equal(T0) {
					f.t.Errorf("run %s created at %v, want %v (its millisecond)", r.ID, r.CreatedAt, T0)
				}
			}
			want := []string{"p", "o", "n", "m"}
			if filter.Status == store.StatusWaiting {
				want = want[:3] // m is running
			}
			if !slices.Equal(ids, want) {
				f.t.Errorf("ListRuns(%+v) = %v, want %v (newest millisecond first, then id descending)", filter, ids, want)
			}
		}
	}},
	{"ListRunsPagesByKeysetAndPrefix", func(f *fixture) {
		// Two runs share a creation time, so the cursor's id breaks the tie.
		for i, id := range []string{"order-1", "order-2", "refund-1", "order-3", "order-4"} {
			at := T0.Add(time.Duration(min(i, 3)) * time.Second)
			workflow := map[bool]string{true: "refund", false: "w"}[id == "refund-1"]
			f.insert(id, workflow, 1, at)
		}
		list := func(filter store.ListFilter) []string {
			f.t.Helper()
			runs, err := f.s.ListRuns(f.ctx, filter)
			f.ok("ListRuns", err)
			var ids []string
			for _, r := range runs {
				ids = append(ids, r.ID)
			}
			return ids
		}
		for _, filter := range []store.ListFilter{{}, {Status: store.StatusWaiting}, {Workflow: "w"}, {Workflow: "w", Status: store.StatusWaiting}} {
			filter.Limit = 2
			pages := f.listPages(filter)
			want := [][]string{{"order-4", "order-3"}, {"refund-1", "order-2"}, {"order-1"}}
			if filter.Workflow == "w" {
				want = [][]string{{"order-4", "order-3"}, {"order-2", "order-1"}}
			}
			if diff := cmp.Diff(want, pages); diff != "" {
				f.t.Errorf("pages of %+v (-want +got):\n%s", filter, diff)
			}
		}
		if got := list(store.ListFilter{IDPrefix: "order-", Limit: 10}); !slices.Equal(got, []string{"order-4", "order-3", "order-2", "order-1"}) {
			f.t.Errorf("prefix order- = %v", got)
		}
		if got := list(store.ListFilter{IDPrefix: "Order-", Limit: 10}); got != nil {
			f.t.Errorf("prefix Order- = %v, want none (prefixes are case-sensitive)", got)
		}
		if got := list(store.ListFilter{IDPrefix: "%", Limit: 10}); got != nil {
			f.t.Errorf("prefix %% = %v, want none (no wildcards)", got)
		}
		if got := list(store.ListFilter{IDPrefix: "re", Workflow: "refund", Limit: 10}); !slices.Equal(got, []string{"refund-1"}) {
			f.t.Errorf("prefix re of refund = %v", got)
		}
	}},
	{"StatsCountTheOverview", func(f *fixture) {
		f.insert("stuck", "w", 1, T0.Add(-3*time.Hour))
		f.claim(T0.Add(-3*time.Hour+time.Second), "A", "stuck") // its lease ends long before T0
		f.insert("old", "w", 1, T0.Add(-2*time.Hour))
		f.insert("c", "x", 1, T0.Add(-90*time.Second))
		c, ok, err := f.s.ClaimRun(f.ctx, []string{"x"}, T0.Add(-80*time.Second), Lease, "C", "worker-C")
		if err != nil || !ok || c.ID != "c" {
			f.t.Fatalf("ClaimRun(x) = %+v, %v, %v", c, ok, err)
		}
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "c", Token: "C"}, nil, `"out"`, T0.Add(-70*time.Second)))
		f.insert("b", "w", 1, T0.Add(-30*time.Second))

		st, err := f.s.Stats(f.ctx, T0, 60, Lease, store.Scope{})
		f.ok("Stats", err)
		wantCounts := []store.StatusCount{{Workflow: "w", Status: store.StatusRunning, N: 1}, {Workflow: "w", Status: store.StatusWaiting, N: 2}, {Workflow: "x", Status: store.StatusDone, N: 1}}
		if diff := cmp.Diff(wantCounts, st.Counts); diff != "" {
			f.t.Errorf("counts (-want +got):\n%s", diff)
		}
		started, finished := make([]int, 60), make([]int, 60)
		started[0], started[1], finished[1] = 1, 1, 1
		if diff := cmp.Diff(started, st.Started); diff != "" {
			f.t.Errorf("started per minute (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(finished, st.Finished); diff != "" {
			f.t.Errorf("finished per minute (-want +got):\n%s", diff)
		}
		if st.OldestDue == nil || st.OldestDue.ID != "old" || !st.OldestDue.WakeAt.Equal(T0.Add(-2*time.Hour)) {
			f.t.Errorf("oldest due = %+v, want old, due since T0-2h", st.OldestDue)
		}
		if st.StuckCount != 1 || len(st.Stuck) != 1 || st.Stuck[0].ID != "stuck" || st.Stuck[0].ClaimedBy != "worker-A" {
			f.t.Errorf("stuck = %d %+v, want the run claimed by worker-A", st.StuckCount, st.Stuck)
		}
		// Due now and unclaimed: old and b (c is done, stuck is running).
		if n, err := f.s.DueBacklog(f.ctx, T0, store.Scope{}); err != nil || n != 2 {
			f.t.Errorf("DueBacklog = %d, %v; want 2", n, err)
		}
		if !st.Now.Equal(T0) {
			f.t.Errorf("stats now = %v, want %v", st.Now, T0)
		}
		// Once the stuck run is reclaimed and renewed it is no longer stuck.
		f.claim(T0, "B", "stuck")
		st, err = f.s.Stats(f.ctx, T0.Add(time.Minute), 60, Lease, store.Scope{})
		f.ok("Stats", err)
		if st.StuckCount != 0 {
			f.t.Errorf("a freshly claimed run counts as stuck: %+v", st.Stuck)
		}
	}},
	{"TraceContextIsKeptWithTheRun", func(f *fixture) {
		// The claims read it with the run: ClaimRun, and the claim half of
		// CompleteAndClaim.
		const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
		if _, _, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "traced", Workflow: "w", Version: 1, Input: `1`, TraceContext: tp}, T0); err != nil {
			f.t.Fatal(err)
		}
		f.insert("plain", "w", 1, T0.Add(time.Second))
		if _, _, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "traced2", Workflow: "w", Version: 1, Input: `1`, TraceContext: tp}, T0.Add(2*time.Second)); err != nil {
			f.t.Fatal(err)
		}
		// A second start of the id keeps the first context.
		f.ok("InsertRun again", func() error {
			_, _, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "plain", Workflow: "w", Version: 1, Input: `1`, TraceContext: tp}, T0)
			return err
		}())
		now := T0.Add(3 * time.Second)
		if c := f.claim(now, "A", "traced"); c.TraceContext != tp {
			f.t.Errorf("ClaimRun read trace context %q, want %q", c.TraceContext, tp)
		}
		fence := store.Fence{RunID: "traced", Token: "A"}
		for _, want := range []struct{ id, tc, token string }{{"plain", "", "A1"}, {"traced2", tp, "A2"}} {
			token := want.token
			next := store.NextClaim{Names: []string{"w"}, Lease: Lease, Token: token, Worker: "worker-A"}
			c, ok, done, err := f.s.CompleteAndClaim(f.ctx, fence, nil, `"out"`, now, next)
			if err != nil || done != nil || !ok || c.ID != want.id || c.TraceContext != want.tc {
				f.t.Fatalf("CompleteAndClaim = %+v, %v, %v, %v; want run %s claimed with trace context %q", c, ok, done, err, want.id, want.tc)
			}
			fence = store.Fence{RunID: c.ID, Token: token}
		}
	}},
	{"SnapshotsAreWriteIfNewer", func(f *fixture) {
		if _, _, found, err := f.s.LoadSnapshot(f.ctx, "app"); err != nil || found {
			f.t.Fatalf("LoadSnapshot before any save = found %v, %v", found, err)
		}
		for _, c := range []struct {
			seq   int64
			data  string
			wrote bool
		}{{1, `"one"`, true}, {1, `"again"`, false}, {3, `"three"`, true}, {2, `"two"`, false}} {
			wrote, err := f.s.SaveSnapshot(f.ctx, "app", c.seq, c.data, T0)
			if err != nil || wrote != c.wrote {
				f.t.Errorf("SaveSnapshot(seq %d) = %v, %v; want %v", c.seq, wrote, err, c.wrote)
			}
		}
		seq, data, found, err := f.s.LoadSnapshot(f.ctx, "app")
		if err != nil || !found || seq != 3 || data != `"three"` {
			f.t.Errorf("LoadSnapshot = %d, %q, %v, %v; want 3, \"three\"", seq, data, found, err)
		}
	}},
	{"TheMachineRefusesWhatItDoesNotList", func(f *fixture) {
		// A waiting run: retry and compaction are refused; wake is allowed.
		f.insert("r", "w", 1, T0.Add(time.Hour))
		if store.Accepts(store.OpRetry, store.StatusWaiting) {
			f.t.Fatal("the machine lists retry from waiting")
		}
		if ok, err := f.s.RetryRun(f.ctx, "r", T0); err != nil || ok {
			f.t.Errorf("RetryRun(waiting) = %v, %v; want refused", ok, err)
		}
		if ok, err := f.s.WakeRun(f.ctx, "r", T0); err != nil || !ok {
			f.t.Fatalf("WakeRun(waiting) = %v, %v", ok, err)
		}
		if r := f.step(store.OpWake, "r", store.StatusWaiting, store.StatusWaiting); !r.WakeAt.Equal(T0) {
			f.t.Errorf("woken run due %v, want %v", r.WakeAt, T0)
		}
		f.claim(T0, "A", "r")
		if ok, err := f.s.WakeRun(f.ctx, "r", T0); err != nil || ok {
			f.t.Errorf("WakeRun(running) = %v, %v; want refused", ok, err)
		}
		if ok, err := f.s.RetryRun(f.ctx, "r", T0); err != nil || ok {
			f.t.Errorf("RetryRun(running) = %v, %v; want refused", ok, err)
		}
		if r := f.run("r"); r.Status != store.StatusRunning || r.ClaimedBy != "worker-A" {
			f.t.Errorf("refused operations changed the running run: %+v", r)
		}
	}},
}

// Cases is how many cases Run runs: a caller that checks what the whole
// suite did (the PostgreSQL plan test) knows whether a -run filter left
// some out.
func Cases() int { return len(cases) }

// CaseNames are the suite's case names (each its subtest's name), in the
// suite's order.
func CaseNames() []string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	return names
}

// listPages lists the runs filter selects page by page (at most five, each
// after the last run of the one before), as their ids.
func (f *fixture) listPages(filter store.ListFilter) [][]string {
	var pages [][]string
	for page := 0; page < 5; page++ {
		runs, err := f.s.ListRuns(f.ctx, filter)
		f.ok("ListRuns", err)
		if len(runs) == 0 {
			break
		}
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		pages = append(pages, ids)
		filter.Before = store.CursorOf(runs[len(runs)-1])
	}
	return pages
}
