package durable

import (
	"context"
	"errors"

	"skydurable/runtime/task"
)

// This file holds the run-time guards around a step's task: what a step may
// not do (poll the engine, start another durable operation), and what stops
// the program instead of failing the run (Sky's System.exit).

// Halter is implemented by an error that asks the whole program to stop at
// once (Sky's System.exit: runtime/value.Exit implements it, so the engine
// knows it without importing Sky values). A body or a step's task failing
// with one is not a failure of the run: Poll writes the pending entry of the
// last step, releases the run (due at once, in the status it had before the
// claim, the attempt not counted), so it stays as its last commit left it,
// and returns the error, which stops a Work loop too.
type Halter interface {
	error
	HaltsProgram()
}

// IsHalt reports whether err, or an error it wraps, is a Halter.
func IsHalt(err error) bool {
	var h Halter
	return errors.As(err, &h)
}

// stepKey marks the context a step's task runs with (freshStep,
// Transaction): an engine entry point reached with it is inside a step.
type stepKey struct{}

// inStep is the mark: the run's Ctx and the step running.
type inStep struct {
	c    *Ctx
	step string
}

func withinStep(ctx context.Context, c *Ctx, stepID string) context.Context {
	return context.WithValue(ctx, stepKey{}, inStep{c: c, step: stepID})
}

// refuseInStep fails op (an engine entry point such as "Durable.poll" or
// "Durable.fork") when ctx is a step's: polling from inside a run's step
// would claim runs while the step's transaction holds the database (a hang
// on SQLite) and the step's lease waits (lost on PostgreSQL); a fork's or
// rewind's own transaction would wait for it the same way. The error is permanent and also
// fails the run the step belongs to, whatever its body makes of it.
func refuseInStep(ctx context.Context, op string) error {
	m, ok := ctx.Value(stepKey{}).(inStep)
	if !ok {
		return nil
	}
	err := task.Errorf(task.InvalidInput,
		"durable run %q: %s was called inside step %q; hint: a step's Task does one effect; call %s from main, a worker process or an App subscription, never from a workflow body",
		m.c.f.RunID, op, m.step, op)
	m.c.misused(err)
	return err
}

// misused records a misuse of the durable API inside the body (a durable
// operation or a poll inside a step's task): the run fails with it, as a
// permanent error, even when the body catches it, and no durable operation
// may follow.
func (c *Ctx) misused(err *task.Error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.misuse == nil {
		c.misuse = err
	}
}

func (c *Ctx) misuseErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.misuse == nil {
		return nil
	}
	return c.misuse
}

// halted records that a step's task asked the program to stop.
func (c *Ctx) halted(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.halt == nil {
		c.halt = err
	}
}

// haltErr is the stop request the body or a step's task made, or nil.
func (c *Ctx) haltErr(bodyErr error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.halt == nil && IsHalt(bodyErr) {
		return bodyErr
	}
	return c.halt
}
