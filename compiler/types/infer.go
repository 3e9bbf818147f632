package types

import (
	"skydurable/compiler/syntax"
)

// infer returns the type of expression x in environment e and records it.
func (c *checker) infer(x syntax.Expr, e *env) Type {
	t := c.inferExpr(x, e)
	c.info.Types[x] = t
	return t
}

func (c *checker) inferExpr(x syntax.Expr, e *env) Type {
	switch x := x.(type) {
	case *syntax.Var:
		return c.inferVar(x, e)
	case *syntax.Ctor:
		return c.inferCtor(x)
	case *syntax.IntLit:
		return c.u.freshKind(Number)
	case *syntax.FloatLit:
		return tFloat
	case *syntax.CharLit:
		return tChar
	case *syntax.StringLit:
		return tString
	case *syntax.Unit:
		return tUnit
	case *syntax.Interp:
		for _, p := range x.Parts {
			t := c.infer(p, e)
			if m := c.u.unify(tString, t); m != nil {
				c.mismatchError(p, m, tString, t, ctxText{
					msg:      "This interpolated value in a multi-line string is not a String:",
					found:    "It is:",
					expected: "But `{{ }}` interpolation needs:",
					hint:     "Convert it first, e.g. with `String.fromInt`.",
				})
			}
		}
		return tString
	case *syntax.App:
		return c.inferApp(x, e)
	case *syntax.BinOp:
		return c.inferBinOp(x, e)
	case *syntax.OpFunc:
		if t := c.operatorType(x.Op); t != nil {
			return t
		}
		c.errorf(x, "UNKNOWN OPERATOR", "I do not recognize the operator ("+x.Op+"):", "", "")
		return c.u.fresh()
	case *syntax.Neg:
		t := c.infer(x.X, e)
		n := c.u.freshKind(Number)
		if m := c.u.unify(n, t); m != nil {
			c.mismatchError(x.X, m, n, t, ctxText{
				msg:      "I cannot negate this value:",
				found:    "It is:",
				expected: "But negation (-) needs:",
			})
		}
		return t
	case *syntax.Lambda:
		return c.inferLambda(x, nil, e)
	case *syntax.Let:
		return c.inferLet(x, e)
	case *syntax.Case:
		return c.inferCase(x, e)
	case *syntax.If:
		return c.inferIf(x, e)
	case *syntax.Tuple:
		el := make([]Type, len(x.Elems))
		for i, y := range x.Elems {
			el[i] = c.infer(y, e)
		}
		return &Tuple{Elems: el}
	case *syntax.List:
		elem := Type(c.u.fresh())
		for i, y := range x.Elems {
			t := c.infer(y, e)
			if i == 0 {
				elem = t
				continue
			}
			if m := c.u.unify(elem, t); m != nil {
				c.mismatchError(y, m, elem, t, ctxText{
					msg:      "The " + ordinal(i+1) + " element of this list does not match all the previous elements:",
					found:    "The " + ordinal(i+1) + " element is:",
					expected: "But all the previous elements in the list are:",
					hint:     "Every element in a list must have the same type.",
				})
			}
		}
		return listOf(elem)
	case *syntax.Record:
		r := &Record{Fields: map[string]Type{}}
		for _, f := range x.Fields {
			if _, dup := r.Fields[f.Name.Name]; dup {
				c.errorf(f.Name, "DUPLICATE FIELD", "This record defines the `"+f.Name.Name+"` field twice:", "",
					"Remove one of the definitions.")
			}
			r.Fields[f.Name.Name] = c.infer(f.Value, e)
		}
		return r
	case *syntax.RecordUpdate:
		return c.inferUpdate(x, e)
	case *syntax.Access:
		return c.inferAccess(x, e)
	case *syntax.Accessor:
		a := c.u.fresh()
		return &Fun{Arg: &Record{Fields: map[string]Type{x.Field: a}, Ext: c.u.fresh()}, Res: a}
	}
	return c.u.fresh()
}

