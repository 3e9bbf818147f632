package durable

import (
	"errors"
	"fmt"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// The engine's errors are *task.Error values (Sky's Error kinds, shown to
// Sky programs as they are); each also wraps one of these sentinels, so Go
// callers test them with errors.Is.
var (
	// ErrSuspended is wrapped by the suspend sentinel (IsSuspend).
	ErrSuspended = errors.New("durable: run suspended")
	// ErrLeaseLost is wrapped by every error that says this worker's
	// lease on a run is gone (IsLeaseLost).
	ErrLeaseLost = store.ErrLeaseLost
	// ErrRunNotFound is wrapped by the error of an operation on an unknown
	// run id.
	ErrRunNotFound = errors.New("durable: no such run")
	// ErrRefused is wrapped by the error of an operation the run's status
	// does not allow (cancel a done run, retry a waiting one, ...).
	ErrRefused = errors.New("durable: refused in the run's status")
	// ErrWorkflowMismatch is wrapped by the error of a Start whose id
	// belongs to a run of another workflow.
	ErrWorkflowMismatch = errors.New("durable: run id belongs to another workflow")
	// ErrNonDeterminism is wrapped by the error of a body that asked for
	// another durable operation than the journal recorded, or used a step
	// id twice.
	ErrNonDeterminism = errors.New("durable: body is not deterministic")
	// ErrBadJournal is wrapped by the error of a journalled result that no
	// longer decodes.
	ErrBadJournal = errors.New("durable: journalled result does not decode")
	// ErrTooLarge is wrapped by the error of a payload over the cap.
	ErrTooLarge = errors.New("durable: payload over the cap")
	// ErrNoSchema is wrapped by CheckSchema's error for a database with no
	// durable tables.
	ErrNoSchema = errors.New("durable: no durable tables")
)

// wrapping returns e with sentinel as its cause, for errors.Is.
func wrapping(e *task.Error, sentinel error) *task.Error {
	e.Cause = sentinel
	return e
}

// SuspendTag is the Custom detail text of the suspend sentinel.
const SuspendTag = "sky.durable.suspend"

// suspendError is the sentinel Sleep and AwaitSignal fail with when their
// wake condition is not met. It is an ordinary *task.Error so it travels
// through any Task chain (and into Sky as an Error value).
func suspendError(runID, why string) *task.Error {
	return wrapping(task.Errorf(task.Unavailable, "durable run %q suspended: %s", runID, why).
		WithDetails(task.Details{Tag: task.Custom, Text: SuspendTag}), ErrSuspended)
}

// IsSuspend reports whether err is the suspend sentinel (Sky's
// Durable.isSuspend). A body should let it propagate; swallowing it does not
// change the outcome (the run stays suspended) but skips the rest of the body.
func IsSuspend(err error) bool { return hasTag(err, SuspendTag) }

// IsLeaseLost reports whether err says the worker lost its lease on the run
// (another worker claimed it, or it was cancelled); the run is not failed.
func IsLeaseLost(err error) bool { return hasTag(err, LeaseLostTag) }

func hasTag(err error, tag string) bool {
	var e *task.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Details != nil && e.Details.Tag == task.Custom && e.Details.Text == tag
}

func leaseLostError(runID string) *task.Error {
	return wrapping(task.Errorf(task.Conflict,
		"durable run %q: this worker's lease is gone (its lease expired and a peer claimed the run, or it was cancelled); it writes nothing more for this run",
		runID).WithDetails(task.Details{Tag: task.Custom, Text: LeaseLostTag}), ErrLeaseLost)
}

func runNotFound(runID string) *task.Error {
	return wrapping(task.Errorf(task.NotFound,
		"durable: no run with id %q; hint: check the id (`sky durable ls` lists runs) or start it first", runID), ErrRunNotFound)
}

// nonDeterminism is the error of a body that asked for another durable
// operation than the journal recorded at the same position.
func nonDeterminism(runID string, pos int, want string, wantKind EntryKind, got JournalEntry) *task.Error {
	return wrapping(task.Errorf(task.Unexpected,
		"durable run %q is not deterministic: at journal position %d the body asked for %s %q but the journal recorded %s %q; "+
			"hint: the code between steps must not depend on time, randomness or I/O, and a changed workflow needs a new version or a new run",
		runID, pos, wantKind, want, got.Kind, got.StepID), ErrNonDeterminism)
}

func duplicateStep(runID, stepID string) *task.Error {
	return wrapping(task.Errorf(task.InvalidInput,
		"durable run %q: the step id %q is used twice in one body; hint: give every step, sleep and signal wait its own id", runID, stepID), ErrNonDeterminism)
}

func nestedStep(runID, running, id string) *task.Error {
	return task.Errorf(task.InvalidInput,
		"durable run %q: %q started while step %q was still running; hint: durable operations run one after another, never inside a step's task or in parallel",
		runID, id, running)
}

func badJournal(runID string, e JournalEntry, err error) *task.Error {
	return wrapping(task.Errorf(task.Decode,
		"durable run %q: the journalled result of %s %q (position %d) does not decode: %v; "+
			"hint: the codec changed since it was recorded; keep it compatible or start a new run",
		runID, e.Kind, e.StepID, e.Seq, errText(err)), ErrBadJournal)
}

func tooLarge(what string, size, limit int) *task.Error {
	return wrapping(task.Errorf(task.InvalidInput,
		"durable: %s is %d bytes, over the cap of %d bytes; hint: store large data in your own table and journal its key, "+
			"or raise the cap (SKY_DURABLE_MAX_PAYLOAD_BYTES for sky programs, Options.MaxPayloadBytes in Go)",
		what, size, limit), ErrTooLarge)
}

func invalidJSON(what, text string) *task.Error {
	return task.Errorf(task.InvalidInput, "durable: %s is not valid JSON: %s", what, codec.Preview(text))
}

// errText is an error's message without a duplicated kind prefix.
func errText(err error) string {
	if e := task.As(err); e != nil {
		return e.Message
	}
	return fmt.Sprint(err)
}
