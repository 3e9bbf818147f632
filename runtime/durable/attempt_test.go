package durable

import (
	"errors"
	"testing"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// TestAttemptEndKeepsItsPrecedence: every pair of states an attempt can
// end in decides the same outcome, in the order pollOne relies on (a crash
// or a lost lease before anything the body did; a retried step failure,
// then a misuse, before what the body made of them; an output over the
// cap is a failure).
func TestAttemptEndKeepsItsPrecedence(t *testing.T) {
	bodyErr := errors.New("the body failed")
	broken := errors.New("the step's entry was not written")
	retried := errors.New("a step failed; retried")
	misuse := task.Errorf(task.InvalidInput, "a durable operation inside a step")
	halt := errors.New("stop the program")
	crash := task.Errorf(task.Unavailable, "injected crash")
	cases := []struct {
		name    string
		set     func(c *Ctx)
		out     string
		err     error
		want    attemptOutcome
		wantErr error
	}{
		{"done", nil, `"ok"`, nil, attemptDone, nil},
		{"failed", nil, "", bodyErr, attemptFailed, bodyErr},
		{"an output over the cap fails", nil, `"` + string(make([]byte, 64)) + `"`, nil, attemptFailed, nil},
		{"suspended", func(c *Ctx) { c.suspended = true }, "", nil, attemptSuspended, nil},
		{"suspended beats the body's error", func(c *Ctx) { c.suspended = true }, "", bodyErr, attemptSuspended, nil},
		{"a broken step turns success into failure", func(c *Ctx) { c.broken = broken }, `"ok"`, nil, attemptFailed, broken},
		{"a broken step leaves the body's own error", func(c *Ctx) { c.broken = broken }, "", bodyErr, attemptFailed, bodyErr},
		{"a retried step failure replaces what the body made of it", func(c *Ctx) { c.retrying = &stepRetry{err: retried} }, `"ok"`, nil, attemptFailed, retried},
		{"a misuse replaces a retried failure", func(c *Ctx) { c.retrying = &stepRetry{err: retried}; c.misuse = misuse }, "", bodyErr, attemptFailed, misuse},
		{"a halt beats a suspension", func(c *Ctx) { c.halt = halt; c.suspended = true }, "", nil, attemptHalted, halt},
		{"a halt the body returned", nil, "", testHalt{}, attemptHalted, testHalt{}},
		{"a lost lease beats a halt", func(c *Ctx) { c.lost = true; c.halt = halt }, "", nil, attemptLeaseLost, nil},
		{"a lost lease beats success", func(c *Ctx) { c.lost = true }, `"ok"`, nil, attemptLeaseLost, nil},
		{"a crash beats a lost lease", func(c *Ctx) { c.crashed = crash; c.lost = true }, "", nil, attemptCrashed, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := &Ctx{e: &Engine{maxBytes: 32}, f: store.Fence{RunID: "r"}}
			if tc.set != nil {
				tc.set(c)
			}
			got := c.end(tc.out, tc.err)
			if got.outcome != tc.want {
				t.Fatalf("outcome %d, want %d (error %v)", got.outcome, tc.want, got.err)
			}
			if tc.wantErr != nil && !errors.Is(got.err, tc.wantErr) {
				t.Errorf("error %v, want %v", got.err, tc.wantErr)
			}
			if (tc.want == attemptFailed || tc.want == attemptHalted) && got.err == nil {
				t.Errorf("a %d outcome without its error", tc.want)
			}
		})
	}
}

// testHalt is a Halter, as Sky's System.exit is.
type testHalt struct{}

func (testHalt) Error() string { return "exit 3" }
func (testHalt) HaltsProgram() {}
