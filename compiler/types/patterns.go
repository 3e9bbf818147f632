package types

import (
	"skydurable/compiler/syntax"
)

// inferPattern returns the type of values p matches, adds the names it
// binds to names (monomorphic) and records the type.
func (c *checker) inferPattern(p syntax.Pattern, names map[string]Scheme) Type {
	t := c.patternType(p, names)
	c.info.Patterns[p] = t
	return t
}

func (c *checker) patternType(p syntax.Pattern, names map[string]Scheme) Type {
	bind := func(n string, node syntax.Node, t Type) {
		if _, dup := names[n]; dup {
			c.errorf(node, "DUPLICATE NAME", "This pattern binds `"+n+"` more than once:", "",
				"Give each name in a pattern a different name.")
		}
		names[n] = Scheme{Type: t}
	}
	switch p := p.(type) {
	case *syntax.WildcardPat:
		return c.u.fresh()
	case *syntax.VarPat:
		t := c.u.fresh()
		bind(p.Name, p, t)
		return t
	case *syntax.AliasPat:
		t := c.inferPattern(p.Pattern, names)
		bind(p.Name.Name, p.Name, t)
		return t
	case *syntax.UnitPat:
		return tUnit
	case *syntax.IntPat:
		return tInt
	case *syntax.FloatPat:
		return tFloat
	case *syntax.StringPat:
		return tString
	case *syntax.CharPat:
		return tChar
	case *syntax.TuplePat:
		el := make([]Type, len(p.Elems))
		for i, x := range p.Elems {
			el[i] = c.inferPattern(x, names)
		}
		return &Tuple{Elems: el}
	case *syntax.ListPat:
		elem := Type(c.u.fresh())
		for i, x := range p.Elems {
			t := c.inferPattern(x, names)
			if m := c.u.unify(elem, t); m != nil {
				c.mismatchError(x, m, elem, t, ctxText{
					msg:      "The " + ordinal(i+1) + " pattern in this list does not match the previous ones:",
					found:    "It matches:",
					expected: "But the previous patterns match:",
				})
			}
		}
		return listOf(elem)
	case *syntax.ConsPat:
		ht := c.inferPattern(p.Head, names)
		tt := c.inferPattern(p.Tail, names)
		want := listOf(ht)
		if m := c.u.unify(want, tt); m != nil {
			c.mismatchError(p.Tail, m, want, tt, ctxText{
				msg:      "The tail of this (::) pattern does not match its head:",
				found:    "The tail matches:",
				expected: "But it should be a list of the head's type:",
			})
		}
		return want
	case *syntax.RecordPat:
		r := &Record{Fields: map[string]Type{}, Ext: c.u.fresh()}
		for _, f := range p.Fields {
			t := c.u.fresh()
			r.Fields[f.Name] = t
			bind(f.Name, f, t)
		}
		return r
	case *syntax.CtorPat:
		return c.inferCtorPat(p, names)
	}
	return c.u.fresh()
}

func (c *checker) inferCtorPat(p *syntax.CtorPat, names map[string]Scheme) Type {
	ct, ti, ok := c.lookupCtor(p, p.Module, p.Name)
	if !ok {
		for _, a := range p.Args {
			c.inferPattern(a, names)
		}
		return c.u.fresh()
	}
	var t Type
	arity := 0
	if ti != nil {
		c.info.Refs[p] = Ref{Kind: RefRecordCtor, Module: ti.Module, Name: ti.Name}
		t = c.u.instantiate(recordCtorScheme(ti))
		arity = len(ti.RecordCtor)
	} else {
		c.info.Refs[p] = Ref{Kind: RefCtor, Module: ct.Module, Name: ct.Name}
		c.patCtors[p] = ct
		t = c.u.instantiate(ct.Scheme)
		arity = ct.Arity
	}
	if len(p.Args) != arity {
		c.errorf(p, "BAD PATTERN", "The `"+p.Name+"` constructor needs "+plural(arity, "argument", "arguments")+
			", but I see "+plural(len(p.Args), "argument", "arguments")+" in this pattern:", "",
			"Add or remove patterns (use `_` for an argument you do not need).")
		for _, a := range p.Args {
			c.inferPattern(a, names)
		}
		for i := 0; i < arity; i++ {
			t = t.(*Fun).Res
		}
		return t
	}
	for i, a := range p.Args {
		f := t.(*Fun)
		at := c.inferPattern(a, names)
		if m := c.u.unify(f.Arg, at); m != nil {
			c.mismatchError(a, m, f.Arg, at, ctxText{
				msg:      "The " + ordinal(i+1) + " argument of the `" + p.Name + "` pattern is not what I expect:",
				found:    "This pattern matches:",
				expected: "But `" + p.Name + "` holds a:",
			})
		}
		t = f.Res
	}
	return t
}
