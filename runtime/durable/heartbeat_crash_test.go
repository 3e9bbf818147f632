package durable_test

// Heartbeat crash test and benchmark: a child worker (crash_child_test.go)
// is SIGKILLed inside a step, and a peer in this process reclaims the run as
// soon as the heartbeat lease of the dead worker ends, long before the
// 30-minute Lease.

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/store"
)

// heartbeatEnv is the crashEnvHeartbeat value for d ("" for none).
func heartbeatEnv(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return d.String()
}

// peerTick is how often the peer polls while it waits for the run.
const peerTick = 100 * time.Millisecond

// killAndReclaim runs a child to the charge step's effect, checks that its
// heartbeat renews the lease and that the peer cannot claim the run while
// the child lives, waits wait, kills the child, and polls with the peer
// until it claims the run. It returns the time from the kill to the claim.
func killAndReclaim(tb testing.TB, s *crashSetup, peer *durable.Engine, wait time.Duration) time.Duration {
	tb.Helper()
	ctx := context.Background()
	wf := crashWorkflow(s.effects, s.attempts, func(string) {}).Erase()
	c := s.child(tb, pauseChargeEffect)
	c.await(tb, "READY "+pauseChargeEffect)
	first, _ := s.describe(tb)
	// Alive: the lease end moves on, and the peer never gets the run.
	deadline := time.Now().Add(childDeadline)
	for r := first; !r.WakeAt.After(first.WakeAt); r, _ = s.describe(tb) {
		if time.Now().After(deadline) {
			tb.Fatalf("the child's heartbeat never renewed its lease (it ends at %v)", first.WakeAt)
		}
		if worked, err := peer.Poll(ctx, []durable.Workflow{wf}); err != nil || worked {
			tb.Fatalf("the peer claimed a run whose worker is alive (%v, %v)", worked, err)
		}
		time.Sleep(peerTick)
	}
	time.Sleep(wait) // where in the heartbeat cycle the kill lands
	c.kill(tb)
	killed := time.Now()
	for {
		worked, err := peer.Poll(ctx, []durable.Workflow{wf})
		if err != nil {
			tb.Fatalf("peer poll: %v", err)
		}
		if worked {
			return time.Since(killed)
		}
		if time.Since(killed) > childDeadline {
			tb.Fatalf("no reclaim within %s of the kill", childDeadline)
		}
		time.Sleep(peerTick)
	}
}

// TestCrashHeartbeatReclaim: with a 600 ms heartbeat and the default
// 30-minute Lease, a SIGKILLed worker's run is taken over by a peer and
// finishes; the step it died in runs again with the same idempotency key.
func TestCrashHeartbeatReclaim(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			const beat = 600 * time.Millisecond
			s := newCrashSetup(t, driver, 10)
			s.heartbeat = beat
			peer := durable.New(s.d, durable.Options{Clock: time.Now, Heartbeat: beat, WorkerID: "peer"})
			took := killAndReclaim(t, s, peer, 0)
			t.Logf("%s: reclaimed %s after the kill (heartbeat %s, Lease %s)", driver, took.Round(time.Millisecond), beat, durable.DefaultLease)
			r, _ := s.describe(t)
			if r.Status != durable.StatusDone || r.Attempts != 2 {
				t.Fatalf("run %s after %d attempts (%q), want done after 2", r.Status, r.Attempts, r.LastError)
			}
			if keys := s.effectKeys(t); len(keys) != 2 || keys[0] != keys[1] {
				t.Errorf("charges sent %v, want the same key twice", keys)
			}
			// The history names the killed worker the peer reclaimed the run from.
			h, err := peer.History(context.Background(), "order-7")
			if err != nil {
				t.Fatal(err)
			}
			if len(h) != 2 || h[0].Kind != store.EventReclaimed || h[0].Actor != "peer" || h[0].Attempt != 2 ||
				h[0].Detail == "" || h[0].Detail == "peer" || h[1].Kind != store.EventDone || h[1].Actor != "peer" {
				t.Errorf("history after the kill = %+v, want reclaimed by peer from the killed worker (attempt 2), then done by peer", h)
			}
		})
	}
}

// BenchmarkReclaimAfterKill measures, with the default heartbeat (15 s) and
// Lease (30 min), the time from a worker's SIGKILL to a peer's claim of its
// run, the kill landing at spread points of the heartbeat cycle. It prints
// the figures (docs/benchmarks.md); it asserts none.
func BenchmarkReclaimAfterKill(b *testing.B) {
	const samples = 4
	for _, driver := range dbtest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			var took []time.Duration
			for range b.N {
				for i := range samples {
					s := newCrashSetup(b, driver, 10)
					s.heartbeat = durable.DefaultHeartbeat
					peer := durable.New(s.d, durable.Options{Clock: time.Now, WorkerID: "peer"})
					took = append(took, killAndReclaim(b, s, peer, time.Duration(i)*durable.DefaultHeartbeat/3/samples))
				}
			}
			slices.Sort(took)
			p50 := took[len(took)/2]
			b.ReportMetric(p50.Seconds(), "p50-reclaim-s")
			b.ReportMetric(took[len(took)-1].Seconds(), "max-reclaim-s")
			fmt.Printf("reclaim after kill -9 (%s, heartbeat %s, lease %s, peer tick %s): p50 %s, max %s, samples %v\n",
				driver, durable.DefaultHeartbeat, durable.DefaultLease, peerTick, p50.Round(10*time.Millisecond), took[len(took)-1].Round(10*time.Millisecond), took)
		})
	}
}
