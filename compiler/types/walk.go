package types

import (
	"slices"

	"skydurable/compiler/syntax"
)

// freeVars calls f with every unqualified variable name used in d's body
// (an over-approximation: shadowing is ignored, which at worst groups
// definitions that need not be, losing no soundness).
func freeVars(d *syntax.ValueDecl, f func(string)) {
	walkExpr(d.Body, f)
}

// walkExpr calls f with every unqualified variable name used in e.
func walkExpr(e syntax.Expr, f func(string)) {
	walkExprs(e, func(x syntax.Expr) {
		if v, ok := x.(*syntax.Var); ok && v.Module == "" {
			f(v.Name)
		}
	})
}

// walkExprs calls visit on e and every expression inside it.
func walkExprs(e syntax.Expr, visit func(syntax.Expr)) {
	if e == nil {
		return
	}
	visit(e)
	for _, x := range subExprs(e) {
		walkExprs(x, visit)
	}
}

// subExprs is the expressions directly inside e, in source order.
func subExprs(e syntax.Expr) []syntax.Expr {
	switch e := e.(type) {
	case *syntax.App:
		return append([]syntax.Expr{e.Fn}, e.Args...)
	case *syntax.BinOp:
		return []syntax.Expr{e.L, e.R}
	case *syntax.Neg:
		return []syntax.Expr{e.X}
	case *syntax.Lambda:
		return []syntax.Expr{e.Body}
	case *syntax.Let:
		var out []syntax.Expr
		for _, b := range e.Bindings {
			switch b := b.(type) {
			case *syntax.ValueDecl:
				out = append(out, b.Body)
			case *syntax.Destructure:
				out = append(out, b.Body)
			}
		}
		return append(out, e.Body)
	case *syntax.Case:
		out := []syntax.Expr{e.Subject}
		for _, br := range e.Branches {
			out = append(out, br.Body)
		}
		return out
	case *syntax.If:
		return []syntax.Expr{e.Cond, e.Then, e.Else}
	case *syntax.Tuple:
		return e.Elems
	case *syntax.List:
		return e.Elems
	case *syntax.Record:
		out := make([]syntax.Expr, len(e.Fields))
		for i, fi := range e.Fields {
			out[i] = fi.Value
		}
		return out
	case *syntax.RecordUpdate:
		out := []syntax.Expr{e.Record}
		for _, fi := range e.Fields {
			out = append(out, fi.Value)
		}
		return out
	case *syntax.Access:
		return []syntax.Expr{e.Record}
	case *syntax.Interp:
		return e.Parts
	}
	return nil
}

// patternNames calls f with every name a pattern binds.
func patternNames(p syntax.Pattern, f func(string)) {
	switch p := p.(type) {
	case *syntax.VarPat:
		f(p.Name)
	case *syntax.AliasPat:
		patternNames(p.Pattern, f)
		f(p.Name.Name)
	case *syntax.TuplePat:
		for _, x := range p.Elems {
			patternNames(x, f)
		}
	case *syntax.ListPat:
		for _, x := range p.Elems {
			patternNames(x, f)
		}
	case *syntax.ConsPat:
		patternNames(p.Head, f)
		patternNames(p.Tail, f)
	case *syntax.CtorPat:
		for _, x := range p.Args {
			patternNames(x, f)
		}
	case *syntax.RecordPat:
		for _, x := range p.Fields {
			f(x.Name)
		}
	}
}

// someCtorPat reports whether f holds for a constructor pattern in p.
func someCtorPat(p syntax.Pattern, f func(*syntax.CtorPat) bool) bool {
	switch p := p.(type) {
	case *syntax.AliasPat:
		return someCtorPat(p.Pattern, f)
	case *syntax.TuplePat:
		return slices.ContainsFunc(p.Elems, func(x syntax.Pattern) bool { return someCtorPat(x, f) })
	case *syntax.ListPat:
		return slices.ContainsFunc(p.Elems, func(x syntax.Pattern) bool { return someCtorPat(x, f) })
	case *syntax.ConsPat:
		return someCtorPat(p.Head, f) || someCtorPat(p.Tail, f)
	case *syntax.CtorPat:
		return f(p) || slices.ContainsFunc(p.Args, func(x syntax.Pattern) bool { return someCtorPat(x, f) })
	}
	return false
}
