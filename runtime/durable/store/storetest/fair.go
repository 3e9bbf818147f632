package storetest

import (
	"fmt"
	"time"

	"github.com/google/go-cmp/cmp"
)

func init() { cases = append(cases, fairCases...) }

// claimAll claims (and so starts) runs of w one after another, a
// millisecond apart from at, until none is due, and returns their ids in
// claim order.
func (f *fixture) claimAll(at time.Time) []string {
	f.t.Helper()
	var got []string
	for i := 0; ; i++ {
		c, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, at.Add(time.Duration(i)*time.Millisecond), Lease, fmt.Sprint("t", i), "worker")
		if err != nil {
			f.t.Fatalf("ClaimRun: %v", err)
		}
		if !ok {
			return got
		}
		got = append(got, c.ID)
	}
}

// fairCases pin the key queue (migrations: PostgreSQL 0014, SQLite 0012):
// the fresh runs of one perKey key take turns with the other keys' runs.
var fairCases = []storeCase{
	{"KeysTakeTurns", func(f *fixture) {
		at := func(ms int) time.Time { return T0.Add(time.Duration(ms) * time.Millisecond) }
		n := 0
		for _, k := range []string{"a", "b", "c"} {
			for i := 1; i <= 3; i++ {
				n++
				f.insertWith(fmt.Sprint(k, i), "w", 0, k, at(n))
			}
		}
		f.insertWith("plain", "w", 0, "", at(n+1)) // no key: no queue
		want := []string{"a1", "b1", "c1", "plain", "a2", "b2", "c2", "a3", "b3", "c3"}
		if got := f.claimAll(T0.Add(time.Minute)); !cmp.Equal(got, want) {
			f.t.Errorf("claim order %v, want the keys taking turns %v", got, want)
		}
	}},
	{"AKeyWithABacklogLetsALaterKeyIn", func(f *fixture) {
		for i := range 500 {
			f.insertWith(fmt.Sprint("a", i), "w", 0, "a", T0.Add(time.Duration(i)*time.Millisecond))
		}
		f.insertWith("b", "w", 0, "b", T0.Add(time.Second))
		now := T0.Add(time.Minute)
		f.claim(now, "A", "a0")
		f.claim(now.Add(time.Millisecond), "B", "b") // before a1, promoted when a0 was claimed
		f.claim(now.Add(2*time.Millisecond), "C", "a1")
		// Only a key's head is due: the other 497 wait behind it, never due.
		if r := f.run("a3"); !r.WakeAt.IsZero() {
			f.t.Errorf("a queued run is due at %v; want never (behind its key's head)", r.WakeAt)
		}
	}},
	{"AHeadThatLeavesOtherwisePassesTheTurn", func(f *fixture) {
		f.insertWith("a1", "w", 0, "a", T0)
		f.insertWith("a2", "w", 0, "a", T0.Add(time.Millisecond))
		f.insertWith("a3", "w", 0, "a", T0.Add(2*time.Millisecond))
		if ok, err := f.s.CancelRun(f.ctx, "a2", T0.Add(time.Second)); err != nil || !ok {
			f.t.Fatalf("CancelRun(a2, queued) = %v, %v", ok, err)
		}
		if ok, err := f.s.CancelRun(f.ctx, "a1", T0.Add(2*time.Second)); err != nil || !ok {
			f.t.Fatalf("CancelRun(a1, the head) = %v, %v", ok, err)
		}
		if r := f.run("a3"); !r.WakeAt.Equal(T0.Add(2 * time.Second)) {
			f.t.Errorf("after its head was cancelled a3 is due at %v, want when the head left", r.WakeAt)
		}
		f.claim(T0.Add(3*time.Second), "A", "a3")
	}},
}
