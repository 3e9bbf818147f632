package log

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func TestLogLines(t *testing.T) {
	for _, debug := range []bool{false, true} {
		var stdout, stderr strings.Builder
		ks := KernelsWith(Env{Stdout: &stdout, Stderr: &stderr, Debug: debug})
		for _, c := range []struct{ kernel, msg string }{
			{"Log_println", "hello"}, {"Log_info", "i"}, {"Log_warn", "w"}, {"Log_error", "e\nforged"}, {"Log_debug", "d"},
		} {
			tk, err := ks[c.kernel].Fn([]value.Value{c.msg})
			if err != nil {
				t.Fatal(err)
			}
			if stdout.Len()+stderr.Len() != 0 && c.kernel == "Log_println" {
				t.Fatal("building the Task printed")
			}
			if v, err := task.Run(context.Background(), tk.(value.Task).T); err != nil || v != (value.Unit{}) {
				t.Fatalf("%s: %v %v", c.kernel, v, err)
			}
		}
		if stdout.String() != "hello\n" {
			t.Errorf("stdout = %q", stdout.String())
		}
		// A line break in a levelled line's message is written \n: one
		// call, one line.
		want := "[INFO] i\n[WARN] w\n[ERROR] e\\nforged\n"
		if debug {
			want += "[DEBUG] d\n"
		}
		if stderr.String() != want {
			t.Errorf("debug=%v: stderr = %q, want %q", debug, stderr.String(), want)
		}
	}
}

func TestLogRejectsNonString(t *testing.T) {
	_, err := Kernels()["Log_info"].Fn([]value.Value{int64(3)})
	if err == nil || !strings.Contains(err.Error(), "Log.info expects a String, but got 3 (Int)") {
		t.Errorf("got %v", err)
	}
}

func TestModule(t *testing.T) {
	if src := Modules()["Std.Log"]; !strings.HasPrefix(src, "module Std.Log exposing") {
		t.Errorf("Std.Log source starts %q", src[:20])
	}
}
