// Package value is Sky's values in Go: the one representation every layer
// (evaluator, stdlib kernels, durable engine) passes around.
//
// A Value holds exactly one of these concrete Go types:
//
//	Int      int64
//	Float    float64
//	String   string
//	Char     rune (int32)
//	Bool     bool
//	Unit     Unit{}
//	List     *List      (nil is the empty list)
//	Tuple    Tuple      (2 or 3 elements)
//	Record   *Record
//	Custom   Ctor       (a value, not a pointer: `case value.Ctor:`)
//	Function Func
//	Dict     *Dict      (nil is the empty dict)
//	Task     Task
//	Opaque   Opaque     (a Go value carried through Sky untouched)
//
// Values are immutable: no function of this package, and no kernel, mutates a
// Value it was given.
//
// It may import runtime/task and the standard library; the durable engine
// never imports it.
package value

import (
	"sort"

	"skydurable/runtime/task"
)

// Value is a Sky value: one of the concrete kinds listed in the package doc.
type Value = any

// Unit is Sky's `()`.
type Unit struct{}

// List is an immutable cons list; (*List)(nil) is `[]`.
type List struct {
	Head Value
	Tail *List
}

// Cons is `head :: tail`.
func Cons(head Value, tail *List) *List { return &List{Head: head, Tail: tail} }

// FromSlice builds a list holding vs in order; an empty slice gives nil.
func FromSlice(vs []Value) *List {
	var l *List
	for i := len(vs) - 1; i >= 0; i-- {
		l = &List{Head: vs[i], Tail: l}
	}
	return l
}

// Slice returns the elements of l in order (a fresh slice).
func (l *List) Slice() []Value {
	out := make([]Value, 0, l.Len())
	for ; l != nil; l = l.Tail {
		out = append(out, l.Head)
	}
	return out
}

// Len is the number of elements of l (O(n)).
func (l *List) Len() int {
	n := 0
	for ; l != nil; l = l.Tail {
		n++
	}
	return n
}

// Tuple is a 2- or 3-tuple.
type Tuple []Value

// Record is a Sky record. Names are sorted and unique; Values[i] is the value
// of field Names[i]. Treat the slices as read-only.
type Record struct {
	Names  []string
	Values []Value
	// Declared is the order the fields were written in (the record literal
	// or the alias declaration that built it), for encoders that keep the
	// author's order (Codec.auto); nil means Names order. Equality and
	// Debug.toString ignore it.
	Declared []string
}

// FieldOrder is the order to write r's fields in: Declared when it names
// exactly r's fields, Names otherwise.
func (r *Record) FieldOrder() []string {
	if len(r.Declared) == len(r.Names) {
		return r.Declared
	}
	return r.Names
}

// NewRecord builds a record from its fields.
func NewRecord(fields map[string]Value) *Record {
	r := &Record{Names: make([]string, 0, len(fields)), Values: make([]Value, len(fields))}
	for n := range fields {
		r.Names = append(r.Names, n)
	}
	sort.Strings(r.Names)
	for i, n := range r.Names {
		r.Values[i] = fields[n]
	}
	return r
}

// Index returns the position of field name in r, or -1.
func (r *Record) Index(name string) int {
	if len(r.Names) <= 8 {
		for i, n := range r.Names {
			if n == name {
				return i
			}
		}
		return -1
	}
	i := sort.SearchStrings(r.Names, name)
	if i < len(r.Names) && r.Names[i] == name {
		return i
	}
	return -1
}

// Get returns the value of field name; ok is false when r has no such field.
func (r *Record) Get(name string) (Value, bool) {
	i := r.Index(name)
	if i < 0 {
		return nil, false
	}
	return r.Values[i], true
}

// With returns a copy of r whose field name is v. A name r lacks is added
// (keeping Names sorted), which record update never does after type checking.
func (r *Record) With(name string, v Value) *Record {
	i := r.Index(name)
	if i >= 0 {
		vals := make([]Value, len(r.Values))
		copy(vals, r.Values)
		vals[i] = v
		return &Record{Names: r.Names, Values: vals, Declared: r.Declared}
	}
	at := sort.SearchStrings(r.Names, name)
	names := make([]string, 0, len(r.Names)+1)
	names = append(append(append(names, r.Names[:at]...), name), r.Names[at:]...)
	vals := make([]Value, 0, len(r.Values)+1)
	vals = append(append(append(vals, r.Values[:at]...), v), r.Values[at:]...)
	return &Record{Names: names, Values: vals}
}

// Ctor is a value of a custom type: its constructor's unqualified name
// ("Just", "Err", "NotFound") and arguments. Bool is Go bool, not a Ctor.
type Ctor struct {
	Name string
	Args []Value
}

// Nothing is Maybe's `Nothing`.
var Nothing Value = Ctor{Name: "Nothing"}

// Just is Maybe's `Just v`.
func Just(v Value) Value { return Ctor{Name: "Just", Args: []Value{v}} }

// Ok is Result's `Ok v`.
func Ok(v Value) Value { return Ctor{Name: "Ok", Args: []Value{v}} }

// Err is Result's `Err v`.
func Err(v Value) Value { return Ctor{Name: "Err", Args: []Value{v}} }

// Task is a Sky `Task e a` value: lazy, it runs only when forced. Its error is
// a *task.Error for Sky's Error, or a *Failure for any other error type; use
// FromError to get the Sky error value back.
type Task struct{ T task.Task[Value] }

// Opaque carries a Go value through Sky untouched (a Db, a Codec, a durable
// Ctx, a workflow definition). Kind names it in messages and in Show.
type Opaque struct {
	Kind string
	V    any
}

// Kernel is a Go function bound to a Sky name by `Ffi.kernel "Name"`. Fn gets
// exactly Arity arguments; Arity 0 makes a constant, computed by Fn(nil). An
// error returned by Fn is a runtime error (a bug or a type error), not a Sky
// failure: Sky failures travel inside Task values.
type Kernel struct {
	Name  string
	Arity int
	Fn    func(args []Value) (Value, error)
}
