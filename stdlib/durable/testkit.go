package durable

import (
	"context"
	_ "embed"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/durabletest"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skydb "skydurable/stdlib/db"
)

// This file is the Sky binding of runtime/durable/durabletest: the module
// Std.Durable.Test (DurableTest.sky).

//go:embed DurableTest.sky
var testSource string

// harnessKind is the value.Opaque kind of a Sky DurableTest.Harness.
const harnessKind = "DurableTest.Harness"

// TestKernels returns the kernels of Std.Durable.Test.
func TestKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "DurableTest_run", Arity: 2, Fn: testRun},
		{Name: "DurableTest_start", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.start"
			h, err := harnessArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			def, id, input, err := startArgs(fn, a)
			if err != nil {
				return nil, err
			}
			return unitOf(func(ctx context.Context) error { return durable.Start(ctx, h.Engine(), def.def, id, input) }), nil
		}},
		{Name: "DurableTest_startWith", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.startWith"
			h, err := harnessArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			given, err := startOptionsArg(fn, a[1])
			if err != nil {
				return nil, err
			}
			def, id, input, err := startArgs(fn, a[1:])
			if err != nil {
				return nil, err
			}
			return unitOf(func(ctx context.Context) error {
				opts, err := given.engineOptions(fn)
				if err != nil {
					return err
				}
				return durable.StartWith(ctx, h.Engine(), opts, def.def, id, input)
			}), nil
		}},
		{Name: "DurableTest_schedule", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.schedule"
			h, err := harnessArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			def, id, expr, err := scheduleArgs(fn, a)
			if err != nil {
				return nil, err
			}
			return unitOf(func(ctx context.Context) error {
				return durable.ScheduleRuns(ctx, h.Engine(), def.def, id, expr, a[4], durable.ScheduleOptions{})
			}), nil
		}},
		{Name: "DurableTest_signal", Arity: 5, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.signal"
			h, err := harnessArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			id, name, cd, payload, err := signalArgs(fn, a)
			if err != nil {
				return nil, err
			}
			return unitOf(func(ctx context.Context) error { return durable.SignalValue(ctx, h.Engine(), id, name, cd, payload) }), nil
		}},
		{Name: "DurableTest_advance", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.advance"
			h, err := harnessArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			ms, ok := a[1].(int64)
			if !ok {
				return nil, value.BadArg(fn, "an Int of milliseconds", a[1])
			}
			d := time.Duration(min(ms, durable.MaxTimerMs)) * time.Millisecond
			return unitOf(func(ctx context.Context) error { return h.Advance(ctx, d) }), nil
		}},
		{Name: "DurableTest_drain", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			h, err := harnessArg("DurableTest.drain", a[0])
			if err != nil {
				return nil, err
			}
			return unitOf(h.Drain), nil
		}},
		{Name: "DurableTest_status", Arity: 2, Fn: describing("DurableTest.status", func(r durable.Run, _ []durable.JournalEntry) value.Value {
			return string(r.Status)
		})},
		{Name: "DurableTest_journal", Arity: 2, Fn: describing("DurableTest.journal", func(_ durable.Run, j []durable.JournalEntry) value.Value {
			ids := durabletest.StepIDs(j)
			vs := make([]value.Value, len(ids))
			for i, id := range ids {
				vs[i] = id
			}
			return value.FromSlice(vs)
		})},
		{Name: "DurableTest_output", Arity: 2, Fn: describing("DurableTest.output", func(r durable.Run, _ []durable.JournalEntry) value.Value {
			if r.Status != durable.StatusDone {
				return value.Nothing
			}
			return value.Just(r.Output)
		})},
		{Name: "DurableTest_db", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			h, err := harnessArg("DurableTest.db", a[0])
			if err != nil {
				return nil, err
			}
			return skydb.ToValue(h.DB()), nil
		}},
		{Name: "DurableTest_crashEverywhere", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			const fn = "DurableTest.crashEverywhere"
			return crashEverywhere(fn, value.FromSlice(a[:1]), a[1], a[2], crashReport)
		}},
		{Name: "DurableTest_crashReport", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			return crashEverywhere("DurableTest.crashReport", a[0], a[1], a[2], func(r durabletest.CrashReport) value.Value {
				return findingList(r.Findings())
			})
		}},
	}
}

