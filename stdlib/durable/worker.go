package durable

import (
	"context"
	"fmt"
	"os"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// workerKernels returns the kernel of Durable.worker:
//
//	worker : Db -> List RegisteredWorkflow -> WorkerOptions -> Task Error ()
//	worker = Ffi.kernel "Durable_worker"
func (b *binding) workerKernels() []value.Kernel {
	return []value.Kernel{{Name: "Durable_worker", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
		const fn = "Durable.worker"
		e, err := b.engineArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		listed, err := registeredList(fn, a[1])
		if err != nil {
			return nil, err
		}
		opts, err := workerOptionsArg(a[2])
		if err != nil {
			return nil, err
		}
		defs, clash := distinctWorkflows(fn, listed)
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			if clash != nil {
				return nil, clash
			}
			hints, err := durable.HintSettingsFromEnv(os.Getenv)
			if err != nil {
				return nil, err
			}
			opts.Hints = hints.For(e.DB())
			opts.Report = func(msg string) { fmt.Fprintln(os.Stderr, "sky: "+msg) }
			_, err = e.Work(ctx, defs, opts)
			return value.Unit{}, setupHint(fn, err)
		})}, nil
	}}}
}

// workerOptionsArg reads a Sky WorkerOptions record.
func workerOptionsArg(v value.Value) (durable.WorkerOptions, error) {
	const fn = "Durable.worker"
	const want = "a WorkerOptions record { concurrency : Int, tickMs : Int, stopTimeoutMs : Int, versionPolicy : VersionPolicy }"
	r, ok := v.(*value.Record)
	if !ok {
		return durable.WorkerOptions{}, value.BadArg(fn, want, v)
	}
	var opts durable.WorkerOptions
	var n [3]int64
	for i, name := range []string{"concurrency", "tickMs", "stopTimeoutMs"} {
		f, _ := r.Get(name)
		v, ok := f.(int64)
		if !ok || v <= 0 {
			return opts, task.Errorf(task.InvalidInput, "%s: the field %s of WorkerOptions is %s, want a positive Int; hint: start from Durable.defaultWorkerOptions", fn, name, value.Show(f))
		}
		n[i] = v
	}
	policy, err := pollOptionsArg(r)
	if err != nil {
		return opts, value.BadArg(fn, want, v)
	}
	opts.Concurrency = int(n[0])
	opts.Tick = time.Duration(min(n[1], durable.MaxTimerMs)) * time.Millisecond
	opts.StopTimeout = time.Duration(min(n[2], durable.MaxTimerMs)) * time.Millisecond
	opts.Versions = policy.Versions
	return opts, nil
}
