package core

import (
	"errors"
	"testing"

	"skydurable/runtime/value"
)

// fakeProcess is an in-memory environment for the System kernels.
func fakeProcess(env map[string]string) Process {
	return Process{
		Args:      []string{"a", "b"},
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Setenv:    func(k, v string) error { env[k] = v; return nil },
		Unsetenv:  func(k string) error { delete(env, k); return nil },
		Getwd:     func() (string, error) { return "/srv/app", nil },
	}
}

func TestSystemKernels(t *testing.T) {
	env := map[string]string{"ON": "Yes", "OFF": "0", "N": " 42 ", "X": "maybe", "EMPTY": ""}
	ks := KernelsWith(Env{Process: fakeProcess(env)})
	run := func(name string, args ...value.Value) string {
		v, err := ks[name].Fn(args)
		if err != nil {
			t.Fatalf("%s: runtime error %v", name, err)
		}
		if _, ok := v.(value.Task); ok {
			return runShow(t, v)
		}
		return value.Show(v)
	}
	cases := []struct {
		got, want string
	}{
		{run("System_args", value.Unit{}), `Ok ["a","b"]`},
		{run("System_getArg", int64(0)), `Ok (Just "a")`},
		{run("System_getArg", int64(-1)), `Ok Nothing`},
		{run("System_getArg", int64(2)), `Ok Nothing`},
		{run("System_getenvBool", "ON"), `Ok True`},
		{run("System_getenvBool", "OFF"), `Ok False`},
		{run("System_getenvInt", "N"), `Ok 42`},
		{run("System_getenvOr", "EMPTY", "d"), `"d"`},
		{run("System_getenvOr", "X", "d"), `"maybe"`},
		{run("System_getenv", "EMPTY"), `Ok ""`},
		{run("System_cwd", value.Unit{}), `Ok "/srv/app"`},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: got %s, want %s", i, c.got, c.want)
		}
	}
	if got := run("System_getenvBool", "X"); got != `Err (Error InvalidInput { details = Nothing, message = "System.getenvBool: X is \"maybe\", not a Bool; hint: use true/false, 1/0 or yes/no" })` {
		t.Errorf("getenvBool X = %s", got)
	}
	run("System_setenv", "NEW", "v")
	if env["NEW"] != "v" {
		t.Errorf("System.setenv did not set NEW: %v", env)
	}
	run("System_unsetenv", "NEW")
	if _, ok := env["NEW"]; ok {
		t.Errorf("System.unsetenv left NEW: %v", env)
	}
}

func TestSystemExit(t *testing.T) {
	ks := KernelsWith(Env{Process: fakeProcess(nil)})
	_, err := ks["System_exit"].Fn(args(int64(7)))
	var exit *value.Exit
	if !errors.As(err, &exit) || exit.Code != 7 || !value.IsRuntimeError(err) {
		t.Errorf("System.exit 7 = %v; want an *Exit{7} that no Task combinator catches", err)
	}
	if _, err := ks["System_exit"].Fn(args(int64(-1))); err == nil || errors.As(err, &exit) {
		t.Errorf("System.exit -1 = %v; want a runtime error", err)
	}
}
