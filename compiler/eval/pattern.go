package eval

import (
	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// matcher tests a value against a compiled pattern and, on a match, stores
// the pattern's variables in their frame slots.
type matcher func(v value.Value, fr *frame) bool

func matchAny(value.Value, *frame) bool { return true }

// pattern compiles p, binding its variables in sc.
func (c *compiler) pattern(p syntax.Pattern, sc *scope) matcher {
	switch p := p.(type) {
	case *syntax.WildcardPat:
		return matchAny
	case *syntax.VarPat:
		slot := sc.bind(p.Name).slot
		return func(v value.Value, fr *frame) bool { fr.slots[slot] = v; return true }
	case *syntax.AliasPat:
		inner := c.pattern(p.Pattern, sc)
		slot := sc.bind(p.Name.Name).slot
		return func(v value.Value, fr *frame) bool {
			if !inner(v, fr) {
				return false
			}
			fr.slots[slot] = v
			return true
		}
	case *syntax.UnitPat:
		return func(v value.Value, _ *frame) bool { _, ok := v.(value.Unit); return ok }
	case *syntax.TuplePat:
		elems := c.patterns(p.Elems, sc)
		return func(v value.Value, fr *frame) bool {
			t, ok := v.(value.Tuple)
			if !ok || len(t) != len(elems) {
				return false
			}
			for i, m := range elems {
				if !m(t[i], fr) {
					return false
				}
			}
			return true
		}
	case *syntax.ListPat:
		elems := c.patterns(p.Elems, sc)
		return func(v value.Value, fr *frame) bool {
			l, ok := v.(*value.List)
			if !ok {
				return false
			}
			for _, m := range elems {
				if l == nil || !m(l.Head, fr) {
					return false
				}
				l = l.Tail
			}
			return l == nil
		}
	case *syntax.ConsPat:
		head, tail := c.pattern(p.Head, sc), c.pattern(p.Tail, sc)
		return func(v value.Value, fr *frame) bool {
			l, ok := v.(*value.List)
			return ok && l != nil && head(l.Head, fr) && tail(l.Tail, fr)
		}
	case *syntax.CtorPat:
		return c.ctorPattern(p, sc)
	case *syntax.RecordPat:
		names := make([]string, len(p.Fields))
		slots := make([]int, len(p.Fields))
		for i, f := range p.Fields {
			names[i], slots[i] = f.Name, sc.bind(f.Name).slot
		}
		return func(v value.Value, fr *frame) bool {
			r, ok := v.(*value.Record)
			if !ok {
				return false
			}
			for i, n := range names {
				x, ok := r.Get(n)
				if !ok {
					return false
				}
				fr.slots[slots[i]] = x
			}
			return true
		}
	case *syntax.IntPat:
		want := p.Value
		return func(v value.Value, _ *frame) bool { n, ok := v.(int64); return ok && n == want }
	case *syntax.FloatPat:
		want := p.Value
		return func(v value.Value, _ *frame) bool { f, ok := value.AsFloat(v); return ok && f == want }
	case *syntax.StringPat:
		want := p.Value
		return func(v value.Value, _ *frame) bool { s, ok := v.(string); return ok && s == want }
	case *syntax.CharPat:
		want := p.Value
		return func(v value.Value, _ *frame) bool { r, ok := v.(rune); return ok && r == want }
	}
	c.errorf(p.Range().Start, "this kind of pattern (%T) is not supported yet", p)
	return matchAny
}

func (c *compiler) patterns(ps []syntax.Pattern, sc *scope) []matcher {
	out := make([]matcher, len(ps))
	for i, p := range ps {
		out[i] = c.pattern(p, sc)
	}
	return out
}

func (c *compiler) ctorPattern(p *syntax.CtorPat, sc *scope) matcher {
	info, msg := c.ns.lookupCtor(p.Module, p.Name)
	if info == nil {
		c.errorf(p.Start, "%s", msg)
		return matchAny
	}
	if info.isRecord {
		c.errorf(p.Start, "`%s` is a record alias, not a constructor: match the record with `{ field1, field2 }` instead", p.Name)
		return matchAny
	}
	if len(p.Args) != info.arity {
		c.errorf(p.Start, "the constructor `%s` takes %d argument(s), but this pattern gives %d", p.Name, info.arity, len(p.Args))
		return matchAny
	}
	if info.isBool {
		want := info.boolV
		return func(v value.Value, _ *frame) bool { b, ok := v.(bool); return ok && b == want }
	}
	name := info.name
	args := c.patterns(p.Args, sc)
	return func(v value.Value, fr *frame) bool {
		ct, ok := v.(value.Ctor)
		if !ok || ct.Name != name || len(ct.Args) != len(args) {
			return false
		}
		for i, m := range args {
			if !m(ct.Args[i], fr) {
				return false
			}
		}
		return true
	}
}

// caseExpr compiles `case subject of` with its branches in order.
func (c *compiler) caseExpr(e *syntax.Case, sc *scope, tail bool) code {
	subject := c.expr(e.Subject, sc, false)
	type branch struct {
		match matcher
		body  code
	}
	branches := make([]branch, len(e.Branches))
	for i, b := range e.Branches {
		bs := sc.child()
		branches[i] = branch{match: c.pattern(b.Pattern, bs), body: c.expr(b.Body, bs, tail)}
	}
	pos, src := e.Start, c.src
	return func(fr *frame) (value.Value, error) {
		v, err := subject(fr)
		if err != nil {
			return nil, err
		}
		for _, b := range branches {
			if b.match(v, fr) {
				return b.body(fr)
			}
		}
		return nil, src.errorAt(pos, "this `case` has no branch for "+value.Show(v)+"; hint: add a branch for it, or a final `_ ->` branch")
	}
}
