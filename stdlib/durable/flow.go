package durable

import (
	"context"
	"math"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// The Sky binding of flow control and schedules: Durable.registerWithLimits,
// Durable.schedule, Durable.scheduleWith and Durable.unschedule.

func (b *binding) flowKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Durable_registerWithLimits", Arity: 5, Fn: registerWithLimitsKernel},
		{Name: "Durable_schedule", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			return b.schedule("Durable.schedule", durable.ScheduleOptions{}, a)
		}},
		{Name: "Durable_scheduleWith", Arity: 6, Fn: func(a []value.Value) (value.Value, error) {
			r, ok := a[0].(*value.Record)
			catchUp, isBool := value.Value(nil), false
			if ok {
				catchUp, _ = r.Get("catchUp")
				_, isBool = catchUp.(bool)
			}
			if !isBool {
				return nil, value.BadArg("Durable.scheduleWith", "a ScheduleOptions record { catchUp : Bool }", a[0])
			}
			return b.schedule("Durable.scheduleWith", durable.ScheduleOptions{CatchUp: catchUp.(bool)}, a[1:])
		}},
		{Name: "Durable_unschedule", Arity: 2, Fn: b.runTask("Durable.unschedule", func(ctx context.Context, e *durable.Engine, id string) (value.Value, error) {
			_, err := e.Unschedule(ctx, id)
			return value.Unit{}, err
		})},
	}
}

// schedule is Durable.schedule over a: db, def, id, cron, input.
func (b *binding) schedule(fn string, opts durable.ScheduleOptions, a []value.Value) (value.Value, error) {
	e, err := b.engineArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	def, id, expr, err := scheduleArgs(fn, a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		return value.Unit{}, setupHint(fn, durable.ScheduleRuns(ctx, e, def.def, id, expr, a[4], opts))
	})}, nil
}

// scheduleArgs reads the workflow, schedule id and cron expression of a
// schedule kernel (Durable.schedule, DurableTest.schedule): a[1] to a[3].
func scheduleArgs(fn string, a []value.Value) (skyWorkflowDef, string, string, error) {
	def, err := defArg(fn, a[1])
	if err != nil {
		return skyWorkflowDef{}, "", "", err
	}
	id, ok := a[2].(string)
	if !ok {
		return skyWorkflowDef{}, "", "", value.BadArg(fn, "a String schedule id", a[2])
	}
	expr, ok := a[3].(string)
	if !ok {
		return skyWorkflowDef{}, "", "", value.BadArg(fn, "a String cron expression", a[3])
	}
	return def, id, expr, nil
}

// registerWithLimitsKernel reads a Limits i record (concurrency : Maybe
// Int, perKey : Maybe ( i -> String, Int ), ratePerSecond : Maybe Float,
// retry : RetryPolicy) and registers the workflow with it.
func registerWithLimitsKernel(a []value.Value) (value.Value, error) {
	const fn = "Durable.registerWithLimits"
	r, ok := a[0].(*value.Record)
	if !ok {
		return nil, value.BadArg(fn, "a Limits record", a[0])
	}
	field := func(name string) (value.Value, bool, error) {
		v, ok := r.Get(name)
		c, isCtor := v.(value.Ctor)
		switch {
		case !ok || !isCtor || (c.Name != "Just" && c.Name != "Nothing"):
			return nil, false, value.BadArg(fn, "a Limits record with a Maybe field "+name, a[0])
		case c.Name == "Nothing":
			return nil, false, nil
		}
		return c.Args[0], true, nil
	}
	var limits durable.Limits
	if v, just, err := field("concurrency"); err != nil {
		return nil, err
	} else if just {
		n, ok := v.(int64)
		if !ok {
			return nil, value.BadArg(fn, "concurrency : Maybe Int", v)
		}
		if n < 1 {
			return nil, belowOne(fn, "concurrency", n)
		}
		limits.Concurrency = int(min(n, math.MaxInt32))
	}
	var key func(value.Value) (string, error)
	if v, just, err := field("perKey"); err != nil {
		return nil, err
	} else if just {
		t, ok := v.(value.Tuple)
		if !ok || len(t) != 2 {
			return nil, value.BadArg(fn, "perKey : Maybe ( i -> String, Int )", v)
		}
		f, isFunc := t[0].(value.Func)
		n, isInt := t[1].(int64)
		if !isFunc || !isInt {
			return nil, value.BadArg(fn, "perKey : Maybe ( i -> String, Int )", v)
		}
		if n < 1 {
			return nil, task.Errorf(task.InvalidInput, "%s: perKey = Just ( key, %d ); hint: a limit is at least 1; use Nothing for no limit", fn, n)
		}
		limits.PerKey = int(min(n, math.MaxInt32))
		key = func(in value.Value) (string, error) {
			k, err := value.Apply(f, in)
			if err != nil {
				return "", err
			}
			s, ok := k.(string)
			if !ok {
				return "", value.BadArg(fn+" perKey function", "a String key", k)
			}
			return s, nil
		}
	}
	if v, just, err := field("ratePerSecond"); err != nil {
		return nil, err
	} else if just {
		// A whole number is a rate too (`Just 10`, which the checker lets
		// through as a number literal).
		f, ok := v.(float64)
		if n, isInt := v.(int64); isInt {
			f, ok = float64(n), true
		}
		if !ok {
			return nil, value.BadArg(fn, "ratePerSecond : Maybe Float", v)
		}
		if !(f > 0) {
			return nil, task.Errorf(task.InvalidInput, "%s: ratePerSecond = Just %v; hint: a positive number of runs a second, such as 20 or 0.5; use Nothing for no limit", fn, f)
		}
		limits.RatePerSecond = f
	}
	retry, ok := r.Get("retry")
	if !ok {
		return nil, value.BadArg(fn, "a Limits record with a retry : RetryPolicy field", a[0])
	}
	policy, err := retryPolicyArg(retry)
	if err != nil {
		return nil, err
	}
	reg, err := registerKernel(fn, policy, 1, a[1], a[2], a[3], a[4])
	if err != nil {
		return nil, err
	}
	o := reg.(value.Opaque)
	d := o.V.(skyWorkflowDef)
	d.def = d.def.WithLimits(limits, key)
	o.V = d
	return o, nil
}

// belowOne is the error of a limit below 1 (which would hold every run).
func belowOne(fn, field string, n int64) error {
	return task.Errorf(task.InvalidInput, "%s: %s = Just %d; hint: a limit is at least 1; use Nothing for no limit", fn, field, n)
}