// calleeName names the function of an application for messages.
func calleeName(f syntax.Expr) string {
	switch f := f.(type) {
	case *syntax.Var:
		if f.Module != "" {
			return "`" + f.Module + "." + f.Name + "`"
		}
		return "`" + f.Name + "`"
	case *syntax.Ctor:
		if f.Module != "" {
			return "`" + f.Module + "." + f.Name + "`"
		}
		return "`" + f.Name + "`"
	case *syntax.App:
		return calleeName(f.Fn)
	}
	return "this function"
}

func (c *checker) inferApp(x *syntax.App, e *env) Type {
	ft := c.infer(x.Fn, e)
	c.noteAutoWitness(x, e)
	name := calleeName(x.Fn)
	failed := false
	for i, a := range x.Args {
		var at Type
		if f, ok := unalias(ft).(*Fun); ok {
			at = c.inferArg(a, f.Arg, e)
		} else {
			at = c.infer(a, e)
		}
		switch f := unalias(ft).(type) {
		case *Fun:
			if failed {
				// One wrong argument already shaped the function's type;
				// checking the rest against it would report phantoms.
				ft = f.Res
				continue
			}
			if m := c.u.unify(f.Arg, at); m != nil {
				c.mismatchError(a, m, f.Arg, at, ctxText{
					msg:      "The " + ordinal(i+1) + " argument to " + name + " is not what I expect:",
					found:    "This argument is:",
					expected: "But " + name + " needs the " + ordinal(i+1) + " argument to be:",
				})
				failed = true
			}
			ft = f.Res
		case *Var:
			if !f.Rigid && f.Kind == NoConstraint {
				res := c.u.fresh()
				want := &Fun{Arg: at, Res: res}
				if m := c.u.unify(f, want); m != nil {
					c.mismatchError(a, m, want, f, ctxText{
						title:    "INFINITE TYPE",
						msg:      "I am inferring a weird self-referential type for " + name + ":",
						found:    "It would have to be both:",
						expected: "and a function taking itself:",
					})
					return c.u.fresh()
				}
				ft = res
				continue
			}
			c.tooManyArgs(x, name, i, ft)
			return c.u.fresh()
		default:
			c.tooManyArgs(x, name, i, ft)
			return c.u.fresh()
		}
	}
	if failed {
		// The result type was shaped by a wrong argument; a fresh type
		// keeps that one mistake from being reported again downstream.
		return c.u.fresh()
	}
	return ft
}

func (c *checker) tooManyArgs(x *syntax.App, name string, given int, rest Type) {
	fnType := c.info.Types[x.Fn]
	pr := c.printer()
	if given == 0 {
		c.errorf(x.Fn, "TOO MANY ARGS", "You are giving "+plural(len(x.Args), "argument", "arguments")+
			" to something that is not a function:", "It is a value of type:\n\n"+indent(pr.String(fnType)),
			"Maybe you forgot some parentheses or a comma?")
		return
	}
	c.errorf(x, "TOO MANY ARGS", "The "+name+" function expects "+plural(given, "argument", "arguments")+
		", but it got "+plural(len(x.Args), "argument", "arguments")+" instead:",
		"Its type is:\n\n"+indent(pr.String(fnType)),
		"Remove the extra arguments, or add parentheses if one of them was meant to be a function call.")
}

func (c *checker) printer() *Printer {
	return &Printer{Qualify: c.sc.qualify}
}

