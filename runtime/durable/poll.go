package durable

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// PollOptions tune one Poll.
type PollOptions struct {
	// MaxRuns is how many due runs one call may advance, one after another
	// (default 1). Poll stops early when none is due. Between two runs, on
	// PostgreSQL, the completion of one and the claim of the next share one
	// statement and one commit.
	MaxRuns int
	// Versions says what to do with a run whose workflow version is not
	// among defs (default PinToStart: leave it for a worker that has it).
	Versions VersionPolicy
	// claimed, when set, is called when the poll claims a run, before it
	// advances it (Work wakes its idle pollers then).
	claimed func()
	// quiet lets the poll trust an earlier idle probe while the engine's
	// hint listener heard nothing (Work's pollers; see quietWindow).
	quiet bool
	// halting is Work's: an attempt that halts the program (Halter) sets
	// it before it releases its run, and a poll that finds it set claims
	// nothing, so no other poller of the stopping worker takes the released
	// run (its claim could be cut off by the stop after it committed,
	// leaving the run held until its lease ends).
	halting *atomic.Bool
	// stop is Work's stop (its context's Done): once it is closed the poll
	// claims no run, not even the next one with a completion, while the
	// runs in flight go on.
	stop <-chan struct{}
	// chainFor, when set, bounds how long one call goes on to a next run
	// after it began (the engine's clock), so a poller draining a backlog
	// comes back to Engine.background (the deadline sweep, the schedules)
	// in time: the run in hand when it is over is the call's last.
	chainFor time.Duration
	// advanced, when set, counts the runs the poll advanced.
	advanced *int64
}

// stopping reports whether an attempt of this Work loop halted the program
// or the worker is stopping.
func (o PollOptions) stopping() bool {
	if o.halting != nil && o.halting.Load() {
		return true
	}
	select {
	case <-o.stop: // nil: never
		return true
	default:
		return false
	}
}

// Poll claims one due run whose workflow (and version, see PinToStart) is
// among defs and advances it until it suspends, completes or fails (Sky's
// Durable.poll). didWork is false when no run was due. A worker that loses
// its lease mid-run stops, logs it and returns normally. err is only a
// failure of the engine itself (for example an unreachable database); a
// failing workflow body is recorded on its run.
func (e *Engine) Poll(ctx context.Context, defs []Workflow) (didWork bool, err error) {
	return e.PollWith(ctx, defs, PollOptions{})
}

// PollWith is Poll with options (Sky's Durable.pollWith). defs may hold
// several versions of one workflow name: each run is advanced by the body
// of the version it was started with.
func (e *Engine) PollWith(ctx context.Context, defs []Workflow, opts PollOptions) (didWork bool, err error) {
	if err := refuseInStep(ctx, "Durable.poll"); err != nil {
		return false, err
	}
	didWork, _, err = e.pollWait(ctx, defs, opts)
	return didWork, err
}

// pollWait is PollWith that also says, when it found no run to claim
// because a rate limit held a due one back, how long until that limit's
// next token: when the worker's poller polls again (worker.go).
func (e *Engine) pollWait(ctx context.Context, defs []Workflow, opts PollOptions) (didWork bool, wait time.Duration, err error) {
	if e.optsErr != nil {
		return false, 0, e.optsErr
	}
	if opts.stopping() {
		return false, 0, nil
	}
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 1
	}
	reg, err := newRegistry(defs)
	if err != nil {
		return false, 0, err
	}
	if len(reg.names) == 0 {
		return false, 0, nil
	}
	if err := e.prepareFlow(ctx, &reg); err != nil {
		return false, 0, err
	}
	if idle, err := e.background(ctx, &reg, opts.quiet); err != nil || idle {
		return false, 0, err
	}
	var ch chain
	began := e.localNow()
	for i := 0; i < opts.MaxRuns && !opts.stopping(); i++ {
		// more: another run may follow this one in this call. Past chainFor
		// none does (the call returns after this run, which claims no next),
		// so the caller's next poll takes Engine.background's turn.
		more := i+1 < opts.MaxRuns && (opts.chainFor <= 0 || e.localNow().Sub(began) < opts.chainFor)
		// A chained claim (completeAndClaim) knows no limits.
		ch.on = more && len(reg.limited) == 0 && !opts.stopping()
		worked, err := e.pollOne(ctx, reg, opts, &ch)
		didWork = didWork || worked
		if worked && opts.advanced != nil {
			atomic.AddInt64(opts.advanced, 1)
		}
		if err != nil || !worked || ch.none {
			return didWork, ch.wait, err
		}
		if !more {
			break
		}
	}
	return didWork, 0, nil
}

