package durable

import (
	"context"
	"sync"
	"time"

	"skydurable/runtime/durable/store"
)

// DefaultHeartbeat is the short lease a worker renews while it holds a run:
// a worker killed with SIGKILL loses its runs to a peer this long after its
// last heartbeat, not after the full Lease.
const DefaultHeartbeat = 15 * time.Second

// heldLease is the lease a claim takes: the heartbeat lease, which Lease
// bounds, or the whole Lease when heartbeats are off.
func (e *Engine) heldLease() time.Duration {
	if e.heartbeat <= 0 {
		return e.lease
	}
	return min(e.heartbeat, e.lease)
}

// beat renews c's lease every third of the held lease until the returned
// stop is called (stop waits for a renewal in flight). A renewal that finds
// the lease gone marks the Ctx lost, so the body writes nothing more; one
// that fails otherwise is logged and tried again at the next beat (two
// missed beats in a row still leave a third of the lease).
func (e *Engine) beat(ctx context.Context, c *Ctx) (stop func()) {
	if e.heartbeat <= 0 {
		return func() {}
	}
	lease := e.heldLease()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			err := c.fenced(e.store.RenewLease(context.WithoutCancel(ctx), c.f, lease, e.now()))
			switch {
			case IsLeaseLost(err):
				return
			case err != nil:
				e.log.Warn("durable heartbeat failed; retrying at the next beat", "run", c.f.RunID, "workflow", c.workflow, "error", errText(err))
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			wg.Wait()
		})
	}
}

// Release frees a running run whose worker is known to be dead (`sky
// durable release`), so a peer resumes it now instead of when its lease
// ends: it is due at once, back in the status it had before the claim, and
// the dead worker's attempt stays counted. A run that is not running is
// refused. Releasing a run whose worker is alive only makes that worker
// lose its lease (it writes nothing more; a peer resumes from the journal).
func (e *Engine) Release(ctx context.Context, runID string) error {
	ok, err := e.store.ReleaseRun(ctx, runID, e.now())
	if err != nil || ok {
		if ok {
			operatorEvent(ctx, store.EventReleased, runID, "")
			e.log.Info("durable run released by an operator", "run", runID)
		}
		return err
	}
	return e.refuse(ctx, runID, "release", "only a running run can be released")
}
