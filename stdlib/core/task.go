package core

import (
	"context"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// Sky failures cross into Go as value.ToError (a *task.Error for Sky's Error,
// a *value.Failure for any other error type) and come back as
// value.FromError, so a handler sees exactly the value that was failed with.
// A runtime error inside a callback (calling a non-function, a wrong result
// kind) ends the Task as a *value.RuntimeError, which mapError and onError
// pass through untouched: a bug is never handled as a Sky failure.

func taskKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Task_succeed", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.Task{T: task.Succeed(a[0])}, nil
		}},
		{Name: "Task_fail", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.Task{T: task.Fail[value.Value](value.ToError(a[0]))}, nil
		}},
		{Name: "Task_andThen", Arity: 2, Fn: taskAndThen},
		{Name: "Task_map", Arity: 2, Fn: taskMap},
		{Name: "Task_mapError", Arity: 2, Fn: taskMapError},
		{Name: "Task_onError", Arity: 2, Fn: taskOnError},
		{Name: "Task_fromResult", Arity: 1, Fn: taskFromResult},
		{Name: "Task_sequence", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return taskList("Task.sequence", a[0], task.Sequence[value.Value])
		}},
		{Name: "Task_parallel", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return taskList("Task.parallel", a[0], task.Parallel[value.Value])
		}},
		{Name: "Task_lazy", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			f := a[0]
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				return apply(f, value.Unit{})
			})}, nil
		}},
		{Name: "Task_run", Arity: 1, Fn: taskRun},
	}
}

// taskOf applies a Sky function expected to build a Task; anything else is a
// failed Task describing the mistake.
func taskOf(fn string, f value.Value, arg value.Value) task.Task[value.Value] {
	r, err := value.Apply(f, arg)
	if err != nil {
		return task.Fail[value.Value](runtimeError(err))
	}
	t, ok := r.(value.Task)
	if !ok {
		return task.Fail[value.Value](runtimeError(value.BadArg(fn, "a function returning a Task", r)))
	}
	return t.T
}

// runtimeError marks an error met while running a Task as a program failure.
func runtimeError(err error) error {
	if value.IsRuntimeError(err) {
		return err
	}
	return &value.RuntimeError{Message: err.Error()}
}

// apply is value.Apply for use inside a running Task.
func apply(f value.Value, args ...value.Value) (value.Value, error) {
	r, err := value.Apply(f, args...)
	if err != nil {
		return nil, runtimeError(err)
	}
	return r, nil
}

func taskAndThen(a []value.Value) (value.Value, error) {
	f := a[0]
	t, err := taskArg("Task.andThen", a[1])
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.AndThen(t.T, func(v value.Value) task.Task[value.Value] {
		return taskOf("Task.andThen", f, v)
	})}, nil
}

func taskMap(a []value.Value) (value.Value, error) {
	f := a[0]
	t, err := taskArg("Task.map", a[1])
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		v, err := task.Run(ctx, t.T)
		if err != nil {
			return nil, err
		}
		return apply(f, v)
	})}, nil
}

func taskMapError(a []value.Value) (value.Value, error) {
	f := a[0]
	t, err := taskArg("Task.mapError", a[1])
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.MapError(t.T, func(err error) error {
		if value.IsRuntimeError(err) {
			return err
		}
		r, callErr := apply(f, value.FromError(err))
		if callErr != nil {
			return callErr
		}
		return value.ToError(r)
	})}, nil
}

func taskOnError(a []value.Value) (value.Value, error) {
	h := a[0]
	t, err := taskArg("Task.onError", a[1])
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.OnError(t.T, func(err error) task.Task[value.Value] {
		if value.IsRuntimeError(err) {
			return task.Fail[value.Value](err)
		}
		return taskOf("Task.onError", h, value.FromError(err))
	})}, nil
}

func taskFromResult(a []value.Value) (value.Value, error) {
	c, ok := a[0].(value.Ctor)
	if ok && len(c.Args) == 1 {
		switch c.Name {
		case "Ok":
			return value.Task{T: task.Succeed(c.Args[0])}, nil
		case "Err":
			return value.Task{T: task.Fail[value.Value](value.ToError(c.Args[0]))}, nil
		}
	}
	return nil, value.BadArg("Task.fromResult", "a Result (Ok or Err)", a[0])
}

func taskList(fn string, v value.Value, combine func([]task.Task[value.Value]) task.Task[[]value.Value]) (value.Value, error) {
	l, err := listArg(fn, v)
	if err != nil {
		return nil, err
	}
	var ts []task.Task[value.Value]
	for ; l != nil; l = l.Tail {
		t, err := taskArg(fn, l.Head)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t.T)
	}
	all := combine(ts)
	return value.Task{T: task.Map(all, func(vs []value.Value) value.Value { return value.FromSlice(vs) })}, nil
}

// taskRun forces a Task now under a background context: Task.run is pure
// from Sky's point of view, so no ambient transaction or cancellation
// reaches it.
func taskRun(a []value.Value) (value.Value, error) {
	t, err := taskArg("Task.run", a[0])
	if err != nil {
		return nil, err
	}
	v, err := task.Run(context.Background(), t.T)
	if value.IsRuntimeError(err) {
		return nil, err
	}
	if err != nil {
		return value.Err(value.FromError(err)), nil
	}
	return value.Ok(v), nil
}
