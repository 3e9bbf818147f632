package eval

import (
	"fmt"
	"sort"

	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

func constant(v value.Value) code { return func(*frame) (value.Value, error) { return v, nil } }

// expr compiles an expression; tail says it is in tail position of the
// function being compiled (where a self call may loop instead of recursing).
func (c *compiler) expr(e syntax.Expr, sc *scope, tail bool) code {
	switch e := e.(type) {
	case *syntax.IntLit:
		return constant(e.Value)
	case *syntax.FloatLit:
		return constant(e.Value)
	case *syntax.CharLit:
		return constant(e.Value)
	case *syntax.StringLit:
		return constant(e.Value)
	case *syntax.Unit:
		return constant(value.Unit{})
	case *syntax.Interp:
		return c.expr(e.Desugar(), sc, tail)
	case *syntax.Var:
		return c.variable(e, sc)
	case *syntax.Ctor:
		info, msg := c.ns.lookupCtor(e.Module, e.Name)
		if info == nil {
			c.errorf(e.Start, "%s", msg)
			return nil
		}
		return constant(info.v)
	case *syntax.App:
		return c.app(e, e.Fn, e.Args, sc, tail)
	case *syntax.BinOp:
		return c.binop(e, sc, tail)
	case *syntax.OpFunc:
		return c.opFunc(e)
	case *syntax.Neg:
		return c.neg(e, sc)
	case *syntax.Lambda:
		lam := c.lambda("", e.Params, e.Body, &fnScope{}, sc)
		return func(fr *frame) (value.Value, error) { return &closure{lam: lam, env: fr}, nil }
	case *syntax.Let:
		return c.let(e, sc, tail)
	case *syntax.Case:
		return c.caseExpr(e, sc, tail)
	case *syntax.If:
		return c.ifExpr(e, sc, tail)
	case *syntax.Tuple:
		elems := c.exprs(e.Elems, sc)
		return func(fr *frame) (value.Value, error) {
			t := make(value.Tuple, len(elems))
			for i, el := range elems {
				v, err := el(fr)
				if err != nil {
					return nil, err
				}
				t[i] = v
			}
			return t, nil
		}
	case *syntax.List:
		elems := c.exprs(e.Elems, sc)
		return func(fr *frame) (value.Value, error) {
			var l *value.List
			for i := len(elems) - 1; i >= 0; i-- {
				v, err := elems[i](fr)
				if err != nil {
					return nil, err
				}
				l = &value.List{Head: v, Tail: l}
			}
			return l, nil
		}
	case *syntax.Record:
		return c.record(e, sc)
	case *syntax.RecordUpdate:
		return c.recordUpdate(e, sc)
	case *syntax.Access:
		rec := c.expr(e.Record, sc, false)
		field, pos, src := e.Field.Name, e.Field.Start, c.src
		return func(fr *frame) (value.Value, error) {
			r, err := rec(fr)
			if err != nil {
				return nil, err
			}
			return src.access(pos, r, field)
		}
	case *syntax.Accessor:
		return constant(&accessorFunc{field: e.Field, src: c.src, pos: e.Start})
	}
	c.errorf(e.Range().Start, "this kind of expression (%T) is not supported yet", e)
	return nil
}

func (c *compiler) exprs(es []syntax.Expr, sc *scope) []code {
	out := make([]code, len(es))
	for i, e := range es {
		out[i] = c.expr(e, sc, false)
	}
	return out
}

// access reads field of a record value at pos.
func (s *source) access(pos syntax.Pos, r value.Value, field string) (value.Value, error) {
	rec, ok := r.(*value.Record)
	if !ok {
		return nil, s.errorAt(pos, fmt.Sprintf("cannot read field `.%s` of %s: it is %s, not a record", field, value.Show(r), value.AKind(r)))
	}
	if v, ok := rec.Get(field); ok {
		return v, nil
	}
	return nil, s.errorAt(pos, fmt.Sprintf("this record has no field `%s`: %s", field, value.Show(r)))
}

func (c *compiler) variable(e *syntax.Var, sc *scope) code {
	if e.Module == "" {
		if depth, b, ok := sc.resolve(e.Name); ok {
			return local(depth, b.slot)
		}
		if g := c.ns.lookupValue(e.Name); g != nil {
			return globalRef(g)
		}
		c.errorf(e.Start, "I cannot find a `%s` variable; hint: check the spelling, define it, or import the module that exposes it", e.Name)
		return nil
	}
	if e.Module == "Ffi" {
		c.errorf(e.Start, "`Ffi.%s` can only be the whole body of a top-level declaration: `name = Ffi.kernel \"Name\"`", e.Name)
		return nil
	}
	g, msg := c.ns.lookupQualified(e.Module, e.Name)
	if g == nil {
		c.errorf(e.Start, "%s", msg)
		return nil
	}
	return globalRef(g)
}

func local(depth, slot int) code {
	switch depth {
	case 0:
		return func(fr *frame) (value.Value, error) { return fr.slots[slot], nil }
	case 1:
		return func(fr *frame) (value.Value, error) { return fr.parent.slots[slot], nil }
	case 2:
		return func(fr *frame) (value.Value, error) { return fr.parent.parent.slots[slot], nil }
	}
	return func(fr *frame) (value.Value, error) {
		for i := 0; i < depth; i++ {
			fr = fr.parent
		}
		return fr.slots[slot], nil
	}
}

func globalRef(g *global) code {
	return func(*frame) (value.Value, error) {
		if g.state == stateReady {
			return g.v, nil
		}
		return g.get()
	}
}

func (c *compiler) ifExpr(e *syntax.If, sc *scope, tail bool) code {
	cond := c.expr(e.Cond, sc, false)
	then, els := c.expr(e.Then, sc, tail), c.expr(e.Else, sc, tail)
	pos, src := e.Cond.Range().Start, c.src
	return func(fr *frame) (value.Value, error) {
		v, err := cond(fr)
		if err != nil {
			return nil, err
		}
		b, ok := v.(bool)
		if !ok {
			return nil, src.errorAt(pos, "this `if` condition must be a Bool, but it is "+value.Show(v))
		}
		if b {
			return then(fr)
		}
		return els(fr)
	}
}

func (c *compiler) neg(e *syntax.Neg, sc *scope) code {
	x := c.expr(e.X, sc, false)
	pos, src := e.Start, c.src
	return func(fr *frame) (value.Value, error) {
		v, err := x(fr)
		if err != nil {
			return nil, err
		}
		switch n := v.(type) {
		case int64:
			return -n, nil
		case float64:
			return -n, nil
		}
		return nil, src.errorAt(pos, "this negation needs a number, but the value is "+value.Show(v))
	}
}

func (c *compiler) record(e *syntax.Record, sc *scope) code {
	names := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		names[i] = f.Name.Name
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			c.errorf(e.Start, "this record has the field `%s` twice", sorted[i])
		}
	}
	vals := make([]code, len(e.Fields))
	for _, f := range e.Fields {
		vals[sort.SearchStrings(sorted, f.Name.Name)] = c.expr(f.Value, sc, false)
	}
	return func(fr *frame) (value.Value, error) {
		out := make([]value.Value, len(vals))
		for i, v := range vals {
			x, err := v(fr)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return &value.Record{Names: sorted, Values: out, Declared: names}, nil
	}
}

func (c *compiler) recordUpdate(e *syntax.RecordUpdate, sc *scope) code {
	rec := c.variable(e.Record, sc)
	names := make([]string, len(e.Fields))
	vals := make([]code, len(e.Fields))
	for i, f := range e.Fields {
		names[i], vals[i] = f.Name.Name, c.expr(f.Value, sc, false)
	}
	pos, src := e.Start, c.src
	return func(fr *frame) (value.Value, error) {
		rv, err := rec(fr)
		if err != nil {
			return nil, err
		}
		r, ok := rv.(*value.Record)
		if !ok {
			return nil, src.errorAt(pos, fmt.Sprintf("cannot update %s: it is %s, not a record", value.Show(rv), value.AKind(rv)))
		}
		out := make([]value.Value, len(r.Values))
		copy(out, r.Values)
		for i, n := range names {
			idx := r.Index(n)
			if idx < 0 {
				return nil, src.errorAt(pos, fmt.Sprintf("this record has no field `%s` to update: %s", n, value.Show(rv)))
			}
			v, err := vals[i](fr)
			if err != nil {
				return nil, err
			}
			out[idx] = v
		}
		return &value.Record{Names: r.Names, Values: out, Declared: r.Declared}, nil
	}
}
