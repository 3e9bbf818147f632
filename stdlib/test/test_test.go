package test

import (
	"strings"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func TestAssertions(t *testing.T) {
	ks := Kernels()
	cases := []struct {
		kernel string
		args   []value.Value
		want   string
	}{
		{"Test_equal", []value.Value{int64(4), int64(4)}, "Pass"},
		{"Test_equal", []value.Value{"a", "b"}, `Fail "Expected \"a\", but got \"b\""`},
		{"Test_equal", []value.Value{value.Just(int64(1)), value.Nothing}, `Fail "Expected Just 1, but got Nothing"`},
		{"Test_notEqual", []value.Value{int64(1), int64(2)}, "Pass"},
		{"Test_notEqual", []value.Value{int64(1), int64(1)}, `Fail "Expected a value other than 1, but got it"`},
		{"Test_ok", []value.Value{value.Ok(int64(1))}, "Pass"},
		{"Test_ok", []value.Value{value.Err(value.FromError(task.New(task.NotFound, "no row")))}, `Fail "Expected Ok, but got Err (NotFound: no row)"`},
		{"Test_err", []value.Value{value.Err("x")}, "Pass"},
		{"Test_err", []value.Value{value.Ok(int64(3))}, `Fail "Expected Err, but got Ok 3"`},
	}
	for _, c := range cases {
		got, err := ks[c.kernel].Fn(c.args)
		if err != nil {
			t.Errorf("%s: %v", c.kernel, err)
			continue
		}
		if s := value.Show(got); s != c.want {
			t.Errorf("%s %v = %s, want %s", c.kernel, c.args, s, c.want)
		}
	}
}

func TestEqualOnFunctionsIsARuntimeError(t *testing.T) {
	f := value.NewFunc("f", 1, nil)
	if _, err := Kernels()["Test_equal"].Fn([]value.Value{f, f}); err == nil || !strings.Contains(err.Error(), "cannot compare functions") {
		t.Errorf("got %v", err)
	}
	if _, err := Kernels()["Test_ok"].Fn([]value.Value{int64(1)}); err == nil || !strings.Contains(err.Error(), "Sky.Test.ok expects a Result") {
		t.Errorf("got %v", err)
	}
}

func TestModule(t *testing.T) {
	src := Modules()["Sky.Test"]
	for _, want := range []string{"module Sky.Test exposing", "= Test String (() -> TestResult)", "| Suite String (List Test)", "= Pass", "| Fail String"} {
		if !strings.Contains(src, want) {
			t.Errorf("Test.sky lacks %q", want)
		}
	}
}
