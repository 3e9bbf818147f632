package core

import (
	"skydurable/runtime/value"
)

// The argument readers below turn a wrong argument kind into the runtime
// error value.BadArg describes, naming the Sky function (e.g. "List.map").

func intArg(fn string, v value.Value) (int64, error) {
	if i, ok := v.(int64); ok {
		return i, nil
	}
	return 0, value.BadArg(fn, "an Int", v)
}

// floatArg also accepts an Int: an integer literal where a Float is expected
// is the same number.
func floatArg(fn string, v value.Value) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	}
	return 0, value.BadArg(fn, "a Float", v)
}

func stringArg(fn string, v value.Value) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", value.BadArg(fn, "a String", v)
}

func charArg(fn string, v value.Value) (rune, error) {
	if c, ok := v.(rune); ok {
		return c, nil
	}
	return 0, value.BadArg(fn, "a Char", v)
}

func listArg(fn string, v value.Value) (*value.List, error) {
	if l, ok := v.(*value.List); ok {
		return l, nil
	}
	return nil, value.BadArg(fn, "a List", v)
}

func dictArg(fn string, v value.Value) (*value.Dict, error) {
	if d, ok := v.(*value.Dict); ok {
		return d, nil
	}
	return nil, value.BadArg(fn, "a Dict", v)
}

func taskArg(fn string, v value.Value) (value.Task, error) {
	if t, ok := v.(value.Task); ok {
		return t, nil
	}
	return value.Task{}, value.BadArg(fn, "a Task", v)
}

// callBool applies a Sky predicate and insists on a Bool result.
func callBool(fn string, f value.Value, args ...value.Value) (bool, error) {
	r, err := value.Apply(f, args...)
	if err != nil {
		return false, err
	}
	b, ok := r.(bool)
	if !ok {
		return false, value.BadArg(fn, "a function returning a Bool", r)
	}
	return b, nil
}

// listBuilder appends to a cons list in order without reversing.
type listBuilder struct {
	head, last *value.List
}

func (b *listBuilder) add(v value.Value) {
	cell := &value.List{Head: v}
	if b.last == nil {
		b.head = cell
	} else {
		b.last.Tail = cell
	}
	b.last = cell
}

// done returns the built list; appending after done would mutate it.
func (b *listBuilder) done() *value.List { return b.head }

func orderOf(c int) value.Value {
	switch {
	case c < 0:
		return value.Ctor{Name: "LT"}
	case c > 0:
		return value.Ctor{Name: "GT"}
	}
	return value.Ctor{Name: "EQ"}
}
