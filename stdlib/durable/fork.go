package durable

import (
	"context"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// forkKernels are Durable.fork (Engine.Fork).
func (b *binding) forkKernels() []value.Kernel {
	return []value.Kernel{{Name: "Durable_fork", Arity: 4, Fn: b.forkKernel}}
}

func (b *binding) forkKernel(a []value.Value) (value.Value, error) {
	const fn = "Durable.fork"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	var ids [3]string
	for i, what := range []string{"a String run id", "a String step id", "a String new run id"} {
		s, ok := a[i+1].(string)
		if !ok {
			return nil, value.BadArg(fn, what, a[i+1])
		}
		ids[i] = s
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		_, err := e.Fork(ctx, ids[0], ids[1], durable.ForkOptions{NewID: ids[2]})
		return value.Unit{}, setupHint(fn, err)
	})}, nil
}
