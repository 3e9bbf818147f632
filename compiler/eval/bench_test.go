package eval

import (
	"context"
	"testing"

	"skydurable/runtime/task"

	"skydurable/runtime/value"
)

// benchFunc loads src and returns the value of its top-level function name.
func benchFunc(b *testing.B, src, name string) value.Value {
	b.Helper()
	var out []string
	p, err := LoadSource("Bench.sky", []byte(src), Options{Stdlib: testStdlib(&out)})
	if err != nil {
		b.Fatal(err)
	}
	f, err := p.Value(name)
	if err != nil {
		b.Fatal(err)
	}
	return f
}

const benchSrc = `
fib n =
    if n < 2 then
        n

    else
        fib (n - 1) + fib (n - 2)


sumTo n acc =
    if n == 0 then
        acc

    else
        sumTo (n - 1) (acc + n)


type alias Acc =
    { count : Int, total : Int }


step : Int -> Acc -> Acc
step x acc =
    { acc | count = acc.count + 1, total = acc.total + x }


fold f acc list =
    case list of
        [] ->
            acc

        x :: rest ->
            fold f (f x acc) rest


records n =
    fold step (Acc 0 0) (range n [])


range n acc =
    if n == 0 then
        acc

    else
        range (n - 1) (n :: acc)
`

func BenchmarkFib20(b *testing.B) {
	f := benchFunc(b, benchSrc, "fib")
	for b.Loop() {
		if v, err := value.Apply(f, int64(20)); err != nil || v != int64(6765) {
			b.Fatal(v, err)
		}
	}
}

func goFib(n int64) int64 {
	if n < 2 {
		return n
	}
	return goFib(n-1) + goFib(n-2)
}

func BenchmarkFib20Go(b *testing.B) {
	for b.Loop() {
		if goFib(20) != 6765 {
			b.Fatal()
		}
	}
}

func BenchmarkTailLoop100k(b *testing.B) {
	f := benchFunc(b, benchSrc, "sumTo")
	for b.Loop() {
		if _, err := value.Apply(f, int64(100000), int64(0)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordFold10k(b *testing.B) {
	f := benchFunc(b, benchSrc, "records")
	for b.Loop() {
		if _, err := value.Apply(f, int64(10000)); err != nil {
			b.Fatal(err)
		}
	}
}

const chainSrc = `
import Sky.Core.Task as Task


type alias State =
    { step : Int, total : Int }


advance : State -> Task.Task e State
advance s =
    Task.succeed { s | step = s.step + 1, total = s.total + s.step }


chain : Int -> State -> Task.Task e State
chain n s =
    if n == 0 then
        Task.succeed s

    else
        advance s |> Task.andThen (\next -> chain (n - 1) next)


workflow =
    chain 100 { step = 0, total = 0 }
`

// BenchmarkTaskChain100 runs a 100-step Task chain written in Sky; compare
// BenchmarkTaskChain100Go, the same chain built directly on runtime/task.
func BenchmarkTaskChain100(b *testing.B) {
	w := benchFunc(b, chainSrc, "workflow").(value.Task)
	for b.Loop() {
		if _, err := task.Run(context.Background(), w.T); err != nil {
			b.Fatal(err)
		}
	}
}

type goState struct{ step, total int64 }

func goChain(n int, s goState) task.Task[goState] {
	if n == 0 {
		return task.Succeed(s)
	}
	adv := task.Succeed(goState{step: s.step + 1, total: s.total + s.step})
	return task.AndThen(adv, func(next goState) task.Task[goState] { return goChain(n-1, next) })
}

func BenchmarkTaskChain100Go(b *testing.B) {
	for b.Loop() {
		if _, err := task.Run(context.Background(), goChain(100, goState{})); err != nil {
			b.Fatal(err)
		}
	}
}