// testRun is DurableTest.run workflows body: a fresh Harness for the body's
// task, closed when it ends.
func testRun(a []value.Value) (value.Value, error) {
	const fn = "DurableTest.run"
	defs, err := workflowsArg(fn, a[0])
	if err != nil {
		return nil, err
	}
	body := a[1]
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		h, err := durabletest.New(ctx, defs)
		if err != nil {
			return nil, err
		}
		defer h.Close()
		return task.Run(ctx, value.ApplyTask(fn, body, value.Opaque{Kind: harnessKind, V: h}))
	})}, nil
}

// crashEverywhere is DurableTest.crashEverywhere (or crashReport)
// workflows runId script, its report made a Sky value by report.
func crashEverywhere(fn string, workflows, runIDArg, script value.Value, report func(durabletest.CrashReport) value.Value) (value.Value, error) {
	defs, err := workflowsArg(fn, workflows)
	if err != nil {
		return nil, err
	}
	runID, ok := runIDArg.(string)
	if !ok {
		return nil, value.BadArg(fn, "a String run id", runIDArg)
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		rep, err := durabletest.CrashEverywhereWith(ctx, durabletest.SQLiteCopies(), defs, runID, func(ctx context.Context, h *durabletest.Harness) error {
			_, err := task.Run(ctx, value.ApplyTask(fn+" script", script, value.Opaque{Kind: harnessKind, V: h}))
			return err
		})
		if err != nil {
			return nil, task.As(err)
		}
		return report(rep), nil
	})}, nil
}

// crashReport is a CrashReport as the Sky record of that name.
func crashReport(r durabletest.CrashReport) value.Value {
	points := make([]value.Value, len(r.Points))
	for i, p := range r.Points {
		points[i] = value.NewRecord(map[string]value.Value{
			"step":          p.StepID,
			"boundary":      p.Boundary.String(),
			"name":          p.Name(),
			"outputMatched": p.OutputMatched,
			"ranTwice":      stringList(p.RanTwice),
			"failures":      stringList(findingLines(p.Findings)),
		})
	}

	output := value.Nothing
	if r.Status == durable.StatusDone {
		output = value.Just(r.Output)
	}
	return value.NewRecord(map[string]value.Value{
		"run":      r.RunID,
		"journal":  stringList(r.Journal),
		"status":   string(r.Status),
		"output":   output,
		"points":   value.FromSlice(points),
		"failures": stringList(r.Failures()),
		"findings": findingList(r.Findings()),
	})
}

// findingList is a List CrashFinding.
func findingList(found []durabletest.Finding) value.Value {
	findings := make([]value.Value, len(found))
	for i, f := range found {
		findings[i] = value.NewRecord(map[string]value.Value{
			"point":    f.Point,
			"step":     f.StepID,
			"boundary": f.Boundary.String(),
			"differs":  f.Differs,
			"detail":   f.Detail,
		})
	}
	return value.FromSlice(findings)
}

// findingLines is a crash point's findings as the lines CrashPoint.failures
// holds.
func findingLines(fs []durabletest.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Detail
	}
	return out
}

func stringList(ss []string) value.Value {
	vs := make([]value.Value, len(ss))
	for i, s := range ss {
		vs[i] = s
	}
	return value.FromSlice(vs)
}

func harnessArg(fn string, v value.Value) (*durabletest.Harness, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == harnessKind {
		if h, ok := o.V.(*durabletest.Harness); ok {
			return h, nil
		}
	}
	return nil, value.BadArg(fn, "a DurableTest Harness (from DurableTest.run)", v)
}

// workflowsArg reads a List RegisteredWorkflow (repeats of one workflow
// dropped, two workflows under one name and version refused).
func workflowsArg(fn string, v value.Value) ([]durable.Workflow, error) {
	listed, err := registeredList(fn, v)
	if err != nil {
		return nil, err
	}
	return distinctWorkflows(fn, listed)
}

// unitOf is a Task of () running f.
func unitOf(f func(context.Context) error) value.Value {
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if err := f(ctx); err != nil {
			return nil, err
		}
		return value.Unit{}, nil
	})}
}

// describing is a kernel `Harness -> String -> Task Error a` reading a run.
func describing(fn string, f func(durable.Run, []durable.JournalEntry) value.Value) func([]value.Value) (value.Value, error) {
	return func(a []value.Value) (value.Value, error) {
		h, err := harnessArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		id, ok := a[1].(string)
		if !ok {
			return nil, value.BadArg(fn, "a String run id", a[1])
		}
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			r, j, err := h.Describe(ctx, id)
			if err != nil {
				return nil, err
			}
			return f(r, j), nil
		})}, nil
	}
}
