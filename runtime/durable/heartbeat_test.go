package durable

import (
	"context"
	"errors"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestHeartbeatKeepsALongStep: a step that runs for three held leases is
// never taken over by a peer polling all along, because the worker's
// heartbeat renews the lease (without it the peer would claim the run once
// the first 1 s lease ended). Real clocks: the heartbeat runs in real
// time.
func TestHeartbeatKeepsALongStep(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		// A beat long enough that a loaded machine (CI's 2 cores busy with
		// other packages' tests) still renews in time: at 200ms a peer
		// stole the run under load average 8, at 1s once under load 17
		// (the peer's tight poll loop shares the process). The step lasts
		// two beats, so without renewals the lease would run out halfway.
		const beat = 1500 * time.Millisecond
		real := func(name string) *Engine {
			return h.engine(name, func(o *Options) { o.Clock, o.Heartbeat = nil, beat })
		}
		a, b := real("A"), real("B")
		var wf Workflow
		stolen, peerPolls := 0, 0
		def := Register("long-step", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.From(func(context.Context) (string, error) {
				for began := time.Now(); time.Since(began) < 2*beat; peerPolls++ {
					worked, err := b.Poll(h.ctx, []Workflow{wf}) // not ctx: its statements would join the step's transaction
					if err != nil {
						return "", err
					}
					if worked {
						stolen++
					}
				}
				return "worked", nil
			}))
		})
		wf = def.Erase()
		if err := Start(h.ctx, a, def, "long", "x"); err != nil { // due by the real clock
			t.Fatal(err)
		}
		if !h.poll(a, wf) {
			t.Fatal("no work")
		}
		r := h.wantStatus("long", StatusDone)
		if stolen != 0 || r.Attempts != 1 || peerPolls == 0 {
			t.Errorf("a peer claimed the run %d times in %d polls (attempts %d); want never, 1 attempt", stolen, peerPolls, r.Attempts)
		}
	})
}

// TestStepsHoldTheLeaseWithoutHeartbeats: with heartbeats off a claim holds
// the whole Lease and each journalled step renews it, so a run whose steps
// take 40 s each under a one-minute lease is never taken over by a peer
// polling at each step (step b's poll is past the claim's lease: without
// step a's renewal the peer would claim the run there).
func TestStepsHoldTheLeaseWithoutHeartbeats(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		off := func(name string) *Engine {
			return h.engine(name, func(o *Options) { o.Heartbeat, o.Lease = -1, time.Minute })
		}
		a, b := off("A"), off("B")
		var wf Workflow
		stolen, peerPolls := 0, 0
		step := func(c *Ctx, id string) task.Task[string] {
			return Step(c, str, id, task.From(func(context.Context) (string, error) {
				h.clock.Advance(40 * time.Second)
				worked, err := b.Poll(h.ctx, []Workflow{wf}) // not ctx: its statements would join the step's transaction
				peerPolls++
				if worked {
					stolen++
				}
				return id, err
			}))
		}
		def := Register("slow-steps", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(step(c, "a"), func(string) task.Task[string] {
				return task.AndThen(step(c, "b"), func(string) task.Task[string] { return step(c, "c") })
			})
		})
		wf = def.Erase()
		h.start(def, "slow", "x")
		if !h.poll(a, wf) {
			t.Fatal("no work")
		}
		r := h.wantStatus("slow", StatusDone)
		if stolen != 0 || r.Attempts != 1 || peerPolls != 3 {
			t.Errorf("a peer claimed the run %d times in %d polls (attempts %d); want never in 3, 1 attempt", stolen, peerPolls, r.Attempts)
		}
	})
}

// TestHeartbeatBoundedByLease: the held lease is the heartbeat, at most the
// Lease, or the whole Lease with heartbeats off.
func TestHeartbeatBoundedByLease(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	for _, c := range []struct {
		opts Options
		want time.Duration
	}{
		{Options{}, DefaultHeartbeat},
		{Options{Lease: 5 * time.Second}, 5 * time.Second},
		{Options{Heartbeat: -1}, DefaultLease},
		{Options{Heartbeat: time.Second, Lease: time.Minute}, time.Second},
	} {
		if got := New(d, c.opts).heldLease(); got != c.want {
			t.Errorf("Options{Lease: %s, Heartbeat: %s}: held lease %s, want %s", c.opts.Lease, c.opts.Heartbeat, got, c.want)
		}
	}
}

// TestReleaseFreesARunningRun: an operator releases a run whose worker is
// dead; it is due at once and a peer resumes it from the journal, while the
// old holder (were it alive) writes nothing more. A run that is not running
// is refused with a clear error; an unknown id is NotFound.
func TestReleaseFreesARunningRun(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := Register("held", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "a", cnt.effect("a", "A"))
		})
		h.start(def, "r", "x")
		if _, ok, err := h.e.store.ClaimRun(h.ctx, []string{"held"}, h.clock.Now(), DefaultLease, "dead-worker", "ghost"); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if h.poll(h.e, def.Erase()) {
			t.Fatal("a peer claimed a run held under a live lease")
		}
		if err := h.e.Release(h.ctx, "r"); err != nil {
			t.Fatalf("release: %v", err)
		}
		if r := h.wantStatus("r", StatusWaiting); !r.WakeAt.Equal(h.clock.Now()) || r.ClaimedBy != "ghost" && !r.ClaimedAt.IsZero() {
			t.Errorf("released run due %v claimed_at %v; want due now and free", r.WakeAt, r.ClaimedAt)
		}
		h.drain(h.e, def.Erase())
		if r := h.wantStatus("r", StatusDone); r.Attempts != 2 || cnt.get("a") != 1 {
			t.Errorf("attempts %d, step ran %d times; want 2 (the dead worker's attempt counts) and 1", r.Attempts, cnt.get("a"))
		}
		err := h.e.Release(h.ctx, "r")
		wantErrContains(t, err, task.Conflict, `cannot release run "r"`, "it is done", "only a running run can be released")
		if !errors.Is(err, ErrRefused) {
			t.Errorf("release of a done run: %v does not wrap ErrRefused", err)
		}
		wantErrContains(t, h.e.Release(h.ctx, "nope"), task.NotFound, `"nope"`)
	})
}