// background does a poll's share of the work no run asks for: at most once
// per second of this engine's clock (DeadlineSweep, ScheduleCheckInterval)
// one statement (store.Probe) says whether a run of reg is due, a deadline
// has passed, a schedule tick is due and finished runs wait to enter the
// search index (SQLite), and only what it found is done: the deadline
// sweep, the search backlog (up to searchIndexBatches transactions), the
// schedule ticks. idle is true when nothing is due for reg, so the poll
// need not claim: an idle worker costs one cheap
// statement a second, and, while it listens for hints, one per quietMax at
// most (quiet: see quietWindow; TestCostsAreCounted, BenchmarkIdleWorker).
func (e *Engine) background(ctx context.Context, reg *registry, quiet bool) (idle bool, err error) {
	if e.retentionDue() {
		if _, err := e.RunRetention(ctx); err != nil {
			return false, err
		}
	}
	if quiet {
		// live before heard: a listener back in effect counted a hint first.
		live := e.hints.live.Load() > 0
		if live && !e.deadlines.pending() && e.quiet.holds(reg.names, e.localNow(), e.hints.heard.Load()) {
			return true, nil
		}
	}
	sweep, schedules := e.sweepDue(), e.scheduleCheckDue()
	if !sweep && !schedules {
		return false, nil
	}
	heard, began := e.hints.heard.Load(), e.localNow()
	p, err := e.store.Probe(ctx, reg.names, e.now(), quietMax)
	if err != nil {
		return false, fmt.Errorf("durable: looking for due work: %w", err)
	}
	if sweep && p.Overdue {
		if err := e.sweepDeadlines(ctx); err != nil {
			return false, err
		}
	}
	for i := 0; p.SearchBacklog && i < searchIndexBatches; i++ {
		n, err := e.store.IndexSearch(ctx, searchIndexBatch)
		if err != nil {
			return false, err
		}
		p.SearchBacklog = n == searchIndexBatch
	}
	fired := 0
	if schedules && p.SchedulesDue {
		if fired, err = e.fireSchedules(ctx, reg); err != nil {
			return false, err
		}
	}
	idle = !p.Due && fired == 0
	if idle && p.Next > 0 {
		e.quiet.open(reg.names, began.Add(p.Next), heard)
	}
	return idle, nil
}

// A worker that listens for hints (Work with HintSettings, on PostgreSQL)
// need not probe every second: the probe also says when the first thing it
// looks for falls due (store.Probe.Next: a run's wake time, which is also
// the end of a crashed worker's lease, a deadline, a schedule tick), and
// whatever makes work due sooner sends a hint (a start, a signal that wakes
// a run, a retry, a wake, a release, a suspension, a schedule declared:
// notify.go). So after an idle probe Work's polls send nothing until that
// time, unless a hint was heard since the probe began (a poll then probes
// again at the next second) or no listener is in effect (a lost session:
// its hints may be lost; every second then, as without hints). SQLite, a
// transaction pooler without SKY_DURABLE_LISTEN_URL and
// SKY_DURABLE_NOTIFY=off have no listener: a probe a second there.

// searchIndexBatch is how many finished runs one transaction moves from
// SQLite's search backlog into its search index (Store.IndexSearch); a
// background pass (at most once a second a worker) writes up to
// searchIndexBatches of them (BenchmarkSearch times one): a SQLite database that
// finishes more runs than that a second grows its backlog until it is
// quieter, and a search reads the backlog row by row.
const (
	searchIndexBatch   = 500
	searchIndexBatches = 10
)

// quietMax caps the quiet after a probe: a run due later is still found
// this long after the probe at the latest, so a change that no hint
// announced (a session that died without an error yet, a schedule declared
// by an engine older than the hint on PutSchedule, a hand-made update)
// costs at most this much latency, and an idle worker costs PostgreSQL one
// statement per quietMax (a thirtieth of the probe a second).
const quietMax = 30 * time.Second

// quietWindow is the last idle probe's promise: nothing of names falls due
// before until, as long as no hint came after heard.
type quietWindow struct {
	mu    sync.Mutex
	names []string
	until time.Time
	heard uint64
}

// open records an idle probe of names that began when the hint count was
// heard.
func (q *quietWindow) open(names []string, until time.Time, heard uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.names, q.until, q.heard = names, until, heard
}

// holds reports whether a poll of names at now may skip its probe: the
// window is open for names and no hint came since (heard).
func (q *quietWindow) holds(names []string, now time.Time, heard uint64) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return heard == q.heard && now.Before(q.until) && slices.Equal(names, q.names)
}

