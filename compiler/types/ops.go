package types

import (
	"skydurable/compiler/syntax"
)

// operatorType returns a fresh instance of a binary operator's type, as
// Elm types them; nil for an unknown operator.
func (c *checker) operatorType(op string) Type {
	u := &c.u
	switch op {
	case "+", "-", "*", "^":
		n := u.freshKind(Number)
		return fn(n, n, n)
	case "/":
		return fn(tFloat, tFloat, tFloat)
	case "//", "%":
		return fn(tInt, tInt, tInt)
	case "++":
		a := u.freshKind(Appendable)
		return fn(a, a, a)
	case "::":
		a := u.fresh()
		return fn(a, listOf(a), listOf(a))
	case "==", "/=":
		a := u.fresh()
		return fn(a, a, tBool)
	case "<", ">", "<=", ">=":
		a := u.freshKind(Comparable)
		return fn(a, a, tBool)
	case "&&", "||":
		return fn(tBool, tBool, tBool)
	case "|>":
		a, b := u.fresh(), u.fresh()
		return fn(a, fn(a, b), b)
	case "<|":
		a, b := u.fresh(), u.fresh()
		return fn(fn(a, b), a, b)
	case ">>":
		a, b, d := u.fresh(), u.fresh(), u.fresh()
		return fn(fn(a, b), fn(b, d), fn(a, d))
	case "<<":
		a, b, d := u.fresh(), u.fresh(), u.fresh()
		return fn(fn(b, d), fn(a, b), fn(a, d))
	}
	return nil
}

func (c *checker) inferBinOp(x *syntax.BinOp, e *env) Type {
	switch x.Op {
	case "|>":
		lt := c.infer(x.L, e)
		if app, ok := x.R.(*syntax.App); ok {
			if t, ok := c.inferPipedApp(x, app, lt, e); ok {
				return t
			}
		}
		rt := c.infer(x.R, e)
		return c.pipe(x, x.R, rt, x.L, lt)
	case "<|":
		lt := c.infer(x.L, e)
		rt := c.infer(x.R, e)
		return c.pipe(x, x.L, lt, x.R, rt)
	}
	ot := c.operatorType(x.Op)
	lt := c.infer(x.L, e)
	rt := c.infer(x.R, e)
	if ot == nil {
		c.errorAt(c.mod, x.OpSpan, "UNKNOWN OPERATOR", "I do not recognize the operator ("+x.Op+"):", "", "")
		return c.u.fresh()
	}
	f1 := ot.(*Fun)
	f2 := f1.Res.(*Fun)
	op := "(" + x.Op + ")"
	hint := ""
	if x.Op == "+" && (isCon(lt, "String") || isCon(rt, "String")) {
		hint = "To append strings in Sky, use (++), as in `\"Hello, \" ++ name`."
	}
	switch x.Op {
	case "==", "/=":
		if m := c.u.unify(lt, rt); m != nil {
			c.mismatchError(x.R, m, lt, rt, ctxText{
				msg:      "I need both sides of " + op + " to be the same type:",
				found:    "The right side of " + op + " is:",
				expected: "But the left side is:",
				hint:     "Values of different types can never be equal; convert one side first.",
			})
		}
		return tBool
	case "<", ">", "<=", ">=":
		if m := c.u.unify(lt, rt); m != nil {
			c.mismatchError(x.R, m, lt, rt, ctxText{
				msg:      "I need both sides of " + op + " to be the same type:",
				found:    "The right side of " + op + " is:",
				expected: "But the left side is:",
			})
			return tBool
		}
		if m := c.u.unify(f1.Arg, lt); m != nil {
			c.mismatchError(x.L, m, f1.Arg, lt, ctxText{
				msg:      op + " only works on comparable values, and this is not one:",
				found:    "It is:",
				expected: "But " + op + " needs a:",
				hint:     "Comparable types are Int, Float, Char, String, Bool, custom types and records of comparables, and lists and tuples of those.",
			})
		}
		return tBool
	}
	if m := c.u.unify(f1.Arg, lt); m != nil {
		c.mismatchError(x.L, m, f1.Arg, lt, ctxText{
			msg:      "The left argument of " + op + " is not what I expect:",
			found:    "The left argument is:",
			expected: "But " + op + " needs its left argument to be:",
			hint:     hint,
			strong:   hint != "",
		})
		return c.u.fresh()
	}
	if m := c.u.unify(f2.Arg, rt); m != nil {
		expected := "But " + op + " needs its right argument to be:"
		if x.Op == "::" {
			expected = "But (::) needs its right argument to be a list of the left argument's type:"
		} else if f1.Arg == f2.Arg {
			expected = "But the left argument of " + op + " is:"
		}
		c.mismatchError(x.R, m, f2.Arg, rt, ctxText{
			msg:      "The right argument of " + op + " is not what I expect:",
			found:    "The right argument is:",
			expected: expected,
			hint:     hint,
			strong:   hint != "",
		})
		return c.u.fresh()
	}
	return f2.Res
}

