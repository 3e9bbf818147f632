package task

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
)

func TestTaskIsLazyAndRerunnable(t *testing.T) {
	var runs atomic.Int32
	tk := From(func(context.Context) (int, error) { return int(runs.Add(1)), nil })
	if runs.Load() != 0 {
		t.Fatalf("building a task ran it")
	}
	for want := 1; want <= 2; want++ {
		got, err := Run(context.Background(), tk)
		if err != nil || got != want {
			t.Fatalf("run %d = %d, %v; want %d", want, got, err, want)
		}
	}
}

func TestCombinators(t *testing.T) {
	ctx := context.Background()
	boom := New(NotFound, "boom")
	cases := []struct {
		name    string
		task    Task[int]
		want    int
		wantErr string
	}{
		{"succeed", Succeed(1), 1, ""},
		{"fail", Fail[int](boom), 0, "NotFound: boom"},
		{"andThen", AndThen(Succeed(2), func(x int) Task[int] { return Succeed(x * 10) }), 20, ""},
		{"andThen short-circuits", AndThen(Fail[int](boom), func(int) Task[int] { panic("must not run") }), 0, "NotFound: boom"},
		{"map", Map(Succeed(3), func(x int) int { return x + 1 }), 4, ""},
		{"mapError", MapError(Fail[int](boom), func(error) error { return New(Conflict, "mapped") }), 0, "Conflict: mapped"},
		{"onError recovers", OnError(Fail[int](boom), func(err error) Task[int] { return Succeed(len(err.Error())) }), len("NotFound: boom"), ""},
		{"onError skipped on success", OnError(Succeed(5), func(error) Task[int] { return Succeed(0) }), 5, ""},
		{"fromResult ok", FromResult(7, nil), 7, ""},
		{"fromResult err", FromResult(7, boom), 0, "NotFound: boom"},
		{"lazy", Lazy(func() int { return 9 }), 9, ""},
		{"empty task", Task[int]{}, 0, "Unexpected: run of an empty task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Run(ctx, c.task)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestSequenceStopsAtFirstFailure(t *testing.T) {
	var ran []int
	step := func(i int, fail bool) Task[int] {
		return From(func(context.Context) (int, error) {
			ran = append(ran, i)
			if fail {
				return 0, New(Io, fmt.Sprint("step ", i))
			}
			return i, nil
		})
	}
	got, err := Run(context.Background(), Sequence([]Task[int]{step(1, false), step(2, false)}))
	if err != nil || fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("sequence = %v, %v", got, err)
	}
	ran = nil
	_, err = Run(context.Background(), Sequence([]Task[int]{step(1, false), step(2, true), step(3, false)}))
	if err == nil || err.Error() != "IO: step 2" || fmt.Sprint(ran) != "[1 2]" {
		t.Fatalf("err = %v, ran = %v; want IO: step 2 after running [1 2]", err, ran)
	}
}

func TestParallelKeepsOrderAndReportsFailure(t *testing.T) {
	ts := make([]Task[int], 20)
	for i := range ts {
		ts[i] = Succeed(i * i)
	}
	got, err := Run(context.Background(), Parallel(ts))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != i*i {
			t.Fatalf("got[%d] = %d", i, v)
		}
	}
	ts[7] = Fail[int](New(Timeout, "slow"))
	_, err = Run(context.Background(), Parallel(ts))
	if err == nil || err.Error() != "Timeout: slow" {
		t.Fatalf("err = %v, want Timeout: slow", err)
	}
}

func TestRunHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, Succeed(1))
	if As(err) == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a context.Canceled cause", err)
	}
}

func TestAsMapsGoErrors(t *testing.T) {
	wrapped := fmt.Errorf("outer: %w", New(Conflict, "dup"))
	cases := []struct {
		err  error
		kind Kind
		text string
	}{
		{wrapped, Conflict, "Conflict: dup"},
		{context.DeadlineExceeded, Timeout, "Timeout: context deadline exceeded"},
		{errors.New("plain"), Unexpected, "Unexpected: plain"},
	}
	for _, c := range cases {
		got := As(c.err)
		if got.Kind != c.kind || got.Error() != c.text {
			t.Errorf("As(%v) = %v (%v), want %v %q", c.err, got, got.Kind, c.kind, c.text)
		}
	}
	if As(nil) != nil {
		t.Errorf("As(nil) must be nil")
	}
	e := Errorf(Io, "reading %s: %w", "f", errors.New("disk"))
	if e.Message != "reading f: disk" || errors.Unwrap(e).Error() != "disk" {
		t.Errorf("Errorf = %q cause %v", e.Message, errors.Unwrap(e))
	}
}

func TestKindNamesAndLabels(t *testing.T) {
	if Io.Label() != "IO" || Ffi.Label() != "FFI" || PermissionDenied.String() != "PermissionDenied" {
		t.Fatalf("labels: %s %s %s", Io.Label(), Ffi.Label(), PermissionDenied)
	}
	for k := Io; k <= Unexpected; k++ {
		back, ok := KindFromName(k.String())
		if !ok || back != k {
			t.Errorf("KindFromName(%q) = %v, %v", k.String(), back, ok)
		}
	}
	if _, ok := KindFromName("Bogus"); ok {
		t.Errorf("KindFromName accepted Bogus")
	}
	if !New(Network, "x").Retryable() || New(Decode, "x").Retryable() {
		t.Errorf("Retryable wrong")
	}
}