// hintState is what the engine's hint listeners (Engine.listen) tell its
// polls: how many are in effect, and how many hints they heard.
type hintState struct {
	live  atomic.Int64
	heard atomic.Uint64
}

// releaseTimeout bounds the release of a run by a stopping worker.
const releaseTimeout = 5 * time.Second

// chain links the runs one PollWith call advances: a run that completes
// while another may follow is completed by a statement that also claims the
// next run (completeAndClaim: one round trip and one commit, not two).
type chain struct {
	on bool // another run may follow this one
	// next is the run claimed with the last completion, and its token.
	next  *store.Claimed
	token string
	none  bool // the last completion's claim found no due run
	// wait is the time to a rate limit's next token when the last claim
	// found nothing because the limit held a due run back.
	wait time.Duration
}

func (e *Engine) newToken() string { return fmt.Sprintf("%s/%016x", e.worker, e.randUint64()) }

// claim leases one due run this worker may advance under policy; wait is
// ClaimLimited's.
func (e *Engine) claim(ctx context.Context, reg registry, policy VersionPolicy, token string) (cl store.Claimed, ok bool, wait time.Duration, err error) {
	began := time.Now()
	switch {
	case len(reg.limited) > 0:
		cl, ok, wait, err = e.store.ClaimLimited(ctx, store.LimitedClaim{Names: reg.names, Keys: reg.keys, Pinned: policy != FailSafe,
			Limited: reg.limited, Rated: reg.rated, Lease: e.heldLease(), Token: token, Worker: e.worker}, e.now())
	case policy == FailSafe:
		cl, ok, err = e.store.ClaimRun(ctx, reg.names, e.now(), e.heldLease(), token, e.worker)
	default:
		cl, ok, err = e.store.ClaimPinned(ctx, reg.keys, e.now(), e.heldLease(), token, e.worker)
	}
	e.tel.claimed(ctx, began, ok)
	return cl, ok, wait, err
}

// pollOne claims (or takes the run ch carries) and advances one run.
func (e *Engine) pollOne(ctx context.Context, reg registry, opts PollOptions, ch *chain) (bool, error) {
	var cl store.Claimed
	var token string
	var err error
	if ch.next != nil {
		cl, token = *ch.next, ch.token
		ch.next = nil
	} else {
		token = e.newToken()
		var ok bool
		if cl, ok, ch.wait, err = e.claim(ctx, reg, opts.Versions, token); err != nil || !ok {
			return false, err
		}
	}
	if opts.claimed != nil {
		opts.claimed()
	}
	_, err = e.advance(ctx, reg, opts, ch, cl, token)
	return true, err
}

// advanced is how the attempt advance ran ended: its outcome as the
// attempt's telemetry names it ("done", "failed", "dead", "suspended",
// "lease_lost", "released", or "error": an injected crash, or a failure
// of the engine), and the body's output when done.
type advanced struct {
	outcome, output string
}

