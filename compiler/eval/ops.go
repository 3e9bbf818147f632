package eval

import (
	"fmt"
	"math"

	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// binop compiles an operator application. `|>` and `<|` become plain
// application (so `x |> f a` is the saturated call `f a x`); `&&` and `||`
// short-circuit; the rest evaluate both sides and call operator.
func (c *compiler) binop(e *syntax.BinOp, sc *scope, tail bool) code {
	switch e.Op {
	case "|>":
		if app, ok := e.R.(*syntax.App); ok {
			return c.app(e, app.Fn, append(append([]syntax.Expr(nil), app.Args...), e.L), sc, tail)
		}
		return c.app(e, e.R, []syntax.Expr{e.L}, sc, tail)
	case "<|":
		if app, ok := e.L.(*syntax.App); ok {
			return c.app(e, app.Fn, append(append([]syntax.Expr(nil), app.Args...), e.R), sc, tail)
		}
		return c.app(e, e.L, []syntax.Expr{e.R}, sc, tail)
	case "&&", "||":
		return c.logic(e, sc)
	}
	op := operator(e.Op)
	if op == nil {
		c.errorf(e.OpSpan.Start, "unknown operator `%s`", e.Op)
		return nil
	}
	l, r := c.expr(e.L, sc, false), c.expr(e.R, sc, false)
	pos, src := e.OpSpan.Start, c.src
	return func(fr *frame) (value.Value, error) {
		a, err := l(fr)
		if err != nil {
			return nil, err
		}
		b, err := r(fr)
		if err != nil {
			return nil, err
		}
		v, msg := op(a, b)
		if msg != "" {
			return nil, src.errorAt(pos, msg)
		}
		return v, nil
	}
}

func (c *compiler) logic(e *syntax.BinOp, sc *scope) code {
	l, r := c.expr(e.L, sc, false), c.expr(e.R, sc, false)
	isAnd := e.Op == "&&"
	pos, src, op := e.OpSpan.Start, c.src, e.Op
	return func(fr *frame) (value.Value, error) {
		a, err := l(fr)
		if err != nil {
			return nil, err
		}
		ab, ok := a.(bool)
		if !ok {
			return nil, src.errorAt(pos, fmt.Sprintf("this `%s` needs Bools, but the left side is %s", op, value.Show(a)))
		}
		if ab != isAnd {
			return ab, nil
		}
		b, err := r(fr)
		if err != nil {
			return nil, err
		}
		if _, ok := b.(bool); !ok {
			return nil, src.errorAt(pos, fmt.Sprintf("this `%s` needs Bools, but the right side is %s", op, value.Show(b)))
		}
		return b, nil
	}
}

// opFunc compiles `(+)`, `(::)`, ... as a two-argument function.
func (c *compiler) opFunc(e *syntax.OpFunc) code {
	pos, src, name := e.Start, c.src, e.Op
	var fn func(a, b value.Value) (value.Value, string)
	switch e.Op {
	case "|>":
		fn = func(a, b value.Value) (value.Value, string) { return applyOp(b, a) }
	case "<|":
		fn = func(a, b value.Value) (value.Value, string) { return applyOp(a, b) }
	case "&&", "||":
		isAnd := e.Op == "&&"
		fn = func(a, b value.Value) (value.Value, string) {
			x, ok1 := a.(bool)
			y, ok2 := b.(bool)
			if !ok1 || !ok2 {
				return nil, fmt.Sprintf("`(%s)` needs Bools, but got %s and %s", name, value.Show(a), value.Show(b))
			}
			if isAnd {
				return x && y, ""
			}
			return x || y, ""
		}
	default:
		fn = operator(e.Op)
	}
	if fn == nil {
		c.errorf(pos, "unknown operator `(%s)`", e.Op)
		return nil
	}
	return constant(value.NewFunc("("+name+")", 2, func(args []value.Value) (value.Value, error) {
		v, msg := fn(args[0], args[1])
		if msg != "" {
			return nil, src.errorAt(pos, msg)
		}
		return v, nil
	}))
}

func applyOp(f, x value.Value) (value.Value, string) {
	v, err := value.Apply(f, x)
	if err != nil {
		return nil, err.Error()
	}
	return v, ""
}

// operator returns the implementation of a strict binary operator; the
// string result is the error message when the operands do not fit.
func operator(op string) func(a, b value.Value) (value.Value, string) {
	if f := intFastPath(op); f != nil {
		return f
	}
	return slowOperator(op)
}

// slowOperator is the general implementation of each strict operator.
func slowOperator(op string) func(a, b value.Value) (value.Value, string) {
	switch op {
	case "+", "-", "*", "/", "//", "^", "%":
		return func(a, b value.Value) (value.Value, string) { return arith(op, a, b) }
	case "==":
		return func(a, b value.Value) (value.Value, string) {
			eq, err := value.Equal(a, b)
			if err != nil {
				return nil, err.Error()
			}
			return eq, ""
		}
	case "/=":
		return func(a, b value.Value) (value.Value, string) {
			eq, err := value.Equal(a, b)
			if err != nil {
				return nil, err.Error()
			}
			return !eq, ""
		}
	case "<", ">", "<=", ">=":
		return func(a, b value.Value) (value.Value, string) {
			c, err := value.Compare(a, b)
			if err != nil {
				return nil, err.Error()
			}
			switch op {
			case "<":
				return c < 0, ""
			case ">":
				return c > 0, ""
			case "<=":
				return c <= 0, ""
			}
			return c >= 0, ""
		}
	case "++":
		return appendOp
	case "::":
		return func(a, b value.Value) (value.Value, string) {
			l, ok := b.(*value.List)
			if !ok {
				return nil, "this `::` needs a list on the right, but it is " + value.Show(b)
			}
			return &value.List{Head: a, Tail: l}, ""
		}
	case ">>", "<<":
		return func(a, b value.Value) (value.Value, string) {
			for _, f := range []value.Value{a, b} {
				if _, ok := f.(value.Func); !ok {
					return nil, fmt.Sprintf("this `%s` composes functions, but one side is %s", op, value.Show(f))
				}
			}
			if op == ">>" {
				return &composeFunc{first: a, then: b}, ""
			}
			return &composeFunc{first: b, then: a}, ""
		}
	}
	return nil
}

func appendOp(a, b value.Value) (value.Value, string) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x + y, ""
		}
	case *value.List:
		if y, ok := b.(*value.List); ok {
			if x == nil {
				return y, ""
			}
			if y == nil {
				return x, ""
			}
			vs := x.Slice()
			for i := len(vs) - 1; i >= 0; i-- {
				y = &value.List{Head: vs[i], Tail: y}
			}
			return y, ""
		}
	}
	side, bad := "left", a
	switch a.(type) {
	case string, *value.List:
		side, bad = "right", b
	}
	return nil, fmt.Sprintf("this `++` needs two Strings or two Lists, but the %s side is %s", side, value.Show(bad))
}

