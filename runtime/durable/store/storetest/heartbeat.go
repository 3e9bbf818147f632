package storetest

import (
	"time"

	"skydurable/runtime/durable/store"
)

// The heartbeat and operator-release cases.
func init() {
	cases = append(cases,
		storeCase{"HeartbeatMovesTheLeaseEnd", func(f *fixture) {
			const short = 15 * time.Second
			f.insert("r", "w", 1, T0)
			if _, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, T0, short, "tok", "worker-tok"); err != nil || !ok {
				f.t.Fatalf("ClaimRun with a short lease = %v, %v", ok, err)
			}
			if r := f.run("r"); !r.WakeAt.Equal(T0.Add(short)) {
				f.t.Errorf("after the claim the lease ends at %v, want claim + %s", r.WakeAt, short)
			}
			beat := T0.Add(10 * time.Second)
			f.ok("RenewLease", f.s.RenewLease(f.ctx, store.Fence{RunID: "r", Token: "tok"}, short, beat))
			if r := f.run("r"); !r.WakeAt.Equal(beat.Add(short)) || !r.ClaimedAt.Equal(beat) || r.Status != store.StatusRunning {
				f.t.Errorf("after a beat: %s, lease end %v, claimed_at %v; want running until beat + %s", r.Status, r.WakeAt, r.ClaimedAt, short)
			}
			// Past the first lease end, within the renewed one: not claimable.
			if _, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, T0.Add(20*time.Second), short, "peer", "worker-peer"); err != nil || ok {
				f.t.Errorf("a peer claimed a run whose lease a beat renewed (%v, %v)", ok, err)
			}
			f.wantLeaseLost("RenewLease with another token", f.s.RenewLease(f.ctx, store.Fence{RunID: "r", Token: "nope"}, short, beat))
			// No beat for a whole lease: a peer takes it over.
			if _, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, beat.Add(short+time.Second), short, "peer", "worker-peer"); err != nil || !ok {
				f.t.Fatalf("a peer did not reclaim a run whose heartbeat stopped (%v, %v)", ok, err)
			}
			f.wantLeaseLost("RenewLease of the old holder", f.s.RenewLease(f.ctx, store.Fence{RunID: "r", Token: "tok"}, short, beat.Add(short+2*time.Second)))
		}},
		storeCase{"ReleaseRunFreesARunningRunOnly", func(f *fixture) {
			f.insert("r", "w", 1, T0)
			f.claim(T0, "tok", "r")
			at := T0.Add(time.Minute)
			ok, err := f.s.ReleaseRun(f.ctx, "r", at)
			if err != nil || !ok {
				f.t.Fatalf("ReleaseRun of a running run = %v, %v; want true", ok, err)
			}
			r := f.step(store.OpRelease, "r", store.StatusRunning, store.StatusWaiting)
			if !r.WakeAt.Equal(at) || !r.ClaimedAt.IsZero() || r.Attempts != 1 {
				f.t.Errorf("released run: due %v, claimed_at %v, attempts %d; want due at the release, free, the attempt kept", r.WakeAt, r.ClaimedAt, r.Attempts)
			}
			f.wantLeaseLost("a write of the released worker", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "r", Token: "tok"}, JournalSteps(1)[0], at))
			if ok, err := f.s.ReleaseRun(f.ctx, "r", at); err != nil || ok {
				f.t.Errorf("ReleaseRun of a waiting run = %v, %v; want false", ok, err)
			}
			if ok, err := f.s.ReleaseRun(f.ctx, "missing", at); err != nil || ok {
				f.t.Errorf("ReleaseRun of an unknown run = %v, %v; want false", ok, err)
			}
			// A run whose last attempt failed goes back to failed.
			c := f.claim(at, "tok2", "r")
			f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: c.ID, Token: "tok2"}, "boom", "", 0, false, at))
			f.claim(at.Add(time.Second), "tok3", "r")
			if ok, err := f.s.ReleaseRun(f.ctx, "r", at.Add(2*time.Second)); err != nil || !ok {
				f.t.Fatalf("ReleaseRun = %v, %v", ok, err)
			}
			f.step(store.OpRelease, "r", store.StatusRunning, store.StatusFailed)
		}},
	)
}
