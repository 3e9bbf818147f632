package core

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// fakeClock is a virtual clock: Sleep advances it instead of waiting.
type fakeClock struct{ now time.Time }

func (c *fakeClock) env() Env {
	return Env{
		Now:    func() time.Time { return c.now },
		Sleep:  func(_ context.Context, d time.Duration) error { c.now = c.now.Add(d); return nil },
		Random: bytes.NewReader(bytes.Repeat([]byte{0xff, 0x00, 0x5a}, 1000)),
	}
}

func testKernels() map[string]value.Kernel {
	c := &fakeClock{now: time.UnixMilli(1_700_000_000_000)}
	return KernelsWith(c.env())
}

var kernels = testKernels()

// call runs a kernel by name; a runtime error fails the test.
func call(t *testing.T, name string, args ...value.Value) value.Value {
	t.Helper()
	v, err := callErr(name, args...)
	if err != nil {
		t.Fatalf("%s: unexpected runtime error: %v", name, err)
	}
	return v
}

func callErr(name string, args ...value.Value) (value.Value, error) {
	k, ok := kernels[name]
	if !ok {
		panic("no kernel " + name)
	}
	if len(args) != k.Arity {
		panic("wrong arity for " + name)
	}
	return k.Fn(args)
}

func ints(is ...int64) *value.List {
	vs := make([]value.Value, len(is))
	for i, x := range is {
		vs[i] = x
	}
	return value.FromSlice(vs)
}

func strs(ss ...string) *value.List {
	vs := make([]value.Value, len(ss))
	for i, x := range ss {
		vs[i] = x
	}
	return value.FromSlice(vs)
}

// fn makes a Sky function from Go.
func fn(arity int, f func(a []value.Value) value.Value) value.Func {
	return value.NewFunc("test", arity, func(a []value.Value) (value.Value, error) { return f(a), nil })
}

var (
	double = fn(1, func(a []value.Value) value.Value { return a[0].(int64) * 2 })
	isEven = fn(1, func(a []value.Value) value.Value { return a[0].(int64)%2 == 0 })
	plus   = fn(2, func(a []value.Value) value.Value { return a[0].(int64) + a[1].(int64) })
	minus  = fn(2, func(a []value.Value) value.Value { return a[0].(int64) - a[1].(int64) })
)

// kernelCase is one kernel call and the value.Show of its expected result.
type kernelCase struct {
	name string
	args []value.Value
	want string
}

func runCases(t *testing.T, cases []kernelCase) {
	t.Helper()
	for _, c := range cases {
		got, err := callErr(c.name, c.args...)
		if err != nil {
			t.Errorf("%s %v: runtime error %v", c.name, c.args, err)
			continue
		}
		if s := value.Show(got); s != c.want {
			t.Errorf("%s %s = %s, want %s", c.name, showArgs(c.args), s, c.want)
		}
	}
}

func showArgs(args []value.Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = value.Show(a)
	}
	return strings.Join(parts, " ")
}

func args(vs ...value.Value) []value.Value { return vs }

