package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"skydurable/runtime/codec"
	"skydurable/runtime/task"
)

// PermanentTag is the Custom detail text Permanent gives an error.
const PermanentTag = "sky.durable.permanent"

// Permanent marks err as permanent (Sky's Durable.permanent): retrying
// cannot help, so a step failing with it is not retried. Its kind and
// message are kept; its details become the permanent marker.
func Permanent(err error) *task.Error {
	e := task.As(err)
	if e == nil {
		e = task.New(task.Unexpected, "permanent error")
	}
	return e.WithDetails(task.Details{Tag: task.Custom, Text: PermanentTag})
}

// IsPermanent reports whether retrying err cannot help: it was marked with
// Permanent, or its kind is InvalidInput, PermissionDenied or NotFound (the
// same request fails the same way), or it is a non-determinism error (the
// same body asks for the same wrong operation again).
func IsPermanent(err error) bool {
	if err == nil || IsSuspend(err) || IsLeaseLost(err) || IsCrashed(err) {
		return false
	}
	if hasTag(err, PermanentTag) || errors.Is(err, ErrNonDeterminism) {
		return true
	}
	switch task.As(err).Kind {
	case task.InvalidInput, task.PermissionDenied, task.NotFound:
		return true
	}
	return false
}

// stepFailed handles the failure err of a fresh step's task (Step,
// Transaction). A final failure (permanent, or on the last attempt) is
// handed to the body as the step's outcome and journalled as an error
// entry, so a body that handles it (a compensating step) takes the same
// path on every replay. The entry is pending: it is written when the body
// goes on durably or completes, and dropped when the body fails anyway, so
// that a manual retry runs the step again. Any other failure ends the
// attempt: the body sees the error, but no durable operation may follow
// and the run is retried from the top whatever the body returns.
func stepFailed(ctx context.Context, c *Ctx, stepID string, err error) error {
	if IsHalt(err) {
		c.halted(err)
		return err
	}
	if ctx.Err() != nil || IsLeaseLost(err) || IsCrashed(err) || IsSuspend(err) {
		return err
	}
	if !IsPermanent(err) && c.attempt < c.maxAttempts {
		c.mu.Lock()
		if c.retrying == nil {
			c.retrying = &stepRetry{stepID: stepID, err: err}
		}
		c.mu.Unlock()
		return err
	}
	js, encErr := json.Marshal(errorEntryOf(task.As(err)))
	if encErr != nil {
		return err
	}
	e := c.entry(stepID, KindError, string(js))
	c.deferWrite(e)
	c.mu.Lock()
	c.pendingFailure = true
	c.mu.Unlock()
	return err
}

// stepRetry is the failure that ends an attempt: a step failed and the run
// is to be retried from the top.
type stepRetry struct {
	stepID string
	err    error
}

// refusal is the error of a durable operation the body reaches after the
// failure of step r.stepID in the same attempt.
func (r *stepRetry) refusal(runID, id string) *task.Error {
	return task.Errorf(task.Unavailable,
		"durable run %q: %q cannot start after step %q failed in this attempt (%s); the run is retried from the top; "+
			"hint: a step's failure is handed to the body to handle only once it is final (permanent, see Durable.permanent, or on the last attempt)",
		runID, id, r.stepID, errText(r.err))
}

// errorEntry is the journalled form of a step's final failure (KindError).
type errorEntry struct {
	Kind    string        `json:"kind"`
	Message string        `json:"message"`
	Details *errorDetails `json:"details,omitempty"`
}

// errorDetails is task.Details as journalled.
type errorDetails struct {
	Tag    int    `json:"tag"`
	Text   string `json:"text,omitempty"`
	Status int    `json:"status,omitempty"`
}

func errorEntryOf(e *task.Error) errorEntry {
	out := errorEntry{Kind: e.Kind.String(), Message: e.Message}
	if e.Details != nil {
		out.Details = &errorDetails{int(e.Details.Tag), e.Details.Text, e.Details.Status}
	}
	return out
}

// replayFailure rebuilds the error a step's error entry journalled.
func replayFailure(c *Ctx, e JournalEntry) error {
	var ee errorEntry
	if err := json.Unmarshal([]byte(e.Result), &ee); err != nil {
		return badJournal(c.f.RunID, e, fmt.Errorf("expected a journalled error, found %s", codec.Preview(e.Result)))
	}
	kind, ok := task.KindFromName(ee.Kind)
	if !ok {
		return badJournal(c.f.RunID, e, fmt.Errorf("unknown error kind %q", ee.Kind))
	}
	out := task.New(kind, ee.Message)
	if ee.Details != nil {
		out = out.WithDetails(task.Details{Tag: task.DetailTag(ee.Details.Tag), Text: ee.Details.Text, Status: ee.Details.Status})
	}
	return out
}
