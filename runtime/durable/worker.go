package durable

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// WorkerOptions tune Work. Zero fields take the defaults.
type WorkerOptions struct {
	// Concurrency is how many runs the worker advances at once (default
	// 4): that many pollers, each claiming and advancing one run at a time.
	Concurrency int
	// Tick is how often an idle poller looks for due runs (default 1s).
	// A poller that advanced a run polls again at once (drain).
	Tick time.Duration
	// StopTimeout is how long the runs in flight may go on once ctx ends
	// (default 10s); then their bodies are cancelled and the runs given
	// back, due at once, for another worker.
	StopTimeout time.Duration
	// Versions is the PollOptions.Versions of every poll.
	Versions VersionPolicy
	// Hints wake idle pollers at once when a run becomes due, where the
	// store announces it (PostgreSQL NOTIFY, see ListenForHints); Off, or
	// an empty URL without Own (HintSettings.For), leaves the tick, and
	// on PostgreSQL the worker reports NoURL.
	Hints HintSettings
	// Report receives problems that do not stop the worker (a failed
	// poll, a lost hint connection). nil: dropped.
	Report func(string)
}

// DefaultWorkerConcurrency, DefaultWorkerTick and DefaultStopTimeout are
// the defaults of WorkerOptions.
const (
	DefaultWorkerConcurrency = 4
	DefaultWorkerTick        = time.Second
	DefaultStopTimeout       = 10 * time.Second
)

// WorkerStats are what a worker did, for its exit line.
type WorkerStats struct {
	// Advanced counts the runs advanced.
	Advanced int64
}

// Work runs a worker until ctx ends (Sky's Durable.worker): Concurrency
// pollers claim and advance due runs of defs, each draining while there is
// work and then waiting for its tick or a NOTIFY hint. When ctx ends (say,
// on SIGTERM) no poller claims again; the runs in flight go on for up to
// StopTimeout, then are given back. A failed poll (the database is down)
// is reported and tried again at the next tick. A run whose body asks the
// program to stop (IsHalt: Sky's System.exit) stops the worker at once: the
// runs in flight are given back and Work returns that error. It returns nil
// after a graceful stop; an error otherwise only when defs is empty or Work
// is called inside a step's task.
func (e *Engine) Work(ctx context.Context, defs []Workflow, opts WorkerOptions) (WorkerStats, error) {
	if err := refuseInStep(ctx, "Durable.worker"); err != nil {
		return WorkerStats{}, err
	}
	if len(defs) == 0 {
		return WorkerStats{}, task.Errorf(task.InvalidInput, "durable worker: no workflows to run; hint: pass the RegisteredWorkflow values of the program (Durable.erase)")
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultWorkerConcurrency
	}
	if opts.Tick <= 0 {
		opts.Tick = DefaultWorkerTick
	}
	if opts.StopTimeout <= 0 {
		opts.StopTimeout = DefaultStopTimeout
	}
	report := opts.Report
	if report == nil {
		report = func(string) {}
	}
	// The runs in flight outlive ctx by up to StopTimeout; a halt ends
	// both at once.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	halt := func(err error) {
		stop(err)
		cancelRuns()
	}
	go func() {
		select {
		case <-ctx.Done():
		case <-runCtx.Done():
			return
		}
		t := time.NewTimer(opts.StopTimeout)
		defer t.Stop()
		select {
		case <-t.C:
			cancelRuns()
		case <-runCtx.Done():
		}
	}()

	kick := make(chan struct{}, opts.Concurrency)
	wake := func(string) {
		for range opts.Concurrency {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}
	var wg sync.WaitGroup
	if opts.Hints.Listens() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A store without hints (SQLite) leaves the tick, silently.
			if err := e.listen(ctx, opts.Hints.URL, wake, report); err != nil && ctx.Err() == nil && !errors.Is(err, store.ErrNoNotifications) {
				report(err.Error() + "; polling on the tick only")
			}
		}()
	}
	if !opts.Hints.Listens() && !opts.Hints.Off && opts.Hints.NoURL != "" && e.db.Notifies() {
		report("durable hints: " + opts.Hints.NoURL + "; polling on the tick only")
	}
	// The tick kicks one idle poller, whichever it is: a poller busy with a
	// long step must not hold up the others' look at the database (without
	// hints nothing else wakes them; TestWorkerTicksWhileAPollerIsBusy).
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(opts.Tick)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
	}()
	var stats WorkerStats
	var halting atomic.Bool
	for i := range opts.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.poller(ctx, runCtx, defs, opts, i == 0, kick, wake, report, halt, &halting, &stats.Advanced)
		}()
	}
	wg.Wait()
	e.log.Info("durable worker stopped", "worker", e.worker, "advanced", stats.Advanced)
	if cause := context.Cause(ctx); IsHalt(cause) {
		return stats, cause
	}
	return stats, nil
}

// A poller of Work goes on from a run it completed to the next due one, on
// PostgreSQL with the completion and the claim in one statement (shared
// with the other pollers': group commit), as PollWith does: up to
// workerChainRuns runs in a row, and for workerChainFor at most, after
// which it polls again (Engine.background's turn: the deadline sweep and
// the schedules, once a second). Workflows with limits are claimed one poll
// at a time (their claim admits them; a chained one would not).
const (
	workerChainRuns = 100
	workerChainFor  = time.Second
)

// poller is one of Work's loops: poll, drain, wait for a kick (a hint,
// Work's tick, or another poller that found work); the worker's first
// poller (the watcher) polls once at the start. Each tick kicks one idle
// poller, so an idle worker polls once per tick, not once per poller: one
// statement a second (Engine.background's probe), and while it listens for
// hints none until the probe's next due time (quietWindow). The first
// claim of a drain wakes the idle pollers: more runs may be due. A poll
// that a rate limit refused waits only until the limit's next token, so
// the limit delivers its rate. A body's System.exit stops the worker
// (halt); from then on no poller claims (halting).
func (e *Engine) poller(ctx, runCtx context.Context, defs []Workflow, opts WorkerOptions, watcher bool, kick <-chan struct{}, wake func(string), report func(string), halt func(error), halting *atomic.Bool, advanced *int64) {
	tick := time.NewTimer(0)
	defer tick.Stop()
	if !watcher {
		tick.Stop()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-kick:
		}
		var next time.Duration // none: wait for a kick
		for first := true; ctx.Err() == nil; first = false {
			claimed := func() {
				if first {
					first = false // one wake a drain, not one a chained run
					wake("")
				}
			}
			worked, wait, err := e.pollWait(runCtx, defs, PollOptions{Versions: opts.Versions, claimed: claimed, quiet: true, halting: halting,
				stop: ctx.Done(), MaxRuns: workerChainRuns, chainFor: workerChainFor, advanced: advanced})
			if IsHalt(err) {
				halt(err)
				return
			}
			if err != nil {
				if runCtx.Err() == nil {
					report("durable worker: poll failed: " + errText(err) + "; trying again at the next tick")
				}
				break
			}
			if !worked {
				if wait > 0 && (next == 0 || wait < next) {
					next = wait
				}
				break
			}
		}
		if next > 0 {
			tick.Reset(next)
		}
	}
}