func TestBasics(t *testing.T) {
	runCases(t, []kernelCase{
		{"Basics_toFloat", args(int64(3)), "3"},
		{"Basics_round", args(2.5), "3"},
		{"Basics_round", args(-1.5), "-1"},
		{"Basics_floor", args(-1.5), "-2"},
		{"Basics_ceiling", args(1.2), "2"},
		{"Basics_truncate", args(-1.7), "-1"},
		{"Basics_abs", args(int64(-4)), "4"},
		{"Basics_abs", args(-4.5), "4.5"},
		{"Basics_negate", args(int64(4)), "-4"},
		{"Basics_min", args("b", "a"), `"a"`},
		{"Basics_max", args(int64(1), int64(7)), "7"},
		{"Basics_compare", args(int64(1), int64(2)), "LT"},
		{"Basics_compare", args("b", "b"), "EQ"},
		{"Basics_clamp", args(int64(0), int64(10), int64(11)), "10"},
		{"Basics_clamp", args(int64(0), int64(10), int64(-1)), "0"},
		{"Basics_clamp", args(int64(0), int64(10), int64(5)), "5"},
		{"Basics_modBy", args(int64(3), int64(-1)), "2"},
		{"Basics_modBy", args(int64(-3), int64(1)), "-2"},
		{"Basics_remainderBy", args(int64(3), int64(-1)), "-1"},
		{"Basics_modBy", args(int64(0), int64(5)), "0"},
		{"Basics_remainderBy", args(int64(0), int64(5)), "0"},
		{"Math_round", args(-2.5), "-3"},
		{"Math_round", args(2.5), "3"},
		{"Basics_round", args(-2.5), "-2"},
		{"Basics_sqrt", args(int64(16)), "4"},
		{"Basics_logBase", args(10.0, 1000.0), "2.9999999999999996"},
		{"Basics_isNaN", args(0.0), "False"},
		{"Error_toString", args(value.FromError(task.New(task.NotFound, "no user 42"))), `"NotFound: no user 42"`},
		{"Error_toString", args(value.FromError(task.New(task.Io, "disk full"))), `"IO: disk full"`},
	})
	if _, err := callErr("Basics_round", "x"); err == nil || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf(`round "x": want a runtime error naming "x", got %v`, err)
	}
	// A Float with no Int is a runtime error naming the function called
	// and the value.
	for _, c := range []struct {
		kernel string
		arg    float64
		want   string
	}{
		{"Basics_floor", math.Inf(1), "floor Infinity"},
		{"Math_floor", math.Inf(-1), "Math.floor -Infinity"},
		{"Math_ceil", 1e20, "Math.ceil 100000000000000000000"},
		{"Math_trunc", math.NaN(), "Math.trunc NaN"},
		{"Math_round", math.NaN(), "Math.round NaN"},
	} {
		if _, err := callErr(c.kernel, c.arg); err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%s %v: want a runtime error starting %q, got %v", c.kernel, c.arg, c.want, err)
		}
	}
	if v := call(t, "Basics_pi"); v != 3.141592653589793 {
		t.Errorf("pi = %v", v)
	}
}

