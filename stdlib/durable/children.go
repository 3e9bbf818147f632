package durable

import (
	"context"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
)

// The kernels of composed workflows (Durable.startChild, awaitChild, all,
// result, awaitResult, setEvent, getEvent, signalWithStart): thin adapters
// over runtime/durable's children.go and results.go.
func (b *binding) childKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Durable_startChild", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			c, def, key, err := childArgs("Durable.startChild", a)
			if err != nil {
				return nil, err
			}
			return unitTask(durable.StartChild(c, def.def, key, a[3])), nil
		}},
		{Name: "Durable_awaitChild", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			c, def, key, err := childArgs("Durable.awaitChild", a)
			if err != nil {
				return nil, err
			}
			return value.Task{T: durable.AwaitChild(c, def.def, key)}, nil
		}},
		{Name: "Durable_all", Arity: 3, Fn: allKernel},
		{Name: "Durable_result", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			return b.resultKernel("Durable.result", a, 0)
		}},
		{Name: "Durable_awaitResult", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			ms, ok := a[3].(int64)
			if !ok {
				return nil, value.BadArg("Durable.awaitResult", "an Int timeout in milliseconds", a[3])
			}
			return b.resultKernel("Durable.awaitResult", a, time.Duration(ms)*time.Millisecond)
		}},
		{Name: "Durable_setEvent", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			c, cd, key, err := stepArgs("Durable.setEvent", a)
			if err != nil {
				return nil, err
			}
			return unitTask(durable.SetEvent(c, cd, key, a[3])), nil
		}},
		{Name: "Durable_getEvent", Arity: 4, Fn: b.getEventKernel},
		{Name: "Durable_signalWithStart", Arity: 7, Fn: b.signalWithStartKernel},
	}
}

// childArgs reads the Ctx, WorkflowDef and child key: a[0], a[1], a[2].
func childArgs(fn string, a []value.Value) (*durable.Ctx, skyWorkflowDef, string, error) {
	c, err := ctxArg(fn, a[0])
	if err != nil {
		return nil, skyWorkflowDef{}, "", err
	}
	def, err := defArg(fn, a[1])
	if err != nil {
		return nil, skyWorkflowDef{}, "", err
	}
	key, ok := a[2].(string)
	if !ok {
		return nil, skyWorkflowDef{}, "", value.BadArg(fn, "a String child key", a[2])
	}
	return c, def, key, nil
}

func allKernel(a []value.Value) (value.Value, error) {
	const fn = "Durable.all"
	c, err := ctxArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	def, err := defArg(fn, a[1])
	if err != nil {
		return nil, err
	}
	list, ok := a[2].(*value.List)
	if !ok {
		return nil, value.BadArg(fn, "a List ( String, input ) of child keys and inputs", a[2])
	}
	var kids []durable.Child[value.Value]
	for _, item := range list.Slice() {
		t, ok := item.(value.Tuple)
		if !ok || len(t) != 2 {
			return nil, value.BadArg(fn, "a ( String, input ) pair in the list", item)
		}
		key, ok := t[0].(string)
		if !ok {
			return nil, value.BadArg(fn, "a String child key as the first of each pair", t[0])
		}
		kids = append(kids, durable.Child[value.Value]{Key: key, Input: t[1]})
	}
	return value.Task{T: task.Map(durable.All(c, def.def, kids), func(outs []value.Value) value.Value { return value.FromSlice(outs) })}, nil
}

// resultKernel is Durable.result (timeout 0) and Durable.awaitResult.
func (b *binding) resultKernel(fn string, a []value.Value, timeout time.Duration) (value.Value, error) {
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	// The WorkflowDef and run id are a[1] and a[2], as in start.
	def, id, _, err := startArgs(fn, append(a[:3:3], nil))
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		var out *value.Value
		var err error
		if timeout > 0 {
			out, err = durable.AwaitResult(ctx, e, def.def, id, timeout)
		} else {
			out, err = durable.Result(ctx, e, def.def, id)
		}
		if err != nil || out == nil {
			return value.Nothing, setupHint(fn, err)
		}
		return value.Just(*out), nil
	})}, nil
}

func (b *binding) getEventKernel(a []value.Value) (value.Value, error) {
	const fn = "Durable.getEvent"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	id, ok := a[1].(string)
	if !ok {
		return nil, value.BadArg(fn, "a String run id", a[1])
	}
	key, ok := a[2].(string)
	if !ok {
		return nil, value.BadArg(fn, "a String event key", a[2])
	}
	cd, err := skycodec.FromValue(a[3])
	if err != nil {
		return nil, value.BadArg(fn, "a Codec", a[3])
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		v, err := durable.GetEvent(ctx, e, id, key, cd)
		if err != nil || v == nil {
			return value.Nothing, setupHint(fn, err)
		}
		return value.Just(*v), nil
	})}, nil
}

func (b *binding) signalWithStartKernel(a []value.Value) (value.Value, error) {
	const fn = "Durable.signalWithStart"
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	def, id, input, err := startArgs(fn, a)
	if err != nil {
		return nil, err
	}
	name, ok := a[4].(string)
	if !ok {
		return nil, value.BadArg(fn, "a String signal name", a[4])
	}
	cd, err := skycodec.FromValue(a[5])
	if err != nil {
		return nil, value.BadArg(fn, "a Codec", a[5])
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		return value.Unit{}, setupHint(fn, durable.SignalWithStart(ctx, e, def.def, id, input, name, cd, a[6]))
	})}, nil
}
