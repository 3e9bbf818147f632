package core

import (
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func timeKernels(env Env) []value.Kernel {
	format := func(name, fn, layout string) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			ms, err := intArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(ms).UTC().Format(layout), nil
		}}
	}
	return []value.Kernel{
		// Task.retryWith's jitter: ms spread uniformly over [ms/2, 3ms/2].
		{Name: "Task_jitter", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			ms, err := intArg("Task.jitter", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				var b [8]byte
				if _, err := io.ReadFull(env.Random, b[:]); err != nil || ms <= 0 {
					return ms, nil
				}
				return ms/2 + int64(binary.LittleEndian.Uint64(b[:])%uint64(ms+1)), nil
			})}, nil
		}},
		format("Time_formatISO8601", "Time.formatISO8601", "2006-01-02T15:04:05.000Z07:00"),
		format("Time_formatRFC3339", "Time.formatRFC3339", time.RFC3339),
		format("Time_formatHTTP", "Time.formatHTTP", http.TimeFormat),
		format("Time_timeString", "Time.timeString", time.TimeOnly),
		{Name: "Time_format", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			layout, err := stringArg("Time.format", a[0])
			if err != nil {
				return nil, err
			}
			ms, err := intArg("Time.format", a[1])
			if err != nil {
				return nil, err
			}
			return time.UnixMilli(ms).UTC().Format(layout), nil
		}},
		{Name: "Time_parseISO8601", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, err := stringArg("Time.parseISO8601", a[0])
			if err != nil {
				return nil, err
			}
			t, perr := time.Parse(time.RFC3339Nano, s)
			if perr != nil {
				return value.Err(value.FromError(task.Errorf(task.InvalidInput,
					"Time.parseISO8601: %q is not an ISO 8601 time; hint: write it as 2026-12-03T12:05:52Z or with an offset, 2026-12-03T13:05:52+01:00", s))), nil
			}
			return value.Ok(t.UnixMilli()), nil
		}},
		{Name: "Time_parse", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			layout, err := stringArg("Time.parse", a[0])
			if err != nil {
				return nil, err
			}
			s, err := stringArg("Time.parse", a[1])
			if err != nil {
				return nil, err
			}
			t, perr := time.Parse(layout, s)
			if perr != nil {
				return value.Err(value.FromError(task.Errorf(task.InvalidInput,
					"Time.parse: %q does not fit the layout %q; hint: the layout writes the reference time Mon Jan 2 15:04:05 2006 as the text does, e.g. \"2006-01-02\" for 2025-01-01", s, layout))), nil
			}
			return value.Ok(t.UnixMilli()), nil
		}},
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