func TestList(t *testing.T) {
	pair := fn(2, func(a []value.Value) value.Value { return value.Tuple{a[0], a[1]} })
	byNeg := fn(1, func(a []value.Value) value.Value { return -a[0].(int64) })
	half := fn(1, func(a []value.Value) value.Value {
		if a[0].(int64)%2 == 0 {
			return value.Just(a[0].(int64) / 2)
		}
		return value.Nothing
	})
	desc := fn(2, func(a []value.Value) value.Value {
		c, _ := value.Compare(a[1], a[0])
		return orderOf(c)
	})
	rng := fn(1, func(a []value.Value) value.Value { return ints(0, a[0].(int64)) })
	runCases(t, []kernelCase{
		{"List_repeat", args(int64(3), "x"), `["x","x","x"]`},
		{"List_range", args(int64(1), int64(4)), "[1,2,3,4]"},
		{"List_range", args(int64(4), int64(1)), "[]"},
		{"List_length", args(ints(1, 2, 3)), "3"},
		{"List_reverse", args(ints(1, 2, 3)), "[3,2,1]"},
		{"List_member", args(int64(2), ints(1, 2)), "True"},
		{"List_member", args(int64(5), ints(1, 2)), "False"},
		{"List_last", args(ints(1, 2)), "Just 2"},
		{"List_last", args(ints()), "Nothing"},
		{"List_map", args(double, ints(1, 2, 3)), "[2,4,6]"},
		{"List_indexedMap", args(pair, strs("a", "b")), `[(0,"a"),(1,"b")]`},
		{"List_filter", args(isEven, ints(1, 2, 3, 4)), "[2,4]"},
		{"List_filterMap", args(half, ints(1, 2, 3, 4)), "[1,2]"},
		{"List_foldl", args(minus, int64(0), ints(1, 2, 3)), "2"},  // 3 - (2 - (1 - 0))
		{"List_foldr", args(minus, int64(0), ints(1, 2, 3)), "2"},  // 1 - (2 - (3 - 0))
		{"List_foldl", args(plus, int64(10), ints(1, 2, 3)), "16"}, // sum
		{"List_any", args(isEven, ints(1, 3)), "False"},
		{"List_all", args(isEven, ints(2, 4)), "True"},
		{"List_find", args(isEven, ints(1, 4, 6)), "Just 4"},
		{"List_append", args(ints(1), ints(2, 3)), "[1,2,3]"},
		{"List_concat", args(value.FromSlice([]value.Value{ints(1), ints(), ints(2, 3)})), "[1,2,3]"},
		{"List_concatMap", args(rng, ints(1, 2)), "[0,1,0,2]"},
		{"List_intersperse", args(",", strs("a", "b", "c")), `["a",",","b",",","c"]`},
		{"List_take", args(int64(2), ints(1, 2, 3)), "[1,2]"},
		{"List_take", args(int64(-1), ints(1, 2, 3)), "[]"},
		{"List_drop", args(int64(2), ints(1, 2, 3)), "[3]"},
		{"List_drop", args(int64(9), ints(1, 2, 3)), "[]"},
		{"List_partition", args(isEven, ints(1, 2, 3, 4)), "([2,4],[1,3])"},
		{"List_map2", args(plus, ints(1, 2, 3), ints(10, 20)), "[11,22]"},
		{"List_zip", args(ints(1, 2), strs("a", "b", "c")), `[(1,"a"),(2,"b")]`},
		{"List_unzip", args(value.FromSlice([]value.Value{value.Tuple{int64(1), "a"}})), `([1],["a"])`},
		{"List_sum", args(ints(1, 2, 3)), "6"},
		{"List_sum", args(value.FromSlice([]value.Value{int64(1), 0.5})), "1.5"},
		{"List_product", args(ints()), "1"},
		{"List_maximum", args(ints(3, 9, 2)), "Just 9"},
		{"List_minimum", args(ints()), "Nothing"},
		{"List_sort", args(strs("b", "c", "a")), `["a","b","c"]`},
		{"List_sortBy", args(byNeg, ints(1, 3, 2)), "[3,2,1]"},
		{"List_sortWith", args(desc, ints(1, 3, 2)), "[3,2,1]"},
	})
}

func TestListErrorsNameTheValue(t *testing.T) {
	notBool := fn(1, func(a []value.Value) value.Value { return int64(1) })
	_, err := callErr("List_filter", notBool, ints(1))
	if err == nil || !strings.Contains(err.Error(), "List.filter expects a function returning a Bool, but got 1 (Int)") {
		t.Errorf("List.filter with a non-Bool predicate: got %v", err)
	}
	_, err = callErr("List_map", double, "abc")
	if err == nil || !strings.Contains(err.Error(), `List.map expects a List, but got "abc"`) {
		t.Errorf("List.map on a String: got %v", err)
	}
	_, err = callErr("List_sort", value.FromSlice([]value.Value{int64(1), "a"}))
	if err == nil {
		t.Error("sorting an Int and a String: want an error")
	}
}

func TestLongListsDoNotRecurse(t *testing.T) {
	l := call(t, "List_range", int64(1), int64(1_000_000))
	got := call(t, "List_foldl", plus, int64(0), call(t, "List_map", double, l))
	if got != int64(1_000_001_000_000) {
		t.Errorf("sum of doubled 1..1e6 = %v", got)
	}
}