func (c *checker) inferIf(x *syntax.If, e *env) Type {
	ct := c.infer(x.Cond, e)
	if m := c.u.unify(tBool, ct); m != nil {
		c.mismatchError(x.Cond, m, tBool, ct, ctxText{
			msg:      "This `if` condition does not evaluate to a Bool value:",
			found:    "This condition is:",
			expected: "But I need this `if` condition to be a:",
			hint:     "Sky does not have \"truthiness\": compare explicitly, e.g. `n /= 0` or `not (List.isEmpty xs)`.",
		})
	}
	tt := c.infer(x.Then, e)
	et := c.infer(x.Else, e)
	if m := c.u.unify(tt, et); m != nil {
		c.mismatchError(x.Else, m, tt, et, ctxText{
			msg:      "The branches of this `if` produce different types of values:",
			found:    "The `else` branch is:",
			expected: "But the `then` branch is:",
			hint:     "All branches of an `if` must produce the same type of value, so whichever branch is taken the result has one type.",
		})
	}
	return tt
}

func (c *checker) inferCase(x *syntax.Case, e *env) Type {
	st := c.infer(x.Subject, e)
	errsBefore := len(c.errs)
	patternsOK := true
	var result Type
	for i, br := range x.Branches {
		names := map[string]Scheme{}
		pt := c.inferPattern(br.Pattern, names)
		if m := c.u.unify(st, pt); m != nil {
			c.mismatchError(br.Pattern, m, st, pt, ctxText{
				msg:      "The " + ordinal(i+1) + " pattern in this `case` does not match the value being examined:",
				found:    "The pattern matches things of type:",
				expected: "But the value in `case ... of` is:",
			})
		}
		if len(c.errs) > errsBefore {
			patternsOK = false
		}
		bt := c.infer(br.Body, e.child(names))
		errsBefore = len(c.errs)
		if result == nil {
			result = bt
			continue
		}
		if m := c.u.unify(result, bt); m != nil {
			c.mismatchError(br.Body, m, result, bt, ctxText{
				msg:      "The " + ordinal(i+1) + " branch of this `case` does not match all the previous branches:",
				found:    "The " + ordinal(i+1) + " branch is:",
				expected: "But all the previous branches result in:",
				hint:     "All branches of a `case` must produce the same type of value.",
			})
		}
	}
	if patternsOK {
		c.checkCase(x)
	}
	if result == nil {
		return c.u.fresh()
	}
	return result
}

func (c *checker) inferUpdate(x *syntax.RecordUpdate, e *env) Type {
	rt := c.infer(x.Record, e)
	want := &Record{Fields: map[string]Type{}, Ext: c.u.fresh()}
	for _, f := range x.Fields {
		want.Fields[f.Name.Name] = c.infer(f.Value, e)
	}
	if m := c.u.unify(want, rt); m != nil {
		if len(m.missing) > 0 && m.fieldsOf != nil {
			c.missingField(x.Record, x.Record.Name, m.missing[0], m.fieldsOf, "update")
			return rt
		}
		c.mismatchError(x, m, want, rt, ctxText{
			msg:      "This record update is not what I expect:",
			found:    "The record `" + x.Record.Name + "` is:",
			expected: "But the update needs a record with at least:",
			hint:     "A record update keeps each field's type; `{ r | x = v }` needs `v` to have the type `r.x` has.",
		})
	}
	return rt
}

func (c *checker) inferAccess(x *syntax.Access, e *env) Type {
	rt := c.infer(x.Record, e)
	a := c.u.fresh()
	want := &Record{Fields: map[string]Type{x.Field.Name: a}, Ext: c.u.fresh()}
	if m := c.u.unify(want, rt); m != nil {
		if r, ok := unalias(rt).(*Record); ok {
			fields, _ := flatten(r)
			c.missingField(x, describeExpr(x.Record), x.Field.Name, &Record{Fields: fields}, "access")
			return a
		}
		c.mismatchError(x.Record, m, want, rt, ctxText{
			msg:      "This is not a record, so it has no `" + x.Field.Name + "` field:",
			found:    "It is:",
			expected: "But I need a record with a `" + x.Field.Name + "` field:",
		})
	}
	return a
}

func describeExpr(x syntax.Expr) string {
	switch x := x.(type) {
	case *syntax.Var:
		return x.Name
	case *syntax.Access:
		return describeExpr(x.Record) + "." + x.Field.Name
	}
	return ""
}