// advance runs one attempt of cl, claimed with token (by pollOne's claim,
// or RunNow's insert), until it suspends, completes or fails, and records
// that on the run. ch carries the claim of the next run when the
// completion may take one (ch.on). err is a failure of the engine only.
func (e *Engine) advance(ctx context.Context, reg registry, opts PollOptions, ch *chain, cl store.Claimed, token string) (a advanced, err error) {
	versions := opts.Versions
	ctx, att := e.tel.startAttempt(ctx, cl)
	defer func() {
		a.outcome = att.outcome // set last, by whichever write ended the attempt
		att.end(ctx)
	}()
	spanEvent(ctx, store.EventClaimed, e.worker, "", "")
	f := store.Fence{RunID: cl.ID, Token: token}
	log := e.log.With("run", cl.ID, "workflow", cl.Workflow, "attempt", cl.Attempts, "worker", e.worker)
	log.Info("durable run claimed", "version", cl.Version)

	if err := e.sealed.openClaim(&cl); err != nil {
		return a, e.keyFailure(ctx, log, f, cl, reg.newest(cl.Workflow).Retry.WithDefaults(), err, "")
	}
	w, known := reg.lookup(cl.Workflow, cl.Version)
	if !known {
		// Only FailSafe claims a version it lacks: the attempt fails, and
		// is retried (by a worker that has it, perhaps) or ends dead.
		msg := versionMissing(cl.Workflow, cl.Version, reg.byName[cl.Workflow])
		return a, e.failAttempt(ctx, log, f, cl, reg.newest(cl.Workflow).Retry.WithDefaults(), msg, "")
	}
	policy := w.Retry.WithDefaults()

	if cl.Attempts > policy.MaxAttempts && !strings.HasSuffix(cl.LastError, keyFailureNote) {
		// Only crashes (or lost leases) get here: a failure that used up the
		// attempts already made the run dead.
		msg := fmt.Sprintf("attempt %d exceeds the limit of %d attempts: earlier attempts crashed or lost their lease before finishing", cl.Attempts, policy.MaxAttempts)
		if cl.LastError != "" {
			msg += "; last error: " + cl.LastError
		}
		return a, e.finish(ctx, log, f, e.store.Fail(ctx, f, storableText(msg), "", 0, true, e.now()), slog.LevelError, "durable run dead", "error", msg)
	}

	journal := cl.Journal
	if !cl.JournalRead {
		if journal, err = e.store.LoadJournal(ctx, cl.ID); err != nil {
			return a, err
		}
	}
	if err := e.sealed.openJournal(cl.ID, journal); err != nil {
		return a, e.keyFailure(ctx, log, f, cl, policy, err, "")
	}
	c := newCtx(e, cl, token, journal)
	c.maxAttempts = policy.MaxAttempts
	stopBeat := e.beat(ctx, c)
	out, bodyErr := runBody(ctx, c, w, cl.Input)
	stopBeat()
	end := c.end(out, bodyErr)
	switch end.outcome {
	case attemptCrashed:
		log.Warn("durable worker stopped at an injected crash point; the run stays claimed until its lease runs out", "step", c.at())
		return a, nil
	case attemptLeaseLost:
		att.outcome = "lease_lost"
		spanEvent(ctx, eventLeaseLost, e.worker, "", c.at())
		e.deadlines.leaseLost()
		log.Warn("durable lease lost: another worker owns the run now, or it was cancelled or timed out; stopping", "step", c.at())
		return a, nil
	case attemptSuspended:
		att.outcome = "suspended"
		return a, nil
	case attemptDone:
		a.output = out
		// The last step's pending entry is written with the outcome.
		last := c.takePending()
		if ch.on && !opts.stopping() {
			return a, e.completeAndClaim(ctx, log, c, f, last, out, reg, versions, ch)
		}
		err := e.store.Complete(ctx, f, last, out, e.now())
		if err == nil && last != nil {
			c.journalled(*last)
			if c.cross(AfterCommit, *last, false) != nil {
				return a, nil
			}
		}
		return a, e.finish(ctx, log, f, err, slog.LevelInfo, "durable run done", "step", c.at())
	}
	// attemptFailed or attemptHalted. An attempt that failed after a step
	// whose entry is still pending writes it first (also when the worker is shutting down), so the retry
	// replays the step instead of running it again. A pending final
	// failure is dropped instead: the body did not go on past it.
	c.dropFailure()
	if err := c.flush(ctx); err != nil {
		if IsLeaseLost(err) || IsCrashed(err) {
			e.deadlines.leaseLost()
			log.Warn("durable lease lost: another worker owns the run now, or it was cancelled or timed out; stopping", "step", c.at())
			return a, nil
		}
		log.Warn("durable step result not journalled; the step runs again on retry", "step", c.at(), "error", errText(err))
	}
	halted := end.outcome == attemptHalted
	if halted && opts.halting != nil {
		opts.halting.Store(true)
	}
	if ctx.Err() != nil || halted {
		// The worker is shutting down (or the program is stopping); the
		// run is not at fault. Give it back, due at once, so a peer resumes
		// it now rather than when the lease expires (which is what happens
		// if this write fails too).
		att.outcome = "released"
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer cancel()
		switch err := e.store.Release(rctx, f, e.now()); {
		case err == nil:
			spanEvent(ctx, store.EventReleased, e.worker, "", c.at())
			log.Info("durable run released: the worker is stopping; it is due again at once", "step", c.at())
		case !IsLeaseLost(err):
			log.Warn("durable run not released; it is resumed when its lease expires", "step", c.at(), "error", errText(err))
		}
		if halted {
			return a, end.err
		}
		return a, task.As(ctx.Err())
	}
	bodyErr = end.err
	msg := errText(bodyErr)
	if se := task.As(bodyErr); se != nil {
		msg = se.Error()
	}
	if errors.Is(bodyErr, ErrUnreadable) {
		return a, e.keyFailure(ctx, log, f, cl, policy, bodyErr, c.at())
	}
	if IsPermanent(bodyErr) {
		msg += " (a permanent error: the run is not retried)"
		return a, e.finish(ctx, log, f, e.store.Fail(ctx, f, storableText(msg), c.at(), 0, true, e.now()), slog.LevelError, "durable run dead", "error", msg, "step", c.at())
	}
	return a, e.failAttempt(ctx, log, f, cl, policy, msg, c.at())
}

