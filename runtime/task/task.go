package task

import (
	"context"
	"sync"
)

// Task is a lazy effect: nothing happens until Run. Running the same Task twice
// performs its effect twice. The error is any Go error; Sky's own failures are
// *Error, and the Sky evaluator carries a failure of another Sky type in an
// error of its own.
type Task[A any] struct {
	run func(context.Context) (A, error)
}

// From makes a Task from a Go function; fn runs each time the Task runs.
func From[A any](fn func(ctx context.Context) (A, error)) Task[A] {
	return Task[A]{run: fn}
}

// Run forces the Task now under ctx. A zero Task fails with Unexpected rather
// than panicking.
func Run[A any](ctx context.Context, t Task[A]) (A, error) {
	if t.run == nil {
		var zero A
		return zero, New(Unexpected, "run of an empty task")
	}
	if err := ctx.Err(); err != nil {
		var zero A
		return zero, As(err)
	}
	return t.run(ctx)
}

// Succeed is a Task that yields a without effect.
func Succeed[A any](a A) Task[A] {
	return From(func(context.Context) (A, error) { return a, nil })
}

// Fail is a Task that fails with err without effect.
func Fail[A any](err error) Task[A] {
	return From(func(context.Context) (A, error) { var zero A; return zero, err })
}

// FromResult is Succeed(a) when err is nil, else Fail(err).
func FromResult[A any](a A, err error) Task[A] {
	if err != nil {
		return Fail[A](err)
	}
	return Succeed(a)
}

// Lazy defers computing the value until the Task runs.
func Lazy[A any](fn func() A) Task[A] {
	return From(func(context.Context) (A, error) { return fn(), nil })
}

// AndThen runs t, then the Task next builds from its value; a failure of t
// short-circuits next.
func AndThen[A, B any](t Task[A], next func(A) Task[B]) Task[B] {
	return From(func(ctx context.Context) (B, error) {
		a, err := Run(ctx, t)
		if err != nil {
			var zero B
			return zero, err
		}
		return Run(ctx, next(a))
	})
}

// Map transforms the value of t.
func Map[A, B any](t Task[A], f func(A) B) Task[B] {
	return From(func(ctx context.Context) (B, error) {
		a, err := Run(ctx, t)
		if err != nil {
			var zero B
			return zero, err
		}
		return f(a), nil
	})
}

// MapError transforms the failure of t.
func MapError[A any](t Task[A], f func(error) error) Task[A] {
	return From(func(ctx context.Context) (A, error) {
		a, err := Run(ctx, t)
		if err != nil {
			return a, f(err)
		}
		return a, nil
	})
}

// OnError recovers from a failure of t with the Task handler builds.
func OnError[A any](t Task[A], handler func(error) Task[A]) Task[A] {
	return From(func(ctx context.Context) (A, error) {
		a, err := Run(ctx, t)
		if err != nil {
			return Run(ctx, handler(err))
		}
		return a, nil
	})
}

// Sequence runs the tasks in order; the first failure stops the rest.
func Sequence[A any](ts []Task[A]) Task[[]A] {
	return From(func(ctx context.Context) ([]A, error) {
		out := make([]A, 0, len(ts))
		for _, t := range ts {
			a, err := Run(ctx, t)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
		return out, nil
	})
}

// Parallel runs the tasks concurrently and yields their values in input order.
// The first failure (in input order among those that failed) is returned and
// cancels the context of the others.
func Parallel[A any](ts []Task[A]) Task[[]A] {
	return From(func(ctx context.Context) ([]A, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		out := make([]A, len(ts))
		errs := make([]error, len(ts))
		var wg sync.WaitGroup
		for i, t := range ts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i], errs[i] = Run(ctx, t)
				if errs[i] != nil {
					cancel()
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil && As(err).Cause != context.Canceled {
				return nil, err
			}
		}
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		return out, nil
	})
}
