package storetest

import (
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

// The run history cases: what each write records, and the bound.
func init() {
	cases = append(cases,
		storeCase{"HistoryRecordsEveryEventWithItsActor", func(f *fixture) {
			op := store.WithActor(f.ctx, "ann@box via sky durable")
			at := func(s int) time.Time { return T0.Add(time.Duration(s) * time.Second) }
			f.insert("r", "w", 1, T0)
			f.claim(at(1), "A", "r") // the first claim of a run: not recorded
			f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", at(2)))
			if ok, err := f.s.PutSignal(f.ctx, "r", "go", `1`, "", at(3)); err != nil || !ok {
				f.t.Fatalf("PutSignal = %v, %v", ok, err)
			}
			f.claim(at(4), "B", "r")
			f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: "r", Token: "B"}, "Unavailable: down", "charge", 0, true, at(5)))
			if ok, err := f.s.RetryRun(op, "r", at(6)); err != nil || !ok {
				f.t.Fatalf("RetryRun = %v, %v", ok, err)
			}
			f.claim(at(7), "C", "r")
			// C's lease runs out: D reclaims the run from C.
			f.claim(at(8).Add(Lease), "D", "r")
			if ok, err := f.s.ReleaseRun(op, "r", at(9).Add(Lease)); err != nil || !ok {
				f.t.Fatalf("ReleaseRun = %v, %v", ok, err)
			}
			f.claim(at(10).Add(Lease), "E", "r")
			f.ok("Release", f.s.Release(f.ctx, store.Fence{RunID: "r", Token: "E"}, at(11).Add(Lease)))
			f.claim(at(12).Add(Lease), "F", "r")
			f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: "F"}, nil, `"ok"`, at(13).Add(Lease)))
			want := []store.Event{
				{Kind: store.EventSuspended, Actor: "worker-A", Attempt: 1, Detail: `signal "go"`},
				{Kind: store.EventClaimed, Actor: "worker-B", Attempt: 1},
				{Kind: store.EventDead, Actor: "worker-B", Attempt: 1, Detail: "Unavailable: down", Step: "charge"},
				{Kind: store.EventRetried, Actor: "ann@box via sky durable", Attempt: 1},
				{Kind: store.EventClaimed, Actor: "worker-C", Attempt: 1},
				{Kind: store.EventReclaimed, Actor: "worker-D", Attempt: 2, Detail: "worker-C"},
				{Kind: store.EventReleased, Actor: "ann@box via sky durable", Attempt: 2, Detail: "worker-D"},
				{Kind: store.EventClaimed, Actor: "worker-E", Attempt: 3},
				{Kind: store.EventReleased, Actor: "worker-E", Attempt: 3},
				{Kind: store.EventClaimed, Actor: "worker-F", Attempt: 3},
				{Kind: store.EventDone, Actor: "worker-F", Attempt: 3},
			}
			times := []time.Time{at(2), at(4), at(5), at(6), at(7), at(8).Add(Lease), at(9).Add(Lease), at(10).Add(Lease), at(11).Add(Lease), at(12).Add(Lease), at(13).Add(Lease)}
			for i := range want {
				want[i].Pos, want[i].At = int64(i+1), times[i]
			}
			f.wantHistory("r", want)

			// Cancel, a signal's replacement, a time-out.
			f.insert("c", "w", 1, T0)
			if ok, err := f.s.ReplaceSignal(op, "c", "go", `2`, at(1)); err != nil || !ok {
				f.t.Fatalf("ReplaceSignal = %v, %v", ok, err)
			}
			if ok, err := f.s.CancelRun(op, "c", at(2)); err != nil || !ok {
				f.t.Fatalf("CancelRun = %v, %v", ok, err)
			}
			f.wantHistory("c", []store.Event{
				{Pos: 1, At: at(1), Kind: store.EventSignalReplaced, Actor: "ann@box via sky durable", Detail: "go"},
				{Pos: 2, At: at(2), Kind: store.EventCancelled, Actor: "ann@box via sky durable"},
			})
			if _, _, err := f.s.InsertRun(f.ctx, store.NewRun{ID: "t", Workflow: "w", Version: 1, Input: "1", Deadline: time.Second}, T0); err != nil {
				f.t.Fatal(err)
			}
			if n, _, err := f.s.TimeOutRuns(f.ctx, at(2), 10); err != nil || n != 1 {
				f.t.Fatalf("TimeOutRuns = %d, %v; want 1", n, err)
			}
			f.wantHistory("t", []store.Event{{Pos: 1, At: at(2), Kind: store.EventTimedOut, Actor: store.ActorDeadline,
				Detail: "the deadline passed at 2030-01-02 03:04:06.000Z"}})
			if h := f.runHistory("missing"); len(h) != 0 {
				f.t.Errorf("the history of no run = %v, want none", h)
			}
		}},
		storeCase{"HistoryRecordsForkAndRewind", func(f *fixture) {
			op := store.WithActor(f.ctx, "ann@box via sky durable")
			cut := f.history() // run "r", done by worker-A
			t1, t2 := T0.Add(time.Minute), T0.Add(2*time.Minute)
			if child, err := f.s.ForkRun(op, store.Fork{Cut: cut, NewID: "f"}, t1); err != nil || child != "" {
				f.t.Fatalf("ForkRun = %q, %v", child, err)
			}
			// A fork's history starts at the fork: the source's is not copied.
			f.wantHistory("f", []store.Event{{Pos: 1, At: t1, Kind: store.EventForked, Actor: "ann@box via sky durable", Detail: "r", Step: "b"}})
			if ok, child, err := f.s.RewindRun(op, cut, t2); err != nil || !ok || child != "" {
				f.t.Fatalf("RewindRun = %v, %q, %v", ok, child, err)
			}
			h := f.runHistory("r")
			if len(h) != 2 || h[0].Kind != store.EventDone || h[0].Actor != "worker-A" {
				f.t.Fatalf("history of the rewound run = %+v, want its completion then the rewind", h)
			}
			if diff := cmp.Diff(store.Event{Pos: 2, At: t2, Kind: store.EventRewound, Actor: "ann@box via sky durable", Step: "b"}, h[1]); diff != "" {
				f.t.Errorf("the rewind's event (-want +got):\n%s", diff)
			}
		}},
		storeCase{"HistoryKeepsTheFirstAndLastEventsAndGoesWithCompaction", func(f *fixture) {
			f.insert("r", "w", 1, T0)
			now := T0
			total := store.HistoryFirst + store.HistoryLast + 30
			for i := 1; i <= total; i++ {
				now = now.Add(time.Second)
				tok := fmt.Sprint("t", i)
				f.claim(now, tok, "r")
				f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: tok}, now, "", now))
			}
			h := f.runHistory("r")
			// Each round is a claim (the first one not recorded) and a
			// suspension: 2*total - 1 events.
			last := int64(2*total - 1)
			var pos []int64
			for _, e := range h {
				pos = append(pos, e.Pos)
			}
			var want []int64
			for p := int64(1); p <= store.HistoryFirst; p++ {
				want = append(want, p)
			}
			for p := last - store.HistoryLast + 1; p <= last; p++ {
				want = append(want, p)
			}
			if diff := cmp.Diff(want, pos); diff != "" {
				f.t.Errorf("kept positions (-want +got):\n%s", diff)
			}
			if e := h[len(h)-1]; e.Kind != store.EventSuspended || !e.At.Equal(now) {
				f.t.Errorf("the last event kept = %+v, want the last suspension", e)
			}
			tok := "end"
			f.claim(now.Add(time.Second), tok, "r")
			f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: tok}, nil, `1`, now.Add(time.Second)))
			if ok, _, err := f.s.CompactRun(f.ctx, "r", now.Add(time.Minute)); err != nil || !ok {
				f.t.Fatalf("CompactRun = %v, %v", ok, err)
			}
			if h := f.runHistory("r"); len(h) != 0 {
				f.t.Errorf("a compacted run keeps %d events, want none", len(h))
			}
			// CompactBatch removes a history too.
			f.insert("s", "w", 1, now)
			f.claim(now.Add(time.Second), "s1", "s")
			f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: "s", Token: "s1"}, "boom", "x", 0, false, now.Add(time.Second)))
			f.claim(now.Add(2*time.Second), "s2", "s")
			f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "s", Token: "s2"}, nil, `1`, now.Add(2*time.Second)))
			if len(f.runHistory("s")) != 3 {
				f.t.Fatalf("a done run's history = %v, want its failure, its second claim and its completion", f.runHistory("s"))
			}
			if runs, _, _, err := f.s.CompactBatch(f.ctx, time.Second, 10, time.Time{}, now.Add(time.Hour), store.Scope{}); err != nil || runs != 1 {
				f.t.Fatalf("CompactBatch = %d, %v; want 1 run", runs, err)
			}
			if h := f.runHistory("s"); len(h) != 0 {
				f.t.Errorf("a run compacted by CompactBatch keeps %d events, want none", len(h))
			}
		}},
	)
}

func (f *fixture) runHistory(id string) []store.Event {
	f.t.Helper()
	h, err := f.s.ReadHistory(f.ctx, id)
	if err != nil {
		f.t.Fatalf("ReadHistory(%s): %v", id, err)
	}
	return h
}

// wantHistory checks run id's whole history.
func (f *fixture) wantHistory(id string, want []store.Event) {
	f.t.Helper()
	if diff := cmp.Diff(want, f.runHistory(id)); diff != "" {
		f.t.Errorf("history of %s (-want +got):\n%s", id, diff)
	}
}
