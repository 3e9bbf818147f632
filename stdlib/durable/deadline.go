package durable

import (
	"context"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// startWith is Durable.startWith options db def runId input.
func (b *binding) startWith(a []value.Value) (value.Value, error) {
	const fn = "Durable.startWith"
	given, err := startOptionsArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	e, err := b.engineArg(fn, a[1])
	if err != nil {
		return nil, err
	}
	def, id, input, err := startArgs(fn, a[1:])
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		opts, err := given.engineOptions(fn)
		if err != nil {
			return nil, err
		}
		if err := unnamed(fn, def, id); err != nil {
			return nil, err
		}
		return value.Unit{}, setupHint(fn, durable.StartWith(ctx, e, opts, def.def, id, input))
	})}, nil
}

// maxDeadlineMs is the longest deadline a time.Duration holds (about 292
// years), so a huge deadlineMs is refused rather than wrapped around.
const maxDeadlineMs = int64(1<<63-1) / int64(time.Millisecond)

// startOptions is a StartOptions record as the program gave it, its
// deadline not yet checked.
type startOptions struct {
	priority   int
	deadlineMs *int64 // nil for Nothing
}

// startOptionsArg reads a StartOptions record { deadlineMs : Maybe Int,
// priority : Int }; a value of another shape is a type error.
func startOptionsArg(fn string, v value.Value) (startOptions, error) {
	const shape = "a StartOptions record { deadlineMs : Maybe Int, priority : Int }"
	r, ok := v.(*value.Record)
	if !ok {
		return startOptions{}, value.BadArg(fn, shape, v)
	}
	d, _ := r.Get("deadlineMs")
	p, _ := r.Get("priority")
	priority, ok := p.(int64)
	if !ok {
		return startOptions{}, value.BadArg(fn, shape, v)
	}
	given := startOptions{priority: int(priority)}
	switch c, _ := d.(value.Ctor); {
	case c.Name == "Nothing":
	case c.Name == "Just" && len(c.Args) == 1:
		ms, ok := c.Args[0].(int64)
		if !ok {
			return startOptions{}, value.BadArg(fn, shape, v)
		}
		given.deadlineMs = &ms
	default:
		return startOptions{}, value.BadArg(fn, shape, v)
	}
	return given, nil
}

// engineOptions gives the engine's StartOptions, or an InvalidInput naming a
// deadline the engine cannot take. The deadline is a value the program
// chose (perhaps from a request), so it fails the start's Task, which the
// program can handle, as a bad priority does, instead of stopping the
// program.
func (o startOptions) engineOptions(fn string) (durable.StartOptions, error) {
	opts := durable.StartOptions{Priority: o.priority}
	if o.deadlineMs == nil {
		return opts, nil
	}
	ms := *o.deadlineMs
	if ms > maxDeadlineMs {
		return durable.StartOptions{}, task.Errorf(task.InvalidInput,
			"%s: deadlineMs %d is longer than the engine can hold (about 292 years); hint: Nothing for no deadline", fn, ms)
	}
	if ms <= 0 {
		return durable.StartOptions{}, task.Errorf(task.InvalidInput,
			"%s: deadlineMs is Just %d, a run that would time out at its start; hint: Just a positive number of milliseconds, e.g. Just (24 * 60 * 60 * 1000), or Nothing for no deadline", fn, ms)
	}
	opts.Deadline = time.Duration(ms) * time.Millisecond
	return opts, nil
}

// unnamed refuses to start run id of a workflow registered with an empty
// name (Durable.start, Durable.startWith).
func unnamed(fn string, def skyWorkflowDef, id string) error {
	if def.def.Name() != "" {
		return nil
	}
	return task.Errorf(task.InvalidInput,
		"%s: cannot start run %q: its workflow was registered with an empty name; hint: name it, e.g. Durable.register \"checkout\" inputCodec outputCodec body", fn, id)
}
