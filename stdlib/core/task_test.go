package core

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func runTask(t *testing.T, v value.Value) (value.Value, error) {
	t.Helper()
	tk, ok := v.(value.Task)
	if !ok {
		t.Fatalf("want a Task, got %s", value.Show(v))
	}
	return task.Run(context.Background(), tk.T)
}

// runShow forces a Task through Task.run and shows the Result.
func runShow(t *testing.T, v value.Value) string {
	t.Helper()
	return value.Show(call(t, "Task_run", v))
}

func skyErr(kind task.Kind, msg string) value.Value { return value.FromError(task.New(kind, msg)) }

func TestTaskCombinators(t *testing.T) {
	succeed := func(v value.Value) value.Value { return call(t, "Task_succeed", v) }
	fail := func(v value.Value) value.Value { return call(t, "Task_fail", v) }
	thenDouble := fn(1, func(a []value.Value) value.Value { return succeed(a[0].(int64) * 2) })
	recoverLen := fn(1, func(a []value.Value) value.Value { return succeed(int64(len(value.Show(a[0])))) })
	wrap := fn(1, func(a []value.Value) value.Value { return "wrapped " + a[0].(string) })

	cases := []struct {
		name string
		task value.Value
		want string
	}{
		{"succeed", succeed(int64(1)), "Ok 1"},
		{"fail with a String", fail("boom"), `Err "boom"`},
		{"andThen", call(t, "Task_andThen", thenDouble, succeed(int64(21))), "Ok 42"},
		{"andThen stops at failure", call(t, "Task_andThen", thenDouble, fail("no")), `Err "no"`},
		{"map", call(t, "Task_map", double, succeed(int64(4))), "Ok 8"},
		{"mapError", call(t, "Task_mapError", wrap, fail("x")), `Err "wrapped x"`},
		{"onError", call(t, "Task_onError", recoverLen, fail("abc")), "Ok 5"},
		{"onError passes success", call(t, "Task_onError", recoverLen, succeed(int64(1))), "Ok 1"},
		{"fromResult Ok", call(t, "Task_fromResult", value.Ok(int64(1))), "Ok 1"},
		{"fromResult Err", call(t, "Task_fromResult", value.Err("e")), `Err "e"`},
		{"sequence", call(t, "Task_sequence", value.FromSlice([]value.Value{succeed(int64(1)), succeed(int64(2))})), "Ok [1,2]"},
		{"sequence first error", call(t, "Task_sequence", value.FromSlice([]value.Value{succeed(int64(1)), fail("a"), fail("b")})), `Err "a"`},
		{"parallel", call(t, "Task_parallel", value.FromSlice([]value.Value{succeed(int64(1)), succeed(int64(2))})), "Ok [1,2]"},
		{"parallel empty", call(t, "Task_parallel", (*value.List)(nil)), "Ok []"},
		{"lazy", call(t, "Task_lazy", fn(1, func([]value.Value) value.Value { return "later" })), `Ok "later"`},
		{"Sky Error round trip", fail(skyErr(task.NotFound, "no user")), `Err (Error NotFound { details = Nothing, message = "no user" })`},
	}
	for _, c := range cases {
		if got := runShow(t, c.task); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestTaskFailureIsSkyErrorInGo(t *testing.T) {
	tk := call(t, "Task_fail", skyErr(task.Conflict, "duplicate id 7"))
	_, err := runTask(t, tk)
	var e *task.Error
	if !errors.As(err, &e) || e.Kind != task.Conflict || e.Message != "duplicate id 7" {
		t.Fatalf("failing with a Sky Error: want *task.Error Conflict, got %#v", err)
	}
	// A Go error from below reaches an onError handler as a Sky Error value.
	goFail := value.Task{T: task.Fail[value.Value](task.New(task.Timeout, "db slow"))}
	var seen value.Value
	h := fn(1, func(a []value.Value) value.Value { seen = a[0]; return call(t, "Task_succeed", value.Unit{}) })
	if got := runShow(t, call(t, "Task_onError", h, goFail)); got != "Ok ()" {
		t.Fatalf("onError result %s", got)
	}
	if s := value.Show(seen); s != `Error Timeout { details = Nothing, message = "db slow" }` {
		t.Errorf("handler saw %s", s)
	}
}

func TestTaskIsLazy(t *testing.T) {
	var runs atomic.Int32
	lazy := call(t, "Task_lazy", fn(1, func([]value.Value) value.Value { runs.Add(1); return int64(1) }))
	mapped := call(t, "Task_map", double, lazy)
	if runs.Load() != 0 {
		t.Fatal("building a Task ran it")
	}
	runShow(t, mapped)
	runShow(t, mapped)
	if runs.Load() != 2 {
		t.Errorf("running twice ran the effect %d times, want 2", runs.Load())
	}
}

func TestTaskCallbackMistakesAreReported(t *testing.T) {
	notTask := fn(1, func([]value.Value) value.Value { return int64(3) })
	_, err := runTask(t, call(t, "Task_andThen", notTask, call(t, "Task_succeed", int64(1))))
	if err == nil || !strings.Contains(err.Error(), "Task.andThen expects a function returning a Task, but got 3 (Int)") {
		t.Errorf("andThen with a non-Task result: got %v", err)
	}
	if _, err := callErr("Task_andThen", notTask, "x"); err == nil || !strings.Contains(err.Error(), `expects a Task, but got "x"`) {
		t.Errorf("andThen on a non-Task: got %v", err)
	}
}

func TestTimeUsesInjectedClock(t *testing.T) {
	clock := &fakeClock{now: time.UnixMilli(5_000)}
	ks := KernelsWith(clock.env())
	now, _ := ks["Time_now"].Fn(args(value.Unit{}))
	sleep, _ := ks["Time_sleep"].Fn(args(int64(1500)))
	v, err := runTask(t, now)
	if err != nil || v != int64(5_000) {
		t.Fatalf("Time.now () = %v, %v", v, err)
	}
	if v, err := runTask(t, sleep); err != nil || v != (value.Unit{}) {
		t.Fatalf("Time.sleep = %v, %v", v, err)
	}
	if v, _ := runTask(t, now); v != int64(6_500) {
		t.Errorf("after sleeping 1500ms the clock reads %v, want 6500", v)
	}
}

func TestDefaultSleepEndsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := DefaultEnv().Sleep(ctx, time.Hour)
	if e := task.As(err); e == nil || e.Kind != task.Unavailable {
		t.Errorf("sleep under a cancelled context: got %v", err)
	}
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-([47])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestUuid(t *testing.T) {
	v4, _ := runTask(t, call(t, "Uuid_v4"))
	if m := uuidShape.FindStringSubmatch(v4.(string)); m == nil || m[1] != "4" {
		t.Errorf("v4 %q is not a version 4 UUID", v4)
	}
	// The same clock reading: v7 ids must still increase strictly.
	clock := &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
	ks := KernelsWith(clock.env())
	v7, _ := ks["Uuid_v7"].Fn(nil)
	prev := ""
	for i := 0; i < 300; i++ {
		id, err := runTask(t, v7)
		if err != nil {
			t.Fatal(err)
		}
		s := id.(string)
		if m := uuidShape.FindStringSubmatch(s); m == nil || m[1] != "7" {
			t.Fatalf("v7 %q is not a version 7 UUID", s)
		}
		if !strings.HasPrefix(s, "018bcfe5-6800-7") {
			t.Fatalf("v7 %q does not start with the timestamp 1700000000000 (018bcfe56800)", s)
		}
		if s <= prev {
			t.Fatalf("v7 ids not increasing: %s then %s", prev, s)
		}
		prev = s
	}
}

func TestIncrementTailCarriesPastVariantBits(t *testing.T) {
	u := [16]byte{6: 0x70, 7: 0x00, 8: 0xbf, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xff}
	incrementTail(&u)
	if got := formatUUID(u); got != "00000000-0000-7001-8000-000000000000" {
		t.Errorf("increment = %s", got)
	}
}

func TestRuntimeErrorsAreNotHandled(t *testing.T) {
	notTask := fn(1, func([]value.Value) value.Value { return int64(3) })
	broken := call(t, "Task_andThen", notTask, call(t, "Task_succeed", int64(1)))
	handled := false
	h := fn(1, func([]value.Value) value.Value { handled = true; return call(t, "Task_succeed", int64(0)) })
	_, err := runTask(t, call(t, "Task_onError", h, call(t, "Task_mapError", double, broken)))
	if !value.IsRuntimeError(err) || handled {
		t.Errorf("a runtime error inside a Task: want it to pass mapError/onError untouched, got %v (handled=%v)", err, handled)
	}
	if _, err := callErr("Task_run", broken); !value.IsRuntimeError(err) {
		t.Errorf("Task.run of a broken Task: want a runtime error, got %v", err)
	}
}
