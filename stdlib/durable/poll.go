package durable

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"

	"skydurable/runtime/task"
)

// PollOptions tune one Poll.
type PollOptions struct {
	// MaxRuns is how many due runs one call may advance, one after another
	// (default 1). Poll stops early when none is due.
	MaxRuns int
}

// Poll claims one due run whose workflow is among defs and advances it until
// it suspends, completes or fails (Sky's Durable.poll). didWork is false when
// no run was due. A worker that loses its lease mid-run stops, logs it and
// returns normally. err is only a failure of the engine itself (for example
// an unreachable database); a failing workflow body is recorded on its run.
func (e *Engine) Poll(ctx context.Context, defs []Workflow) (didWork bool, err error) {
	return e.PollWith(ctx, defs, PollOptions{})
}

// PollWith is Poll with options.
func (e *Engine) PollWith(ctx context.Context, defs []Workflow, opts PollOptions) (didWork bool, err error) {
	if opts.MaxRuns <= 0 {
		opts.MaxRuns = 1
	}
	byName := make(map[string]Workflow, len(defs))
	names := make([]string, 0, len(defs))
	for _, w := range defs {
		if _, dup := byName[w.Name]; !dup {
			names = append(names, w.Name)
		}
		byName[w.Name] = w
	}
	if len(names) == 0 {
		return false, nil
	}
	for i := 0; i < opts.MaxRuns; i++ {
		worked, err := e.pollOne(ctx, byName, names)
		didWork = didWork || worked
		if err != nil || !worked {
			return didWork, err
		}
	}
	return didWork, nil
}

// pollOne claims and advances one run.
func (e *Engine) pollOne(ctx context.Context, byName map[string]Workflow, names []string) (bool, error) {
	token := fmt.Sprintf("%s/%016x", e.worker, e.randUint64())
	cl, ok, err := e.store.claimRun(ctx, names, e.now(), e.lease, token, e.worker)
	if err != nil || !ok {
		return false, err
	}
	w := byName[cl.workflow]
	policy := w.Retry.withDefaults()
	f := fence{runID: cl.id, token: token}
	log := e.log.With("run", cl.id, "workflow", cl.workflow, "attempt", cl.attempts, "worker", e.worker)
	log.Info("durable run claimed")

	if cl.attempts > policy.MaxAttempts {
		// Only crashes (or lost leases) get here: a failure that used up the
		// attempts already made the run dead.
		msg := fmt.Sprintf("attempt %d exceeds the limit of %d attempts: earlier attempts crashed or lost their lease before finishing", cl.attempts, policy.MaxAttempts)
		if cl.lastError != "" {
			msg += "; last error: " + cl.lastError
		}
		return true, e.finish(ctx, log, f, e.store.fail(ctx, f, msg, 0, true, e.now()), "durable run dead", "error", msg)
	}

	journal, err := e.store.loadJournal(ctx, cl.id)
	if err != nil {
		return true, err
	}
	c := newCtx(e, cl, token, journal)
	out, bodyErr := runBody(ctx, c, w, cl.input)
	suspended, lost := c.state()
	switch {
	case lost:
		log.Warn("durable lease lost: another worker owns the run now; stopping")
		return true, nil
	case suspended:
		return true, nil
	case bodyErr == nil:
		if err := c.checkSize("the output", out); err != nil {
			bodyErr = err
			break
		}
		return true, e.finish(ctx, log, f, e.store.complete(ctx, f, out, e.now()), "durable run done")
	}
	if ctx.Err() != nil {
		// The worker is shutting down; the run is not at fault. Its lease
		// expires and a peer (or this worker, later) resumes it.
		return true, task.As(ctx.Err())
	}
	msg := errText(bodyErr)
	if se := task.As(bodyErr); se != nil {
		msg = se.Error()
	}
	if cl.attempts >= policy.MaxAttempts {
		return true, e.finish(ctx, log, f, e.store.fail(ctx, f, msg, 0, true, e.now()), "durable run dead", "error", msg)
	}
	backoff := policy.Backoff(cl.attempts, e.randFloat())
	return true, e.finish(ctx, log, f, e.store.fail(ctx, f, msg, backoff, false, e.now()),
		"durable attempt failed", "error", msg, "backoff", backoff)
}

// finish logs the outcome of the final write of a claim. A lost lease there
// is logged, not returned.
func (e *Engine) finish(ctx context.Context, log *slog.Logger, f fence, err error, event string, attrs ...any) error {
	if IsLeaseLost(err) {
		log.Warn("durable lease lost: another worker owns the run now; its outcome is not recorded")
		return nil
	}
	if err != nil {
		return err
	}
	log.Info(event, attrs...)
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