// pipe checks `arg |> f` and `f <| arg`: f must be a function accepting arg.
func (c *checker) pipe(x *syntax.BinOp, fnNode syntax.Expr, ft Type, argNode syntax.Expr, at Type) Type {
	op := "(" + x.Op + ")"
	switch f := unalias(ft).(type) {
	case *Fun:
		if m := c.u.unify(f.Arg, at); m != nil {
			c.mismatchError(argNode, m, f.Arg, at, ctxText{
				msg:      "This function cannot handle the argument sent through the " + op + " pipe:",
				found:    "The argument is:",
				expected: "But " + calleeName(fnNode) + " needs the argument to be:",
				snippet:  fnNode,
			})
			return c.u.fresh()
		}
		return f.Res
	case *Var:
		if !f.Rigid && f.Kind == NoConstraint {
			res := c.u.fresh()
			want := &Fun{Arg: at, Res: res}
			if m := c.u.unify(f, want); m != nil {
				c.mismatchError(argNode, m, want, f, ctxText{
					title:    "INFINITE TYPE",
					msg:      "I am inferring a weird self-referential type for this pipe:",
					found:    "The function would have to be both:",
					expected: "and a function taking its own argument:",
				})
				return c.u.fresh()
			}
			return res
		}
	}
	pr := c.printer()
	c.errorf(fnNode, "TOO MANY ARGS", "The right side of "+op+" is not a function, so nothing can be piped into it:",
		"It is a value of type:\n\n"+indent(pr.String(ft)), "Did you give it one argument too many?")
	return c.u.fresh()
}

// inferPipedApp checks `arg |> f a1 … an` when f's type is a known function
// of more than n arguments: the piped argument is unified with f's last
// parameter first, so the types it brings (a record's fields, a Task's
// result) are known while the explicit arguments — often a lambda — are
// checked, and a mistake is reported where it is rather than at the pipe.
// It reports false, having inferred nothing, when f's type is not known.
func (c *checker) inferPipedApp(x *syntax.BinOp, app *syntax.App, at Type, e *env) (Type, bool) {
	fnType, known := c.peekType(app.Fn, e)
	if !known {
		return nil, false
	}
	params := make([]Type, 0, len(app.Args)+1)
	cur := fnType
	for i := 0; i <= len(app.Args); i++ {
		f, ok := unalias(cur).(*Fun)
		if !ok {
			return nil, false
		}
		params = append(params, f.Arg)
		cur = f.Res
	}
	ft := c.infer(app.Fn, e)
	// Re-peel the recorded instance (peekType used a throwaway one).
	params = params[:0]
	cur = ft
	for i := 0; i <= len(app.Args); i++ {
		f, ok := unalias(cur).(*Fun)
		if !ok {
			// Cannot happen (same scheme as peeked); stay safe regardless.
			return c.pipe(x, app, c.infer(app, e), x.L, at), true
		}
		params = append(params, f.Arg)
		cur = f.Res
	}
	name := calleeName(app.Fn)
	piped := params[len(app.Args)]
	failed := false
	if m := c.u.unify(piped, at); m != nil {
		c.mismatchError(x.L, m, piped, at, ctxText{
			msg:      "This function cannot handle the argument sent through the (|>) pipe:",
			found:    "The argument is:",
			expected: "But " + name + " needs the argument to be:",
			snippet:  app,
		})
		failed = true
	}
	for i, a := range app.Args {
		t := c.inferArg(a, params[i], e)
		if failed {
			continue
		}
		if m := c.u.unify(params[i], t); m != nil {
			c.mismatchError(a, m, params[i], t, ctxText{
				msg:      "The " + ordinal(i+1) + " argument to " + name + " is not what I expect:",
				found:    "This argument is:",
				expected: "But " + name + " needs the " + ordinal(i+1) + " argument to be:",
			})
			failed = true
		}
	}
	c.info.Types[app] = &Fun{Arg: piped, Res: cur}
	if failed {
		return c.u.fresh(), true
	}
	return cur, true
}

// peekType returns the type a function expression would have, without
// recording anything or reporting errors, when it is a name with a known
// type: a local, a top-level value or a constructor.
func (c *checker) peekType(f syntax.Expr, e *env) (Type, bool) {
	switch f := f.(type) {
	case *syntax.Var:
		if f.Module == "" {
			if s, ok := e.lookup(f.Name); ok {
				t := Prune(s.Type)
				if _, isFun := unalias(t).(*Fun); isFun {
					return t, true
				}
				return nil, false
			}
			if vi := c.mod.values[f.Name]; vi != nil {
				return schemeFun(vi)
			}
			if cands := c.sc.values[f.Name]; len(cands) == 1 {
				return schemeFun(cands[0])
			}
			if vi := c.sc.pvalues[f.Name]; vi != nil && len(c.sc.values[f.Name]) == 0 {
				return schemeFun(vi)
			}
			return nil, false
		}
		for _, dm := range c.sc.quals[f.Module] {
			if vi := dm.expValues[f.Name]; vi != nil {
				return schemeFun(vi)
			}
		}
	}
	return nil, false
}

func schemeFun(vi *ValueInfo) (Type, bool) {
	if !vi.known {
		return nil, false
	}
	_, ok := unalias(Prune(vi.Scheme.Type)).(*Fun)
	return vi.Scheme.Type, ok
}
