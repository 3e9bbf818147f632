package core

import (
	"context"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func timeKernels(env Env) []value.Kernel {
	return []value.Kernel{
		{Name: "Time_now", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				return env.Now().UnixMilli(), nil
			})}, nil
		}},
		{Name: "Time_sleep", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			ms, err := intArg("Time.sleep", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				if err := env.Sleep(ctx, time.Duration(ms)*time.Millisecond); err != nil {
					return nil, err
				}
				return value.Unit{}, nil
			})}, nil
		}},
	}
}