// completeAndClaim completes c's run and claims the next one into ch.
func (e *Engine) completeAndClaim(ctx context.Context, log *slog.Logger, c *Ctx, f store.Fence, last *JournalEntry, out string,
	reg registry, versions VersionPolicy, ch *chain) error {
	next := store.NextClaim{Names: reg.names, Keys: reg.keys, Pinned: versions != FailSafe, Lease: e.heldLease(), Token: e.newToken(), Worker: e.worker}
	cl, ok, done, err := e.store.CompleteAndClaim(ctx, f, last, out, e.now(), next)
	if err != nil {
		return err
	}
	if done == nil && last != nil {
		c.journalled(*last)
		if c.cross(AfterCommit, *last, false) != nil {
			return nil // the claimed run stays leased, as after a real crash
		}
	}
	if ok {
		ch.next, ch.token = &cl, next.Token
	}
	ch.none = !ok
	return e.finish(ctx, log, f, done, slog.LevelInfo, "durable run done", "step", c.at())
}

// failAttempt records a failed attempt: failed with backoff, or dead once
// the attempts are used up.
func (e *Engine) failAttempt(ctx context.Context, log *slog.Logger, f store.Fence, cl store.Claimed, policy RetryPolicy, msg, step string) error {
	msg = storableText(msg)
	if cl.Attempts >= policy.MaxAttempts {
		return e.finish(ctx, log, f, e.store.Fail(ctx, f, msg, step, 0, true, e.now()), slog.LevelError, "durable run dead", "error", msg, "step", step)
	}
	backoff := policy.Backoff(cl.Attempts, e.randFloat())
	return e.finish(ctx, log, f, e.store.Fail(ctx, f, msg, step, backoff, false, e.now()), slog.LevelWarn,
		"durable attempt failed", "error", msg, "backoff", backoff, "step", step)
}

// keyFailureNote ends the error of an attempt that met a payload it could
// not decrypt; a run whose last error has it is never made dead for the
// attempts such failures used.
const keyFailureNote = " (a payload this worker cannot decrypt: the run is retried after backoff, never made dead by it)"

// keyFailure records an attempt that met a payload it could not decrypt
// (ErrUnreadable): failed, due again after backoff, never dead, since the
// cause is the worker's keyring, not the run. Once a worker with the key
// claims it, it runs (its attempts then continue from where they were).
func (e *Engine) keyFailure(ctx context.Context, log *slog.Logger, f store.Fence, cl store.Claimed, policy RetryPolicy, err error, step string) error {
	msg := storableText(errText(err) + keyFailureNote)
	backoff := policy.Backoff(min(cl.Attempts, policy.MaxAttempts), e.randFloat())
	return e.finish(ctx, log, f, e.store.Fail(ctx, f, msg, step, backoff, false, e.now()), slog.LevelError,
		"durable attempt failed", "error", msg, "backoff", backoff, "step", step)
}

// finish logs the outcome of the final write of a claim. A lost lease there
// is logged, not returned.
func (e *Engine) finish(ctx context.Context, log *slog.Logger, f store.Fence, err error, level slog.Level, event string, attrs ...any) error {
	if IsLeaseLost(err) {
		setOutcome(ctx, "lease_lost")
		spanEvent(ctx, eventLeaseLost, e.worker, "", attrOf(attrs, "step"))
		e.deadlines.leaseLost()
		log.Warn("durable lease lost: another worker owns the run now, or it was cancelled or timed out; its outcome is not recorded", attrs...)
		return nil
	}
	if err != nil {
		return err
	}
	setOutcome(ctx, outcomeOf[event])
	switch k := finishEvent[event]; k {
	case store.EventDone:
		spanEvent(ctx, k, e.worker, "", "")
	case store.EventFailed, store.EventDead:
		spanEvent(ctx, k, e.worker, attrOf(attrs, "error"), attrOf(attrs, "step"))
	}
	log.Log(ctx, level, event, attrs...)
	return nil
}

// runBody runs the workflow body, turning a Go panic into a failure.
func runBody(ctx context.Context, c *Ctx, w Workflow, input string) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = task.Errorf(task.Ffi, "durable run %q of workflow %q panicked: %v", c.RunID(), w.Name, r).
				WithDetails(task.Details{Tag: task.FfiPanic, Text: fmt.Sprintf("%v\n%s", r, debug.Stack())})
		}
	}()
	if w.Body == nil {
		return "", task.Errorf(task.InvalidInput, "durable workflow %q has no body", w.Name)
	}
	return task.Run(ctx, w.Body(c, input))
}