// arith is Int and Float arithmetic; an Int meeting a Float is widened, and
// `/` always divides as Floats, as Elm's number literals would type.
func arith(op string, a, b value.Value) (value.Value, string) {
	x, xInt := a.(int64)
	y, yInt := b.(int64)
	if xInt && yInt {
		switch op {
		case "+":
			return x + y, ""
		case "-":
			return x - y, ""
		case "*":
			return x * y, ""
		case "//":
			if y == 0 {
				return int64(0), "" // Elm: integer division by zero is 0
			}
			return x / y, ""
		case "%":
			if y == 0 {
				return int64(0), "" // total, as `//` and real Sky's `%`
			}
			m := x % y
			if m != 0 && (m < 0) != (y < 0) {
				m += y
			}
			return m, ""
		case "^":
			if y < 0 {
				return math.Pow(float64(x), float64(y)), ""
			}
			r := int64(1)
			for ; y > 0; y >>= 1 {
				if y&1 == 1 {
					r *= x
				}
				x *= x
			}
			return r, ""
		case "/":
			return float64(x) / float64(y), ""
		}
	}
	fx, okx := value.AsFloat(a)
	fy, oky := value.AsFloat(b)
	if !okx || !oky {
		side, bad := "left", a
		if okx {
			side, bad = "right", b
		}
		msg := fmt.Sprintf("this `%s` needs numbers, but the %s side is %s", op, side, value.Show(bad))
		if _, isStr := bad.(string); isStr && op == "+" {
			msg += "; hint: join Strings with `++`"
		}
		return nil, msg
	}
	switch op {
	case "+":
		return fx + fy, ""
	case "-":
		return fx - fy, ""
	case "*":
		return fx * fy, ""
	case "/":
		return fx / fy, ""
	case "^":
		return math.Pow(fx, fy), ""
	case "//":
		return nil, fmt.Sprintf("this `//` needs Ints, but got %s and %s; hint: use `/` for Floats", value.Show(a), value.Show(b))
	}
	return math.Mod(fx, fy), ""
}

// intFastPath handles the commonest operators on two Ints without the
// generic dispatch, falling back to it for any other operands.
func intFastPath(op string) func(a, b value.Value) (value.Value, string) {
	var f func(x, y int64) value.Value
	switch op {
	case "+":
		f = func(x, y int64) value.Value { return x + y }
	case "-":
		f = func(x, y int64) value.Value { return x - y }
	case "*":
		f = func(x, y int64) value.Value { return x * y }
	case "<":
		f = func(x, y int64) value.Value { return x < y }
	case ">":
		f = func(x, y int64) value.Value { return x > y }
	case "<=":
		f = func(x, y int64) value.Value { return x <= y }
	case ">=":
		f = func(x, y int64) value.Value { return x >= y }
	case "==":
		f = func(x, y int64) value.Value { return x == y }
	case "/=":
		f = func(x, y int64) value.Value { return x != y }
	default:
		return nil
	}
	slow := slowOperator(op)
	return func(a, b value.Value) (value.Value, string) {
		if x, ok := a.(int64); ok {
			if y, ok := b.(int64); ok {
				return f(x, y), ""
			}
		}
		return slow(a, b)
	}
}