func TestString(t *testing.T) {
	up := fn(1, func(a []value.Value) value.Value { return a[0].(rune) - 32 })
	notA := fn(1, func(a []value.Value) value.Value { return a[0].(rune) != 'a' })
	cons := fn(2, func(a []value.Value) value.Value { return string(a[0].(rune)) + a[1].(string) })
	runCases(t, []kernelCase{
		{"String_length", args("héllo"), "5"},
		{"String_reverse", args("abc"), `"cba"`},
		{"String_repeat", args(int64(3), "ab"), `"ababab"`},
		{"String_replace", args(".", "-", "a.b.c"), `"a-b-c"`},
		{"String_replace", args("", "-", "ab"), `"-a-b-"`},
		{"String_concat", args(strs("a", "b")), `"ab"`},
		{"String_split", args(",", "a,b,,c"), `["a","b","","c"]`},
		{"String_join", args(", ", strs("a", "b")), `"a, b"`},
		{"String_words", args("  a b\t c\n"), `["a","b","c"]`},
		{"String_lines", args("a\r\nb\nc"), `["a","b","c"]`},
		{"String_lines", args("a\rb"), `["a","b"]`},
		{"String_words", args(""), `[]`},
		{"String_words", args(" \t "), `[]`},
		{"String_slice", args(int64(1), int64(3), "hello"), `"el"`},
		{"String_slice", args(int64(-3), int64(-1), "hello"), `"ll"`},
		{"String_slice", args(int64(3), int64(1), "hello"), `""`},
		{"String_left", args(int64(2), "héllo"), `"hé"`},
		{"String_right", args(int64(9), "abc"), `"abc"`},
		{"String_dropLeft", args(int64(1), "abc"), `"bc"`},
		{"String_dropRight", args(int64(1), "abc"), `"ab"`},
		{"String_contains", args("ell", "hello"), "True"},
		{"String_startsWith", args("he", "hello"), "True"},
		{"String_endsWith", args("he", "hello"), "False"},
		{"String_indexes", args("a", "banana"), "[1,3,5]"},
		{"String_indexes", args("aa", "aaaa"), "[0,2]"},
		{"String_indexes", args("ss", "Mississippi"), "[2,5]"},
		{"String_toInt", args("-42"), "Just -42"},
		{"String_toInt", args("4.2"), "Nothing"},
		{"String_toInt", args(""), "Nothing"},
		{"String_fromInt", args(int64(-7)), `"-7"`},
		{"String_toFloat", args("1e-3"), "Just 0.001"},
		{"String_toFloat", args("NaN"), "Nothing"},
		{"String_toFloat", args("  2.5  "), "Just 2.5"},
		{"String_toInt", args(" 42 "), "Nothing"},
		{"String_fromFloat", args(2.0), `"2"`},
		{"String_fromFloat", args(1.5), `"1.5"`},
		{"String_fromChar", args('x'), `"x"`},
		{"String_toList", args("ab"), "['a','b']"},
		{"String_fromList", args(value.FromSlice([]value.Value{'h', 'i'})), `"hi"`},
		{"String_cons", args('a', "bc"), `"abc"`},
		{"String_uncons", args("ébc"), `Just ('é',"bc")`},
		{"String_uncons", args(""), "Nothing"},
		{"String_toUpper", args("abc"), `"ABC"`},
		{"String_toLower", args("ABC"), `"abc"`},
		{"String_toUpper", args("straße ﬁx"), `"STRASSE FIX"`},
		{"String_toLower", args("ΟΔΟΣ Σ"), `"οδος σ"`},
		{"String_pad", args(int64(5), '*', "a"), `"**a**"`},
		{"String_pad", args(int64(4), '*', "a"), `"**a*"`},
		{"String_pad", args(int64(5), ' ', "11"), `"  11 "`},
		{"String_padLeft", args(int64(3), '0', "7"), `"007"`},
		{"String_padRight", args(int64(3), '.', "ab"), `"ab."`},
		{"String_padLeft", args(int64(1), '0', "77"), `"77"`},
		{"String_trim", args("  a  "), `"a"`},
		{"String_trimLeft", args("  a  "), `"a  "`},
		{"String_trimRight", args("  a  "), `"  a"`},
		{"String_map", args(up, "abc"), `"ABC"`},
		{"String_filter", args(notA, "banana"), `"bnn"`},
		{"String_foldl", args(cons, "", "abc"), `"cba"`},
		{"String_foldr", args(cons, "", "abc"), `"abc"`},
		{"String_any", args(notA, "aaa"), "False"},
		{"String_all", args(notA, "bcd"), "True"},
	})
}

