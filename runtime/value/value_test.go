package value

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/task"
)

func rec(kv ...any) *Record {
	m := map[string]Value{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return NewRecord(m)
}

func TestShow(t *testing.T) {
	d, _ := DictFromList(FromSlice([]Value{Tuple{"b", int64(2)}, Tuple{"a", int64(1)}}))
	cases := []struct {
		v    Value
		want string
	}{
		{int64(-3), "-3"},
		{1.5, "1.5"},
		{3.0, "3"},
		{1e21, "1e+21"},
		{"s\"\n", `"s\"\n"`},
		{'c', "'c'"},
		{'\'', `'\''`},
		{true, "True"},
		{Unit{}, "()"},
		{FromSlice([]Value{int64(1), int64(2)}), "[1,2]"},
		{(*List)(nil), "[]"},
		{Tuple{int64(1), "a"}, `(1,"a")`},
		{rec("b", int64(2), "a", int64(1)), "{ a = 1, b = 2 }"},
		{rec(), "{}"},
		{Just(int64(3)), "Just 3"},
		{Just(Just(int64(3))), "Just (Just 3)"},
		{Nothing, "Nothing"},
		{Ok(FromSlice([]Value{Nothing})), "Ok [Nothing]"},
		{d, `Dict.fromList [("a",1),("b",2)]`},
		{Just(d), `Just (Dict.fromList [("a",1),("b",2)])`},
		{Ctor{Name: SetCtorName, Args: []Value{d}}, `Set.fromList ["a","b"]`},
		{Just(Ctor{Name: SetCtorName, Args: []Value{d}}), `Just (Set.fromList ["a","b"])`},
		{NewFunc("f", 1, nil), "<function>"},
		{Opaque{Kind: "Db"}, "<Db>"},
	}
	for _, c := range cases {
		if got := Show(c.v); got != c.want {
			t.Errorf("Show(%#v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestEqual(t *testing.T) {
	cases := []struct {
		a, b Value
		want bool
	}{
		{int64(1), int64(1), true},
		{int64(1), 1.0, true},
		{"a", "b", false},
		{FromSlice([]Value{int64(1)}), FromSlice([]Value{int64(1)}), true},
		{FromSlice([]Value{int64(1)}), FromSlice([]Value{int64(1), int64(2)}), false},
		{rec("a", int64(1)), rec("a", int64(1)), true},
		{rec("a", int64(1)), rec("a", int64(2)), false},
		{Just(int64(1)), Just(int64(1)), true},
		{Just(int64(1)), Nothing, false},
		{Tuple{int64(1), "x"}, Tuple{int64(1), "x"}, true},
		{Unit{}, Unit{}, true},
	}
	for _, c := range cases {
		got, err := Equal(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("Equal(%s, %s) = %v, %v; want %v", Show(c.a), Show(c.b), got, err, c.want)
		}
	}
	f := NewFunc("f", 1, nil)
	if _, err := Equal(Just(f), Just(f)); err == nil || !strings.Contains(err.Error(), "cannot compare functions") {
		t.Errorf("Equal of functions: err = %v, want `cannot compare functions`", err)
	}
	if _, err := Equal("a", int64(1)); err == nil || !strings.Contains(err.Error(), `"a" (String)`) {
		t.Errorf("Equal of String and Int: err = %v", err)
	}
}

func TestCompare(t *testing.T) {
	cases := []struct {
		a, b Value
		want int
	}{
		{int64(1), int64(2), -1},
		{2.5, int64(2), 1},
		{"b", "a", 1},
		{'a', 'a', 0},
		{FromSlice([]Value{int64(1)}), FromSlice([]Value{int64(1), int64(0)}), -1},
		{Tuple{int64(1), "b"}, Tuple{int64(1), "a"}, 1},
		{false, true, -1},
		{true, false, 1},
		{true, true, 0},
		{Tuple{false, "b"}, Tuple{true, "a"}, -1},
	}
	for _, c := range cases {
		got, err := Compare(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("Compare(%s, %s) = %d, %v; want %d", Show(c.a), Show(c.b), got, err, c.want)
		}
	}
	RegisterCtors([]string{"Red", "Green", "Blue"})
	rec := func(a, b Value) *Record { return &Record{Names: []string{"a", "b"}, Values: []Value{a, b}} }
	derived := []struct {
		a, b Value
		want int
	}{
		{Ctor{Name: "Red"}, Ctor{Name: "Green", Args: []Value{int64(1)}}, -1},
		{Ctor{Name: "Blue", Args: []Value{"a"}}, Ctor{Name: "Green", Args: []Value{int64(9)}}, 1},
		{Ctor{Name: "Green", Args: []Value{int64(1)}}, Ctor{Name: "Green", Args: []Value{int64(2)}}, -1},
		{rec(int64(1), "z"), rec(int64(1), "y"), 1},
		{rec(int64(2), int64(9)), rec(int64(3), int64(0)), -1},
		{math.NaN(), math.Inf(1), 1},
		{math.NaN(), math.NaN(), 0},
	}
	for _, c := range derived {
		got, err := Compare(c.a, c.b)
		if err != nil || got != c.want {
			t.Errorf("Compare(%s, %s) = %d, %v; want %d", Show(c.a), Show(c.b), got, err, c.want)
		}
	}
	_, err := Compare(Ctor{Name: "Red"}, Ctor{Name: "Nowhere"})
	if err == nil || !strings.Contains(err.Error(), "Nowhere") {
		t.Errorf("Compare of unrelated constructors: err = %v, want one naming `Nowhere`", err)
	}
}

func TestApplyCurrying(t *testing.T) {
	add3 := NewFunc("add3", 3, func(a []Value) (Value, error) {
		if len(a) != 3 {
			return nil, fmt.Errorf("got %d args", len(a))
		}
		return a[0].(int64)*100 + a[1].(int64)*10 + a[2].(int64), nil
	})
	p1, err := Apply(add3, int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if p1.(Func).Arity() != 2 {
		t.Fatalf("arity of partial = %d, want 2", p1.(Func).Arity())
	}
	p2, _ := Apply(p1, int64(2))
	got, err := Apply(p2, int64(3))
	if err != nil || got != int64(123) {
		t.Fatalf("curried add3 1 2 3 = %v, %v; want 123", got, err)
	}
	// A partial application can be reused: its arguments are not shared.
	got2, _ := Apply(p1, int64(5), int64(6))
	if got2 != int64(156) {
		t.Errorf("add3 1 5 6 = %v, want 156", got2)
	}
	// Over-application: the result of the first call is applied to the rest.
	mk := NewFunc("mk", 1, func(a []Value) (Value, error) {
		return NewFunc("inner", 1, func(b []Value) (Value, error) { return a[0].(int64) - b[0].(int64), nil }), nil
	})
	got3, err := Apply(mk, int64(10), int64(4))
	if err != nil || got3 != int64(6) {
		t.Errorf("mk 10 4 = %v, %v; want 6", got3, err)
	}
	if _, err := Apply(int64(3), int64(1)); err == nil || !strings.Contains(err.Error(), "cannot call 3") {
		t.Errorf("Apply of an Int: err = %v", err)
	}
}

func TestRecordWith(t *testing.T) {
	r := rec("a", int64(1), "c", int64(3))
	r2 := r.With("a", int64(9))
	if v, _ := r.Get("a"); v != int64(1) {
		t.Errorf("With mutated the original: a = %v", v)
	}
	if v, _ := r2.Get("a"); v != int64(9) {
		t.Errorf("With: a = %v, want 9", v)
	}
	r3 := r.With("b", int64(2))
	if diff := cmp.Diff([]string{"a", "b", "c"}, r3.Names); diff != "" {
		t.Errorf("With new field names (-want +got):\n%s", diff)
	}
}

func TestDict(t *testing.T) {
	var d *Dict
	for _, k := range []int64{5, 1, 3, 1} {
		var err error
		if d, err = d.Insert(k, k*10); err != nil {
			t.Fatal(err)
		}
	}
	if got := Show(d.Keys()); got != "[1,3,5]" {
		t.Errorf("keys = %s, want [1,3,5]", got)
	}
	d2, _ := d.Remove(int64(3))
	if d.Size() != 3 || d2.Size() != 2 {
		t.Errorf("sizes after remove = %d, %d; want 3, 2", d.Size(), d2.Size())
	}
	if v, ok, _ := d2.Get(int64(5)); !ok || v != int64(50) {
		t.Errorf("get 5 = %v, %v", v, ok)
	}
	if _, ok, _ := d2.Get(int64(3)); ok {
		t.Errorf("3 still present after remove")
	}
	dl, err := DictFromList(FromSlice([]Value{Tuple{int64(3), "a"}, Tuple{int64(1), "b"}, Tuple{int64(3), "c"}}))
	if err != nil || Show(dl) != `Dict.fromList [(1,"b"),(3,"c")]` {
		t.Errorf("DictFromList with a duplicate = %s, %v", Show(dl), err)
	}
	if _, err := DictFromList(FromSlice([]Value{Tuple{int64(1), "a"}, Tuple{"x", "b"}})); err == nil {
		t.Errorf("DictFromList with mixed key types: want an error")
	}
	if _, err := d.Insert("x", int64(1)); err == nil {
		t.Errorf("inserting a String key into an Int dict: want an error")
	}
}

func TestErrorRoundTrip(t *testing.T) {
	orig := task.New(task.NotFound, "no user 7").WithDetails(task.Details{Tag: task.HttpStatus, Status: 404})
	v := FromError(fmt.Errorf("wrapped: %w", orig))
	want := `Error NotFound { details = Just (HttpStatus 404), message = "no user 7" }`
	if got := Show(v); got != want {
		t.Errorf("FromError = %s, want %s", got, want)
	}
	back := ToError(v)
	var te *task.Error
	if !errors.As(back, &te) {
		t.Fatalf("ToError gave %T, want *task.Error", back)
	}
	if diff := cmp.Diff(orig, te); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// FfiPanic and TypeMismatch carry real Sky's records; the Go side keeps
	// them as lines of Text.
	for _, c := range []struct {
		d    task.Details
		want string
	}{
		{task.Details{Tag: task.FfiPanic, Text: "nil deref\nmain.go:1\nmain.go:2"}, `FfiPanic { message = "nil deref", stack = ["main.go:1","main.go:2"] }`},
		{task.Details{Tag: task.FfiPanic, Text: "bare"}, `FfiPanic { message = "bare", stack = [] }`},
		{task.Details{Tag: task.TypeMismatch, Text: "Int\nString"}, `TypeMismatch { actual = "String", expected = "Int" }`},
	} {
		e := task.New(task.Ffi, "x").WithDetails(c.d)
		v := FromError(e)
		if got := Show(v); !strings.Contains(got, c.want) {
			t.Errorf("FromError(%q) = %s, want it to hold %s", c.d.Text, got, c.want)
		}
		var back *task.Error
		if !errors.As(ToError(v), &back) || back.Details == nil || *back.Details != c.d {
			t.Errorf("round trip of %q gave %+v", c.d.Text, back)
		}
	}
	if got := Show(FromError(errors.New("disk on fire"))); got != `Error Unexpected { details = Nothing, message = "disk on fire" }` {
		t.Errorf("plain Go error = %s", got)
	}
	// A failure of another Sky type survives unchanged.
	f := ToError("boom")
	if got := FromError(f); got != "boom" {
		t.Errorf("Failure round trip = %v, want boom", got)
	}
	if f.Error() != `task failed with "boom"` {
		t.Errorf("Failure message = %q", f.Error())
	}
}
