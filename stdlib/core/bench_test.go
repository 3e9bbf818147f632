package core

import (
	"context"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// BenchmarkTaskAndThenChain builds and runs `succeed 0 |> andThen inc` 1000
// times over, the shape of a workflow body of many steps.
func BenchmarkTaskAndThenChain(b *testing.B) {
	succeed, andThen := kernels["Task_succeed"].Fn, kernels["Task_andThen"].Fn
	inc := value.NewFunc("inc", 1, func(a []value.Value) (value.Value, error) {
		return succeed([]value.Value{a[0].(int64) + 1})
	})
	for b.Loop() {
		t, _ := succeed([]value.Value{int64(0)})
		for i := 0; i < 1000; i++ {
			t, _ = andThen([]value.Value{inc, t})
		}
		v, err := task.Run(context.Background(), t.(value.Task).T)
		if err != nil || v != int64(1000) {
			b.Fatalf("got %v %v", v, err)
		}
	}
}

// BenchmarkListMap maps a Go function over a list of 10,000 Ints.
func BenchmarkListMap(b *testing.B) {
	l, _ := kernels["List_range"].Fn([]value.Value{int64(1), int64(10_000)})
	for b.Loop() {
		if _, err := listMap([]value.Value{double, l}); err != nil {
			b.Fatal(err)
		}
	}
}