func TestDict(t *testing.T) {
	d := call(t, "Dict_fromList", value.FromSlice([]value.Value{
		value.Tuple{"b", int64(2)}, value.Tuple{"a", int64(1)}, value.Tuple{"c", int64(3)},
	}))
	other := call(t, "Dict_fromList", value.FromSlice([]value.Value{value.Tuple{"a", int64(100)}, value.Tuple{"z", int64(26)}}))
	keyLen := fn(2, func(a []value.Value) value.Value { return int64(len(a[0].(string))) + a[1].(int64) })
	collect := fn(3, func(a []value.Value) value.Value { return a[2].(string) + a[0].(string) })
	oddVal := fn(2, func(a []value.Value) value.Value { return a[1].(int64)%2 == 1 })
	runCases(t, []kernelCase{
		{"Dict_empty", nil, "Dict.fromList []"},
		{"Dict_size", args(d), "3"},
		{"Dict_keys", args(d), `["a","b","c"]`},
		{"Dict_values", args(d), "[1,2,3]"},
		{"Dict_toList", args(d), `[("a",1),("b",2),("c",3)]`},
		{"Dict_get", args("b", d), "Just 2"},
		{"Dict_get", args("x", d), "Nothing"},
		{"Dict_member", args("c", d), "True"},
		{"Dict_insert", args("a", int64(9), d), `Dict.fromList [("a",9),("b",2),("c",3)]`},
		{"Dict_remove", args("b", d), `Dict.fromList [("a",1),("c",3)]`},
		{"Dict_remove", args("x", d), `Dict.fromList [("a",1),("b",2),("c",3)]`},
		{"Dict_map", args(keyLen, d), `Dict.fromList [("a",2),("b",3),("c",4)]`},
		{"Dict_foldl", args(collect, "", d), `"abc"`},
		{"Dict_foldr", args(collect, "", d), `"cba"`},
		{"Dict_filter", args(oddVal, d), `Dict.fromList [("a",1),("c",3)]`},
		{"Dict_union", args(other, d), `Dict.fromList [("a",100),("b",2),("c",3),("z",26)]`},
	})
	// The original is unchanged by insert and remove.
	if s := value.Show(d); s != `Dict.fromList [("a",1),("b",2),("c",3)]` {
		t.Errorf("dict mutated: %s", s)
	}
}

func TestMaybeValues(t *testing.T) {
	runCases(t, []kernelCase{
		{"Maybe_values", args(value.FromSlice([]value.Value{value.Just(int64(1)), value.Nothing, value.Just(int64(3))})), "[1,3]"},
	})
}

func TestCharAndDebug(t *testing.T) {
	runCases(t, []kernelCase{
		{"Char_isUpper", args('A'), "True"},
		{"Char_isUpper", args('é'), "False"},
		{"Char_isAlphaNum", args('7'), "True"},
		{"Char_isHexDigit", args('F'), "True"},
		{"Char_isOctDigit", args('8'), "False"},
		{"Char_isSpace", args('\t'), "True"},
		{"Char_toUpper", args('é'), "'É'"},
		{"Char_toCode", args('A'), "65"},
		{"Char_fromCode", args(int64(97)), "'a'"},
		{"Char_fromCode", args(int64(-1)), "'\uFFFD'"},
		{"Debug_toString", args(value.Just(int64(3))), `"Just 3"`},
	})
	var buf strings.Builder
	env := (&fakeClock{}).env()
	env.Stderr = &buf
	v, err := KernelsWith(env)["Debug_log"].Fn(args("x", int64(3)))
	if err != nil || v != int64(3) || buf.String() != "x: 3\n" {
		t.Errorf("Debug.log: returned %v, %v; printed %q", v, err, buf.String())
	}
	if _, err := callErr("Debug_todo", "later"); !value.IsRuntimeError(err) || !strings.Contains(err.Error(), "Debug.todo: later") {
		t.Errorf("Debug.todo: got %v", err)
	}
}
