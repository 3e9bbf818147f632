package durable

import (
	"context"
	"fmt"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// A signal is one-shot per (run, name): the first one sent is kept and a
// later one with that name is ignored, whether the first is pending or
// consumed, so a webhook its provider retries has one outcome however the
// retry races the worker. Only an operator replaces a payload, and only
// while it is not consumed (ReplaceSignal, `sky durable signal --replace`).

// SignalOutcome is what an operator's signal did (SignalRun, ReplaceSignal).
type SignalOutcome int

// The signal outcomes.
const (
	// SignalStored: the signal is in the run's mailbox.
	SignalStored SignalOutcome = iota
	// SignalNoRunYet: stored, but no run with that id exists yet (a signal
	// may beat Start; the id may also be a typo).
	SignalNoRunYet
	// SignalDuplicate: ignored, a signal of that name was sent to the run
	// before (the first one wins, pending or consumed).
	SignalDuplicate
	// SignalRunDone, SignalRunCancelled, SignalRunTimedOut: ignored, the
	// run is finished (in that status) and will never consume a signal.
	SignalRunDone
	SignalRunCancelled
	SignalRunTimedOut
	// SignalReplaced: ReplaceSignal overwrote the pending payload.
	SignalReplaced
	// SignalSentNew: ReplaceSignal found no signal of that name to
	// replace and stored it as a new one (nothing replaced, no
	// signal_replaced event).
	SignalSentNew
)

// finishedOutcome is the outcome of a signal to a run finished in status s.
var finishedOutcome = map[Status]SignalOutcome{
	StatusDone: SignalRunDone, StatusCancelled: SignalRunCancelled, StatusTimedOut: SignalRunTimedOut,
}

// finished reports whether a run in status s will never consume a signal.
func finished(s Status) bool {
	_, ok := finishedOutcome[s]
	return ok
}

// putSignal checks and stores a signal, logging what it did; stored is false
// when the signal was ignored (a repeat, or the run is finished).
func (e *Engine) putSignal(ctx context.Context, runID, name, payload string) (bool, error) {
	if err := checkSignal(runID, name); err != nil {
		return false, err
	}
	if err := e.checkJSON(fmt.Sprintf("the payload of signal %q to run %q", name, runID), payload); err != nil {
		return false, err
	}
	stored, err := e.store.PutSignal(ctx, runID, name, payload, e.tel.signalSpan(ctx, runID, name), e.now())
	if err != nil {
		return false, err
	}
	if stored {
		e.log.Info("durable signal stored", "run", runID, "signal", name)
	} else {
		e.log.Info("durable signal ignored: the first signal of that name wins, or the run is finished", "run", runID, "signal", name)
	}
	return stored, nil
}

// SignalRun is Signal as an operator sends it (`sky durable signal`, the
// dashboard), saying what happened: it reads the run first, so a finished
// run is reported (SignalRunDone, SignalRunCancelled or SignalRunTimedOut,
// nothing stored) and an id with no run yet too (SignalNoRunYet, stored: a
// signal may beat Start). A signal the store refused is read about again,
// so a run that finished in between is reported as finished, never as a
// repeat of a signal nobody sent.
func (e *Engine) SignalRun(ctx context.Context, runID, name, payload string) (SignalOutcome, error) {
	r, err := e.store.ReadRun(ctx, runID)
	exists := err == nil
	switch {
	case err == store.ErrRunNotFound:
	case err != nil:
		return 0, err
	case finished(r.Status):
		if err := e.checkJSON(fmt.Sprintf("the payload of signal %q to run %q", name, runID), payload); err != nil {
			return 0, err
		}
		e.log.Info("durable signal ignored: the run is finished", "run", runID, "signal", name, "status", string(r.Status))
		return finishedOutcome[r.Status], nil
	}
	stored, err := e.putSignal(ctx, runID, name, payload)
	switch {
	case err != nil:
		return 0, err
	case !stored:
		st, err := e.finishedSince(ctx, runID)
		switch {
		case err != nil:
			return 0, err
		case st != "":
			return finishedOutcome[st], nil
		}
		return SignalDuplicate, nil
	case !exists:
		return SignalNoRunYet, nil
	}
	return SignalStored, nil
}

// finishedSince reads the status of a run whose signal the store just
// refused: the status when the run finished after the caller read it (the
// store refuses a signal to a finished run as it does a repeat), else "".
func (e *Engine) finishedSince(ctx context.Context, runID string) (Status, error) {
	r, err := e.store.ReadRun(ctx, runID)
	switch {
	case err == store.ErrRunNotFound:
		return "", nil
	case err != nil:
		return "", err
	case finished(r.Status):
		return r.Status, nil
	}
	return "", nil
}

// finishedRefusal refuses a --replace to a run finished in status s.
func finishedRefusal(runID, name string, s Status) error {
	return wrapping(task.Errorf(task.Conflict, "cannot replace signal %q of run %q: the run is %s and will never consume a signal", name, runID, s), ErrRefused)
}

// ReplaceSignal is the operator's correction of a signal not yet consumed
// (`sky durable signal --replace`): it overwrites the payload in the
// mailbox (SignalReplaced), or, when none of that name was sent, stores it
// as a new signal (SignalSentNew, or SignalNoRunYet for an id with no run
// yet) and records no signal_replaced event. It is refused
// (Conflict, ErrRefused) when the run already consumed that signal (its
// payload is journalled and cannot change) or the run is finished.
func (e *Engine) ReplaceSignal(ctx context.Context, runID, name, payload string) (SignalOutcome, error) {
	if err := checkSignal(runID, name); err != nil {
		return 0, err
	}
	if err := e.checkJSON(fmt.Sprintf("the payload of signal %q to run %q", name, runID), payload); err != nil {
		return 0, err
	}
	r, err := e.store.ReadRun(ctx, runID)
	exists := err == nil
	switch {
	case err == store.ErrRunNotFound:
	case err != nil:
		return 0, err
	case finished(r.Status):
		return 0, finishedRefusal(runID, name, r.Status)
	}
	// Sending it as new first stores it only when none of that name was
	// sent, in one statement; a signal sent meanwhile is then replaced
	// below, as the operator asked.
	stored, err := e.putSignal(ctx, runID, name, payload)
	switch {
	case err != nil:
		return 0, err
	case stored && !exists:
		return SignalNoRunYet, nil
	case stored:
		return SignalSentNew, nil
	}
	replaced, err := e.store.ReplaceSignal(ctx, runID, name, payload, e.now())
	if err != nil {
		return 0, err
	}
	if !replaced {
		st, err := e.finishedSince(ctx, runID)
		switch {
		case err != nil:
			return 0, err
		case st != "":
			return 0, finishedRefusal(runID, name, st)
		}
		return 0, wrapping(task.Errorf(task.Conflict,
			"cannot replace signal %q of run %q: the run already consumed it; hint: a consumed payload is in the run's journal (`sky durable show %s`) and cannot change",
			name, runID, runID), ErrRefused)
	}
	operatorEvent(ctx, store.EventSignalReplaced, runID, name)
	e.log.Info("durable signal replaced by an operator", "run", runID, "signal", name)
	if !exists {
		return SignalNoRunYet, nil
	}
	return SignalReplaced, nil
}

// Message says what the signal did, for an operator (`sky durable signal`,
// the dashboard), in the mailbox's words (runtime/durable/view's
// SignalState: pending, consumed, orphan).
func (o SignalOutcome) Message(runID, name string) string {
	switch o {
	case SignalDuplicate:
		return fmt.Sprintf("signal %s to run %s ignored: a signal %s was sent to it before and the first one wins (correct a pending payload with --replace)", name, runID, name)
	case SignalRunDone:
		return fmt.Sprintf("signal %s to run %s ignored: the run is done and will never consume a signal", name, runID)
	case SignalRunCancelled:
		return fmt.Sprintf("signal %s to run %s ignored: the run is cancelled and will never consume a signal", name, runID)
	case SignalRunTimedOut:
		return fmt.Sprintf("signal %s to run %s ignored: the run timed out and will never consume a signal", name, runID)
	case SignalReplaced:
		return fmt.Sprintf("signal %s of run %s replaced: pending, with the new payload", name, runID)
	case SignalSentNew:
		return fmt.Sprintf("signal %s to run %s sent (nothing to replace: none of that name was sent before): pending until the run consumes it", name, runID)
	}
	return fmt.Sprintf("signal %s to run %s stored: pending until the run consumes it", name, runID)
}

// checkSignal refuses a signal without a run id or name, or with one that
// is not a valid name (checkName).
func checkSignal(runID, name string) error {
	if runID == "" || name == "" {
		return task.Errorf(task.InvalidInput, "durable: a signal needs a run id and a name (got run %q, name %q); "+
			"hint: the id the run was started with and the name its awaitSignal waits for, such as \"payment.settled\"", runID, name)
	}
	if err := checkName("the run id", runID, func() string { return fmt.Sprintf(" of signal %q", name) }, "use the id the run was started with"); err != nil {
		return err
	}
	return checkName("the signal name", name, func() string { return fmt.Sprintf(" (run %q)", runID) }, "a printable name such as \"payment.settled\"")
}
