package value

import (
	"fmt"
	"strings"
)

// Func is a Sky function value. Call receives exactly Arity arguments; use
// Apply to call with any number (currying, partial and over-application).
type Func interface {
	Arity() int
	Call(args []Value) (Value, error)
}

// goFunc is a Go function exposed as a Sky function.
type goFunc struct {
	name  string
	arity int
	fn    func(args []Value) (Value, error)
}

func (f *goFunc) Arity() int                       { return f.arity }
func (f *goFunc) Call(args []Value) (Value, error) { return f.fn(args) }

// Name is the function's name, used in messages.
func (f *goFunc) Name() string { return f.name }

// NewFunc wraps fn as a Sky function of the given arity; fn always receives
// exactly arity arguments. name appears in error messages.
func NewFunc(name string, arity int, fn func(args []Value) (Value, error)) Func {
	return &goFunc{name: name, arity: arity, fn: fn}
}

// partial is a function applied to fewer arguments than its arity.
type partial struct {
	f    Func
	args []Value
}

func (p *partial) Arity() int { return p.f.Arity() - len(p.args) }

func (p *partial) Call(args []Value) (Value, error) {
	all := make([]Value, 0, len(p.args)+len(args))
	all = append(append(all, p.args...), args...)
	return p.f.Call(all)
}

// Apply calls f with args: exactly its arity calls it; fewer returns a
// function waiting for the rest; more calls it with the first ones and
// applies the result to the remaining ones. A function of arity 0 or less is
// called with no arguments first. Apply with no args returns f unchanged.
func Apply(f Value, args ...Value) (Value, error) {
	for len(args) > 0 {
		fn, ok := f.(Func)
		if !ok {
			return nil, fmt.Errorf("cannot call %s: it is %s, not a function (too many arguments?)", Show(f), AKind(f))
		}
		n := fn.Arity()
		switch {
		case n <= 0:
			r, err := fn.Call(nil)
			if err != nil {
				return nil, err
			}
			f = r
		case len(args) < n:
			if p, ok := fn.(*partial); ok {
				all := make([]Value, 0, len(p.args)+len(args))
				return &partial{f: p.f, args: append(append(all, p.args...), args...)}, nil
			}
			return &partial{f: fn, args: append([]Value(nil), args...)}, nil
		case len(args) == n:
			return fn.Call(args)
		default:
			r, err := fn.Call(args[:n:n])
			if err != nil {
				return nil, err
			}
			f, args = r, args[n:]
		}
	}
	return f, nil
}

// KindName names the Sky kind of v for messages: "Int", "String", "List",
// "record", "function", the constructor name of a custom-type value, ...
func KindName(v Value) string {
	switch x := v.(type) {
	case int64:
		return "Int"
	case float64:
		return "Float"
	case string:
		return "String"
	case rune:
		return "Char"
	case bool:
		return "Bool"
	case Unit:
		return "Unit"
	case *List:
		return "List"
	case Tuple:
		return fmt.Sprintf("%d-tuple", len(x))
	case *Record:
		return "record"
	case Ctor:
		return "`" + x.Name + "` value"
	case Func:
		return "function"
	case *Dict:
		return "Dict"
	case Task:
		return "Task"
	case Opaque:
		return x.Kind
	case nil:
		return "nil (a runtime bug)"
	default:
		return fmt.Sprintf("Go %T (not a Sky value)", v)
	}
}

// AKind is KindName with its indefinite article: "an Int", "a String".
func AKind(v Value) string {
	k := KindName(v)
	first := strings.TrimLeft(k, "`")
	if first != "" && strings.ContainsRune("AEIOU", rune(first[0])) {
		return "an " + k
	}
	return "a " + k
}

// BadArg is the runtime error a kernel returns for an argument of the wrong
// kind: `String.length expects a String, but got 3 (Int)`.
func BadArg(kernel, want string, got Value) error {
	return fmt.Errorf("%s expects %s, but got %s (%s)", kernel, want, Show(got), KindName(got))
}
