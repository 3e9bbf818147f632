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
	switch e := e.(type) {
	case *syntax.App:
		walkExprs(e.Fn, visit)
		for _, a := range e.Args {
			walkExprs(a, visit)
		}
	case *syntax.BinOp:
		walkExprs(e.L, visit)
		walkExprs(e.R, visit)
	case *syntax.Neg:
		walkExprs(e.X, visit)
	case *syntax.Lambda:
		walkExprs(e.Body, visit)
	case *syntax.Let:
		for _, b := range e.Bindings {
			switch b := b.(type) {
			case *syntax.ValueDecl:
				walkExprs(b.Body, visit)
			case *syntax.Destructure:
				walkExprs(b.Body, visit)
			}
		}
		walkExprs(e.Body, visit)
	case *syntax.Case:
		walkExprs(e.Subject, visit)
		for _, br := range e.Branches {
			walkExprs(br.Body, visit)
		}
	case *syntax.If:
		walkExprs(e.Cond, visit)
		walkExprs(e.Then, visit)
		walkExprs(e.Else, visit)
	case *syntax.Tuple:
		for _, x := range e.Elems {
			walkExprs(x, visit)
		}
	case *syntax.List:
		for _, x := range e.Elems {
			walkExprs(x, visit)
		}
	case *syntax.Record:
		for _, fi := range e.Fields {
			walkExprs(fi.Value, visit)
		}
	case *syntax.RecordUpdate:
		walkExprs(e.Record, visit)
		for _, fi := range e.Fields {
			walkExprs(fi.Value, visit)
		}
	case *syntax.Access:
		walkExprs(e.Record, visit)
	case *syntax.Interp:
		for _, x := range e.Parts {
			walkExprs(x, visit)
		}
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
