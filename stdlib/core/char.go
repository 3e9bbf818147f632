package core

import (
	"fmt"
	"io"
	"unicode"
	"unicode/utf8"

	"skydurable/runtime/value"
)

func charKernels() []value.Kernel {
	test := func(name string, f func(rune) bool) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := charArg("Char."+name[len("Char_"):], a[0])
			return f(c), err
		}}
	}
	conv := func(name string, f func(rune) rune) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := charArg("Char."+name[len("Char_"):], a[0])
			return f(c), err
		}}
	}
	between := func(lo, hi rune) func(rune) bool { return func(c rune) bool { return c >= lo && c <= hi } }
	isUpper, isLower, isDigit := between('A', 'Z'), between('a', 'z'), between('0', '9')
	return []value.Kernel{
		test("Char_isUpper", isUpper),
		test("Char_isLower", isLower),
		test("Char_isAlpha", func(c rune) bool { return isUpper(c) || isLower(c) }),
		test("Char_isAlphaNum", func(c rune) bool { return isUpper(c) || isLower(c) || isDigit(c) }),
		test("Char_isDigit", isDigit),
		test("Char_isOctDigit", between('0', '7')),
		test("Char_isHexDigit", func(c rune) bool { return isDigit(c) || between('a', 'f')(c) || between('A', 'F')(c) }),
		test("Char_isSpace", unicode.IsSpace),
		conv("Char_toUpper", unicode.ToUpper),
		conv("Char_toLower", unicode.ToLower),
		{Name: "Char_toCode", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := charArg("Char.toCode", a[0])
			return int64(c), err
		}},
		{Name: "Char_fromCode", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			i, err := intArg("Char.fromCode", a[0])
			if err != nil {
				return nil, err
			}
			if i < 0 || i > unicode.MaxRune || !utf8.ValidRune(rune(i)) {
				return utf8.RuneError, nil
			}
			return rune(i), nil
		}},
	}
}

func debugKernels(env Env) []value.Kernel {
	return []value.Kernel{
		{Name: "Debug_toString", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.Show(a[0]), nil
		}},
		{Name: "Debug_log", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			tag, err := stringArg("Debug.log", a[0])
			if err != nil {
				return nil, err
			}
			if env.Stderr != nil {
				_, _ = io.WriteString(env.Stderr, tag+": "+value.Show(a[1])+"\n")
			}
			return a[1], nil
		}},
		{Name: "Debug_todo", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			msg, _ := a[0].(string)
			return nil, &value.RuntimeError{Message: fmt.Sprintf("Debug.todo: %s", msg)}
		}},
	}
}
