package eval

import (
	"context"
	"fmt"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// testPrelude is a tiny stand-in for the real stdlib, so these tests do not
// depend on stdlib packages being written in parallel.
const testPrelude = `module Sky.Core.Prelude exposing (Maybe(..), Result(..), Error(..), ErrorKind(..), identity, not, fst, modBy)

type Maybe a
    = Just a
    | Nothing

type Result e a
    = Ok a
    | Err e

type ErrorKind
    = Io
    | NotFound
    | Unexpected

type Error
    = Error ErrorKind { message : String, details : Maybe String }

identity x =
    x

not b =
    if b then
        False

    else
        True

fst ( a, _ ) =
    a

modBy =
    Ffi.kernel "Basics_modBy"
`

const testTaskModule = `module Sky.Core.Task exposing (succeed, fail, andThen, map, parallel)

parallel =
    Ffi.kernel "Task_parallel"

succeed =
    Ffi.kernel "Task_succeed"

fail =
    Ffi.kernel "Task_fail"

andThen =
    Ffi.kernel "Task_andThen"

map f t =
    andThen (\a -> succeed (f a)) t
`

const testStringModule = `module Sky.Core.String exposing (fromInt)

fromInt =
    Ffi.kernel "String_fromInt"
`

const testLogModule = `module Std.Log exposing (println)

println =
    Ffi.kernel "Log_println"
`

const testTestModule = `module Sky.Test exposing (Test(..), TestResult(..), test, suite, equal)

type Test
    = Test String (() -> TestResult)
    | Suite String (List Test)

type TestResult
    = Pass
    | Fail String

test name body =
    Test name body

suite name tests =
    Suite name tests

equal =
    Ffi.kernel "Test_equal"
`

// testStdlib returns the fake stdlib; println appends to *out.
func testStdlib(out *[]string) Stdlib {
	k := func(name string, arity int, fn func([]value.Value) (value.Value, error)) value.Kernel {
		return value.Kernel{Name: name, Arity: arity, Fn: fn}
	}
	kernels := []value.Kernel{
		k("Basics_modBy", 2, func(a []value.Value) (value.Value, error) {
			m, ok1 := a[0].(int64)
			x, ok2 := a[1].(int64)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("modBy needs Ints")
			}
			r := x % m
			if r != 0 && (r < 0) != (m < 0) {
				r += m
			}
			return r, nil
		}),
		k("String_fromInt", 1, func(a []value.Value) (value.Value, error) { return fmt.Sprint(a[0]), nil }),
		k("Task_succeed", 1, func(a []value.Value) (value.Value, error) { return value.Task{T: task.Succeed(a[0])}, nil }),
		k("Task_fail", 1, func(a []value.Value) (value.Value, error) {
			return value.Task{T: task.Fail[value.Value](value.ToError(a[0]))}, nil
		}),
		k("Task_andThen", 2, func(a []value.Value) (value.Value, error) {
			f, t := a[0], a[1].(value.Task)
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				x, err := task.Run(ctx, t.T)
				if err != nil {
					return nil, err
				}
				next, err := value.Apply(f, x)
				if err != nil {
					return nil, err
				}
				return task.Run(ctx, next.(value.Task).T)
			})}, nil
		}),
		k("Task_parallel", 1, func(a []value.Value) (value.Value, error) {
			var ts []task.Task[value.Value]
			for _, v := range a[0].(*value.List).Slice() {
				ts = append(ts, v.(value.Task).T)
			}
			return value.Task{T: task.Map(task.Parallel(ts), func(vs []value.Value) value.Value { return value.FromSlice(vs) })}, nil
		}),
		k("Log_println", 1, func(a []value.Value) (value.Value, error) {
			s := a[0].(string)
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				*out = append(*out, s)
				return value.Unit{}, nil
			})}, nil
		}),
		k("Test_equal", 2, func(a []value.Value) (value.Value, error) {
			eq, err := value.Equal(a[0], a[1])
			if err != nil {
				return nil, err
			}
			if eq {
				return value.Ctor{Name: "Pass"}, nil
			}
			return value.Ctor{Name: "Fail", Args: []value.Value{"Expected " + value.Show(a[0]) + " but got " + value.Show(a[1])}}, nil
		}),
	}
	table := map[string]value.Kernel{}
	for _, kn := range kernels {
		table[kn.Name] = kn
	}
	return Stdlib{
		Modules: map[string]string{
			"Sky.Core.Prelude": testPrelude,
			"Sky.Core.Task":    testTaskModule,
			"Std.Log":          testLogModule,
			"Sky.Core.String":  testStringModule,
			"Sky.Test":         testTestModule,
		},
		Kernels: table,
	}
}
