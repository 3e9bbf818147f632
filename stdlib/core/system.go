package core

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// Process is what Sky.Core.System reads and changes: the program's
// arguments, its environment and its working directory.
type Process struct {
	// Args are the program's arguments (what follows `--` on `sky run`).
	Args []string
	// LookupEnv reads a variable; ok is false when it is not set.
	LookupEnv func(key string) (val string, ok bool)
	// Setenv and Unsetenv change the environment.
	Setenv   func(key, val string) error
	Unsetenv func(key string) error
	// Getwd is the working directory.
	Getwd func() (string, error)
}

// OSProcess is the real process environment with the given arguments.
func OSProcess(args []string) Process {
	return Process{Args: args, LookupEnv: os.LookupEnv, Setenv: os.Setenv, Unsetenv: os.Unsetenv, Getwd: os.Getwd}
}

func systemKernels(p Process) []value.Kernel {
	getenv := func(fn, key string) (string, error) {
		v, ok := p.LookupEnv(key)
		if !ok {
			return "", task.Errorf(task.NotFound, "%s: the environment variable %s is not set; hint: set it, or use System.getenvOr %q \"default\"", fn, key, key)
		}
		return v, nil
	}
	return []value.Kernel{
		{Name: "System_args", Arity: 1, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				return stringsToList(p.Args), nil
			})}, nil
		}},
		{Name: "System_getArg", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			i, err := intArg("System.getArg", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if i < 0 || i >= int64(len(p.Args)) {
					return value.Nothing, nil
				}
				return value.Just(p.Args[i]), nil
			})}, nil
		}},
		{Name: "System_getenv", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.getenv", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				return getenv("System.getenv", key)
			})}, nil
		}},
		{Name: "System_getenvOr", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.getenvOr", a[0])
			if err != nil {
				return nil, err
			}
			def, err := stringArg("System.getenvOr", a[1])
			if err != nil {
				return nil, err
			}
			if v, ok := p.LookupEnv(key); ok && v != "" {
				return v, nil
			}
			return def, nil
		}},
		{Name: "System_getenvInt", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.getenvInt", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				s, err := getenv("System.getenvInt", key)
				if err != nil {
					return nil, err
				}
				n, perr := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
				if perr != nil {
					return nil, task.Errorf(task.InvalidInput, "System.getenvInt: %s is %q, not an integer", key, s)
				}
				return n, nil
			})}, nil
		}},
		{Name: "System_getenvBool", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.getenvBool", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				s, err := getenv("System.getenvBool", key)
				if err != nil {
					return nil, err
				}
				switch strings.ToLower(strings.TrimSpace(s)) {
				case "true", "1", "yes":
					return true, nil
				case "false", "0", "no":
					return false, nil
				}
				return nil, task.Errorf(task.InvalidInput, "System.getenvBool: %s is %q, not a Bool; hint: use true/false, 1/0 or yes/no", key, s)
			})}, nil
		}},
		{Name: "System_setenv", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.setenv", a[0])
			if err != nil {
				return nil, err
			}
			val, err := stringArg("System.setenv", a[1])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if err := p.Setenv(key, val); err != nil {
					return nil, task.Errorf(task.InvalidInput, "System.setenv %q: %w", key, err)
				}
				return value.Unit{}, nil
			})}, nil
		}},
		{Name: "System_unsetenv", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			key, err := stringArg("System.unsetenv", a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if err := p.Unsetenv(key); err != nil {
					return nil, task.Errorf(task.InvalidInput, "System.unsetenv %q: %w", key, err)
				}
				return value.Unit{}, nil
			})}, nil
		}},
		{Name: "System_cwd", Arity: 1, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				dir, err := p.Getwd()
				if err != nil {
					return nil, task.Errorf(task.Io, "System.cwd: %w", err)
				}
				return dir, nil
			})}, nil
		}},
		loadEnvKernel(p),
		{Name: "System_exit", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			code, err := intArg("System.exit", a[0])
			if err != nil {
				return nil, err
			}
			if code < 0 || code > 255 {
				return nil, &value.RuntimeError{Message: fmt.Sprintf("System.exit %d: an exit code is from 0 to 255; hint: use 1 for a failure", code)}
			}
			return nil, &value.Exit{Code: int(code)}
		}},
	}
}
