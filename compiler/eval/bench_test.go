package eval

import (
	"testing"

	"skydurable/runtime/value"
)

// benchProgram loads src and returns its top-level function name.
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
