package durable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"skydurable/runtime/task"
)

// A run may be started with a deadline (StartWith; Sky's Durable.startWith):
// how long it may take from its start, on the store's clock (deadline_at).
// The deadline is enforced in three places, so no run outlives it by more
// than one step or one sweep:
//
//   - no claim leases a run past its deadline;
//   - the lease holder's next journal write or completion is refused, as if
//     its lease were lost: it stops at that step boundary, and the run is
//     not retried;
//   - a sweep (Store.TimeOutRuns) ends every overdue unfinished run
//     timed_out, wherever it is (waiting on a signal or a timer, failed and
//     backing off, running), revokes its lease and cancels its children.
//     Poll sweeps at most once per DeadlineSweep, at once after a worker of
//     this engine lost a lease (perhaps to the deadline); each sweep is one
//     statement on the deadline index, so runs without a deadline cost
//     nothing.

// DeadlineSweep is how often Poll sweeps for runs past their deadline (a
// run with a deadline ends timed_out at most this long after it).
const DeadlineSweep = time.Second

// deadlineSweepBatch is how many runs one sweep ends at most; the next
// poll's sweep goes on.
const deadlineSweepBatch = 1000

// StartOptions tune StartWith.
type StartOptions struct {
	// Deadline, when positive, is how long the run may take from its
	// start: past it the run ends timed_out, its children are cancelled
	// and a worker inside it stops at its next step. Zero: no deadline.
	Deadline time.Duration
	// Priority orders the claim: among due runs, higher priorities are
	// claimed first, then the most overdue (default 0).
	Priority int
}

// StartWith is Start with options (Sky's Durable.startWith). As Start it is
// idempotent on the id: starting an existing run again changes nothing,
// its deadline included.
func StartWith[I, O any](ctx context.Context, e *Engine, opts StartOptions, def Def[I, O], runID string, input I) error {
	js, err := def.encodeInput(runID, input)
	if err != nil {
		return err
	}
	return e.start(ctx, def.name, def.version, runID, js, runOptions{StartOptions: opts, limits: def.limits})
}

// StartJSONWith is StartJSON with options (the Sky binding uses it).
func (e *Engine) StartJSONWith(ctx context.Context, opts StartOptions, w Workflow, runID, input string) error {
	return e.start(ctx, w.Name, w.Version, runID, input, runOptions{StartOptions: opts, limits: w.Limits})
}

// checkStartOptions refuses a deadline that is not a positive duration
// and a priority out of range.
func checkStartOptions(opts StartOptions, runID string) error {
	if opts.Deadline < 0 {
		return task.Errorf(task.InvalidInput,
			"durable: the deadline of run %q is %s, which is negative; hint: a positive duration such as 24h, or none (0)", runID, opts.Deadline)
	}
	if opts.Deadline > 0 && opts.Deadline < time.Millisecond {
		return task.Errorf(task.InvalidInput,
			"durable: the deadline of run %q is %s, under the store's millisecond resolution; hint: at least 1ms", runID, opts.Deadline)
	}
	return checkPriority(runID, opts.Priority)
}

// deadlineSweeper throttles the sweeps of one engine.
type deadlineSweeper struct {
	mu   sync.Mutex
	last time.Time // when the last sweep began (zero: none yet)
	soon bool      // sweep at the next poll (a lease was lost)
}

// due reports whether a sweep should run at now, and if so takes it.
func (s *deadlineSweeper) due(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.soon && !s.last.IsZero() && now.Sub(s.last) < DeadlineSweep && !now.Before(s.last) {
		return false
	}
	s.last, s.soon = now, false
	return true
}

// leaseLost makes the next poll sweep: the lease may have gone to the
// deadline, and the run is then ended at once rather than a sweep later.
func (s *deadlineSweeper) leaseLost() {
	s.mu.Lock()
	s.soon = true
	s.mu.Unlock()
}

// pending reports whether a lost lease asked for a sweep at the next poll.
func (s *deadlineSweeper) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.soon
}

// sweepDue reports whether this engine should sweep for runs past their
// deadline now, and if so takes the sweep.
func (e *Engine) sweepDue() bool {
	at := e.now()
	if at.IsZero() {
		at = time.Now() // the database clock decides; this only throttles
	}
	return e.deadlines.due(at)
}

// sweepDeadlines ends the runs past their deadline.
func (e *Engine) sweepDeadlines(ctx context.Context) error {
	timedOut, cancelled, err := e.store.TimeOutRuns(ctx, e.now(), deadlineSweepBatch)
	if err != nil {
		return fmt.Errorf("durable: sweeping runs past their deadline: %w", err)
	}
	if timedOut > 0 {
		e.log.Info("durable runs timed out: their deadline passed", "runs", timedOut, "children_cancelled", cancelled, "worker", e.worker)
	}
	return nil
}
