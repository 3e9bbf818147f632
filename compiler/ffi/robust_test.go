package ffi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// samples are values of every Sky kind, to call kernels with wrong ones.
func samples() []value.Value {
	id := value.NewFunc("id", 1, func(a []value.Value) (value.Value, error) { return a[0], nil })
	pair := value.NewFunc("pair", 2, func(a []value.Value) (value.Value, error) { return value.Tuple{a[0], a[1]}, nil })
	codecs := Kernels()["Codec_int"]
	intCodec, _ := codecs.Fn(nil)
	return []value.Value{
		int64(3), int64(-1), int64(0), 2.5, "s", "", 'c', true, value.Unit{},
		(*value.List)(nil), value.FromSlice([]value.Value{int64(1), int64(2)}), value.FromSlice([]value.Value{"a"}),
		value.Tuple{int64(1), "b"}, value.NewRecord(map[string]value.Value{"a": int64(1)}),
		value.Just(int64(1)), value.Nothing, value.Ctor{Name: "X"}, value.Ok("v"), value.Err("e"),
		id, pair, (*value.Dict)(nil), intCodec, value.Opaque{Kind: "Db"},
		value.Task{T: task.Succeed[value.Value](int64(1))},
	}
}

// TestKernelsNeverPanic calls every stdlib kernel (but the durable engine's,
// tested in its own package) with many combinations of arguments of the
// wrong kinds: each must return a value or an error, never panic.
func TestKernelsNeverPanic(t *testing.T) {
	vals := samples()
	rng := rand.New(rand.NewPCG(1, 2))
	for name, k := range Kernels() {
		if strings.HasPrefix(name, "Durable_") || k.Arity == 0 {
			continue
		}
		for i := 0; i < 300; i++ {
			args := make([]value.Value, k.Arity)
			for j := range args {
				args[j] = vals[rng.IntN(len(vals))]
			}
			if msg := callSafely(k, args); msg != "" {
				t.Errorf("%s %s panicked: %s", name, showAll(args), msg)
				break
			}
		}
	}
}

func callSafely(k value.Kernel, args []value.Value) (panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	r, err := k.Fn(args)
	// Pure Tasks are run too: a wrong callback must fail the Task, not panic.
	if t, ok := r.(value.Task); ok && err == nil && strings.HasPrefix(k.Name, "Task_") {
		_, _ = task.Run(context.Background(), t.T)
	}
	return ""
}

func showAll(vs []value.Value) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = value.Show(v)
	}
	return strings.Join(parts, " ")
}
