package test

import (
	_ "embed"
	"errors"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Test.sky
var source string

// Modules returns the Sky source of Sky.Test.
func Modules() map[string]string { return map[string]string{"Sky.Test": source} }

// Pass is the Sky value `Pass`.
var Pass value.Value = value.Ctor{Name: "Pass"}

// Fail is the Sky value `Fail message`.
func Fail(message string) value.Value {
	return value.Ctor{Name: "Fail", Args: []value.Value{message}}
}

// Kernels returns the Sky.Test kernels.
func Kernels() map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, k := range []value.Kernel{
		{Name: "Test_equal", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			eq, err := value.Equal(a[0], a[1])
			if err != nil {
				return nil, err
			}
			if eq {
				return Pass, nil
			}
			return Fail("Expected " + Describe(a[0]) + ", but got " + Describe(a[1])), nil
		}},
		{Name: "Test_notEqual", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			eq, err := value.Equal(a[0], a[1])
			if err != nil {
				return nil, err
			}
			if !eq {
				return Pass, nil
			}
			return Fail("Expected a value other than " + Describe(a[0]) + ", but got it"), nil
		}},
		{Name: "Test_ok", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return expectResult(a[0], "Ok")
		}},
		{Name: "Test_err", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return expectResult(a[0], "Err")
		}},
	} {
		out[k.Name] = k
	}
	return out
}

func expectResult(v value.Value, want string) (value.Value, error) {
	c, ok := v.(value.Ctor)
	if !ok || len(c.Args) != 1 || (c.Name != "Ok" && c.Name != "Err") {
		return nil, value.BadArg("Sky.Test."+map[string]string{"Ok": "ok", "Err": "err"}[want], "a Result (Ok or Err)", v)
	}
	if c.Name == want {
		return Pass, nil
	}
	return Fail("Expected " + want + ", but got " + c.Name + " " + Describe(c.Args[0])), nil
}

// Describe renders a value for a test message: a Sky Error as
// "<Label>: <message>" (in parentheses when nested), anything else as
// value.Show does.
func Describe(v value.Value) string {
	if c, ok := v.(value.Ctor); ok && c.Name == "Error" {
		var e *task.Error
		if errors.As(value.ToError(v), &e) {
			return "(" + e.Error() + ")"
		}
	}
	return value.Show(v)
}
