package durable

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/task"
)

// TestErrorsIs: every engine error a Go caller may branch on wraps its
// sentinel, so errors.Is tells them apart without parsing messages, and
// stays the Sky Error kind it always was.
func TestErrorsIs(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := New(d, Options{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	wf := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
	other := Register("other", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
	if err := Start(ctx, e, wf, "r", "x"); err != nil {
		t.Fatal(err)
	}
	_, _, describeErr := e.Describe(ctx, "missing")
	cases := []struct {
		name     string
		err      error
		sentinel error
		kind     task.Kind
	}{
		{"start under another workflow", Start(ctx, e, other, "r", "x"), ErrWorkflowMismatch, task.Conflict},
		{"describe an unknown run", describeErr, ErrRunNotFound, task.NotFound},
		{"retry a waiting run", e.Retry(ctx, "r"), ErrRefused, task.Conflict},
		{"suspend", suspendError("r", "sleeping"), ErrSuspended, task.Unavailable},
		{"lease lost", leaseLostError("r"), ErrLeaseLost, task.Conflict},
		{"non-determinism", nonDeterminism("r", 1, "b", KindStep, JournalEntry{StepID: "a", Kind: KindStep}), ErrNonDeterminism, task.Unexpected},
		{"duplicate step", duplicateStep("r", "a"), ErrNonDeterminism, task.InvalidInput},
		{"bad journal", badJournal("r", JournalEntry{StepID: "a"}, errors.New("bad")), ErrBadJournal, task.Decode},
		{"too large", tooLarge("input", 10, 5), ErrTooLarge, task.InvalidInput},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.sentinel) {
			t.Errorf("%s: %v does not wrap %v", c.name, c.err, c.sentinel)
		}
		if se := task.As(c.err); se == nil || se.Kind != c.kind {
			t.Errorf("%s: %v is not a %s error", c.name, c.err, c.kind)
		}
		for _, o := range cases {
			if o.sentinel != c.sentinel && errors.Is(c.err, o.sentinel) {
				t.Errorf("%s: %v also matches %v", c.name, c.err, o.sentinel)
			}
		}
	}
	if !IsSuspend(suspendError("r", "x")) || !IsLeaseLost(leaseLostError("r")) {
		t.Error("IsSuspend / IsLeaseLost no longer recognise their errors")
	}
}
