package eval

import (
	"fmt"

	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// app compiles `fn args...` (also the desugared `x |> f a` and `f a <| x`).
func (c *compiler) app(at syntax.Node, fnExpr syntax.Expr, argExprs []syntax.Expr, sc *scope, tail bool) code {
	args := c.exprs(argExprs, sc)
	pos, src := at.Range().Start, c.src
	if tail && c.isSelfCall(fnExpr, len(args), sc) {
		lam := sc.fn.lam
		return func(fr *frame) (value.Value, error) {
			if lam.reuseFrame && len(args) <= 8 {
				// Nothing captured this frame: compute the new arguments
				// aside, then overwrite the parameters in place.
				var buf [8]value.Value
				vals := buf[:len(args)]
				for i, a := range args {
					v, err := a(fr)
					if err != nil {
						return nil, err
					}
					vals[i] = v
				}
				copy(fr.slots, vals)
				fr.tail = fr
				return nil, errTailCall
			}
			// The callee is this very function, so its env is ours.
			next := newFrame(lam.nslots, fr.parent)
			next.depth = fr.depth
			for i, a := range args {
				v, err := a(fr)
				if err != nil {
					return nil, err
				}
				next.slots[i] = v
			}
			fr.tail = next
			return nil, errTailCall
		}
	}
	if ce, ok := fnExpr.(*syntax.Ctor); ok {
		if info, _ := c.ns.lookupCtor(ce.Module, ce.Name); info != nil && !info.isBool && info.arity == len(args) && !info.isRecord {
			name := info.name
			return func(fr *frame) (value.Value, error) {
				vals := make([]value.Value, len(args))
				for i, a := range args {
					v, err := a(fr)
					if err != nil {
						return nil, err
					}
					vals[i] = v
				}
				return value.Ctor{Name: name, Args: vals}, nil
			}
		}
	}
	fn := c.expr(fnExpr, sc, false)
	return func(fr *frame) (value.Value, error) {
		f, err := fn(fr)
		if err != nil {
			return nil, err
		}
		if cl, ok := f.(*closure); ok && cl.lam.arity == len(args) {
			// A saturated call: evaluate the arguments straight into the
			// callee's frame.
			next := newFrame(cl.lam.nslots, cl.env)
			if next.depth = fr.depth + 1; next.depth > maxDepth {
				return nil, src.errorAt(pos, fmt.Sprintf("stack overflow: more than %d nested calls; hint: make the recursion tail-recursive (the recursive call last, with an accumulator)", maxDepth))
			}
			for i, a := range args {
				v, err := a(fr)
				if err != nil {
					return nil, err
				}
				next.slots[i] = v
			}
			return cl.lam.run(next)
		}
		vals := make([]value.Value, len(args))
		for i, a := range args {
			v, err := a(fr)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return src.call(pos, f, vals)
	}
}

// call applies f to args, with fast paths for saturated closures and
// kernels; an error without a position gets the call's.
func (s *source) call(pos syntax.Pos, f value.Value, args []value.Value) (value.Value, error) {
	switch fn := f.(type) {
	case *kernelFunc:
		if fn.k.Arity == len(args) {
			v, err := fn.k.Fn(args)
			if err != nil {
				return nil, s.wrapAt(pos, err)
			}
			return v, nil
		}
	}
	v, err := value.Apply(f, args...)
	if err != nil {
		return nil, s.wrapAt(pos, err)
	}
	return v, nil
}

// isSelfCall reports whether fnExpr names the function being compiled,
// applied to exactly its arity: such a call in tail position loops.
func (c *compiler) isSelfCall(fnExpr syntax.Expr, nargs int, sc *scope) bool {
	v, ok := fnExpr.(*syntax.Var)
	if !ok || v.Module != "" || nargs != sc.fn.arity || nargs == 0 {
		return false
	}
	fs := sc.fn
	if fs.selfBinding != nil {
		depth, b, ok := sc.resolve(v.Name)
		return ok && depth == 1 && b == fs.selfBinding
	}
	if fs.selfGlobal != nil {
		if _, _, ok := sc.resolve(v.Name); ok {
			return false
		}
		return c.ns.lookupValue(v.Name) == fs.selfGlobal
	}
	return false
}
