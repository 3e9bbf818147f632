package types

import (
	"skydurable/compiler/syntax"
)

// inferLet checks a let block: bindings may refer to each other in any
// order; each group of mutually dependent bindings is inferred together and
// generalised (let-polymorphism) before the bindings that use it.
func (c *checker) inferLet(x *syntax.Let, e *env) Type {
	names := map[string]Scheme{}
	inner := e.child(names)
	inner.lets = map[string]*syntax.ValueDecl{}
	defines := map[string]int{}
	var nodes []syntax.LetBinding
	for _, b := range x.Bindings {
		switch b := b.(type) {
		case *syntax.ValueDecl:
			if _, dup := defines[b.Name.Name]; dup {
				c.errorf(b.Name, "DUPLICATE DEFINITION", "This let block defines `"+b.Name.Name+"` more than once:", "",
					"Rename one of them.")
				continue
			}
			inner.lets[b.Name.Name] = b
			if b.Annotation != nil {
				if b.Annotation.Name.Name != b.Name.Name {
					c.errorf(b.Annotation.Name, "NAME MISMATCH", "The type annotation is for `"+b.Annotation.Name.Name+
						"`, but the definition below it is `"+b.Name.Name+"`:", "", "Make the two names match.")
				}
				names[b.Name.Name] = c.annotationScheme(b.Annotation.Type)
				defines[b.Name.Name] = -1
				continue
			}
			defines[b.Name.Name] = len(nodes)
			nodes = append(nodes, b)
		case *syntax.Destructure:
			i := len(nodes)
			patternNames(b.Pattern, func(n string) {
				if _, dup := defines[n]; dup {
					c.errorf(b.Pattern, "DUPLICATE DEFINITION", "This let block defines `"+n+"` more than once:", "",
						"Rename one of them.")
				}
				defines[n] = i
			})
			nodes = append(nodes, b)
		}
	}
	edges := make([][]int, len(nodes))
	for i, b := range nodes {
		var body syntax.Expr
		switch b := b.(type) {
		case *syntax.ValueDecl:
			body = b.Body
		case *syntax.Destructure:
			body = b.Body
		}
		seen := map[int]bool{}
		walkExpr(body, func(n string) {
			if j, ok := defines[n]; ok && j >= 0 && !seen[j] {
				seen[j] = true
				edges[i] = append(edges[i], j)
			}
		})
	}
	for _, g := range tarjan(edges) {
		c.inferLetGroup(g, nodes, names, inner)
	}
	for _, b := range x.Bindings {
		if d, ok := b.(*syntax.ValueDecl); ok && d.Annotation != nil {
			if s, ok := names[d.Name.Name]; ok {
				c.checkAnnotated(d, s, inner)
			}
		}
	}
	return c.infer(x.Body, inner)
}

func (c *checker) inferLetGroup(g []int, nodes []syntax.LetBinding, names map[string]Scheme, inner *env) {
	c.u.level++
	type pending struct {
		names []string
		types []Type
	}
	var bound pending
	tvs := map[int]Type{}
	for _, i := range g {
		if d, ok := nodes[i].(*syntax.ValueDecl); ok {
			t := c.u.fresh()
			tvs[i] = t
			names[d.Name.Name] = Scheme{Type: t}
		}
	}
	for _, i := range g {
		switch b := nodes[i].(type) {
		case *syntax.ValueDecl:
			c.checkFunction(b, tvs[i], inner)
			bound.names = append(bound.names, b.Name.Name)
			bound.types = append(bound.types, tvs[i])
		case *syntax.Destructure:
			pn := map[string]Scheme{}
			pt := c.inferPattern(b.Pattern, pn)
			for n, s := range pn {
				names[n] = s
			}
			bt := c.infer(b.Body, inner)
			if m := c.u.unify(pt, bt); m != nil {
				c.mismatchError(b.Body, m, pt, bt, ctxText{
					msg:      "This value does not match the pattern it is bound to:",
					found:    "The value is:",
					expected: "But the pattern matches:",
				})
			}
			if _, wild := b.Pattern.(*syntax.WildcardPat); wild {
				if isCon(bt, "Task") {
					c.info.TaskDiscards[b] = true
				}
				if _, isFun := unalias(bt).(*Fun); isFun {
					final := bt
					for {
						f, ok := unalias(final).(*Fun)
						if !ok {
							break
						}
						final = f.Res
					}
					hint := "Discarding a function does nothing; call it, or remove the binding."
					if isCon(final, "Task") {
						hint = "Discarding a function does nothing: give it its " +
							plural(arity(bt), "argument", "arguments") + " so the Task it returns runs."
					}
					c.errorf(b.Body, "DISCARDED FUNCTION", "This `_ =` binding throws away a function, so nothing runs:",
						"It is a function of type:\n\n"+indent(c.printer().String(bt)), hint)
				}
			}
			c.checkIrrefutable(b.Pattern, "let binding")
			for n, s := range pn {
				bound.names = append(bound.names, n)
				bound.types = append(bound.types, s.Type)
			}
		}
	}
	c.u.level--
	for i, n := range bound.names {
		names[n] = c.u.generalize(bound.types[i])
	}
}
