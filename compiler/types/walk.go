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

func walkExpr(e syntax.Expr, f func(string)) {
	switch e := e.(type) {
	case *syntax.Var:
		if e.Module == "" {
			f(e.Name)
		}
	case *syntax.Interp:
		for _, p := range e.Parts {
			walkExpr(p, f)
		}
	case *syntax.App:
		walkExpr(e.Fn, f)
		for _, a := range e.Args {
			walkExpr(a, f)
		}
	case *syntax.BinOp:
		walkExpr(e.L, f)
		walkExpr(e.R, f)
	case *syntax.Neg:
		walkExpr(e.X, f)
	case *syntax.Lambda:
		walkExpr(e.Body, f)
	case *syntax.Let:
		for _, b := range e.Bindings {
			switch b := b.(type) {
			case *syntax.ValueDecl:
				walkExpr(b.Body, f)
			case *syntax.Destructure:
				walkExpr(b.Body, f)
			}
		}
		walkExpr(e.Body, f)
	case *syntax.Case:
		walkExpr(e.Subject, f)
		for _, br := range e.Branches {
			walkExpr(br.Body, f)
		}
	case *syntax.If:
		walkExpr(e.Cond, f)
		walkExpr(e.Then, f)
		walkExpr(e.Else, f)
	case *syntax.Tuple:
		for _, x := range e.Elems {
			walkExpr(x, f)
		}
	case *syntax.List:
		for _, x := range e.Elems {
			walkExpr(x, f)
		}
	case *syntax.Record:
		for _, x := range e.Fields {
			walkExpr(x.Value, f)
		}
	case *syntax.RecordUpdate:
		walkExpr(e.Record, f)
		for _, x := range e.Fields {
			walkExpr(x.Value, f)
		}
	case *syntax.Access:
		walkExpr(e.Record, f)
	}
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
