package types

import (
	"sort"

	"skydurable/compiler/syntax"
)

// env is a chain of local scopes (parameters, let and case bindings).
type env struct {
	parent *env
	names  map[string]Scheme
	// lets are the values of names a let binds (nil in other scopes).
	lets map[string]*syntax.ValueDecl
}

func (e *env) lookup(n string) (Scheme, bool) {
	for ; e != nil; e = e.parent {
		if s, ok := e.names[n]; ok {
			return s, true
		}
	}
	return Scheme{}, false
}

func (e *env) child(names map[string]Scheme) *env { return &env{parent: e, names: names} }

// letDecl is the let binding the name n means in e, or nil when it means
// something else there (a parameter, a pattern's name) or nothing.
func (e *env) letDecl(n string) *syntax.ValueDecl {
	for ; e != nil; e = e.parent {
		if _, ok := e.names[n]; ok {
			return e.lets[n]
		}
	}
	return nil
}

// kernelName returns the kernel name of an `Ffi.kernel "Name"` body.
func kernelName(d *syntax.ValueDecl) (string, bool) {
	app, ok := d.Body.(*syntax.App)
	if !ok || len(d.Params) != 0 || len(app.Args) != 1 {
		return "", false
	}
	v, ok := app.Fn.(*syntax.Var)
	if !ok || v.Module != "Ffi" || v.Name != "kernel" {
		return "", false
	}
	s, ok := app.Args[0].(*syntax.StringLit)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// declareValues registers the module's top-level values.
func (c *checker) declareValues(m *moduleInfo) {
	for _, d := range m.file.Decls {
		vd, ok := d.(*syntax.ValueDecl)
		if !ok {
			continue
		}
		if m.values[vd.Name.Name] != nil {
			c.errorf(vd.Name, "DUPLICATE DEFINITION", "There are multiple definitions of `"+vd.Name.Name+
				"` in this module:", "", "Rename one of them or remove the duplicate.")
			continue
		}
		vi := &ValueInfo{Module: m.name, Name: vd.Name.Name, Decl: vd}
		if k, ok := kernelName(vd); ok {
			vi.Kernel = k
			c.info.Kernels[m.name+"."+vd.Name.Name] = k
		}
		if vd.Annotation != nil && vd.Annotation.Name.Name != vd.Name.Name {
			c.errorf(vd.Annotation.Name, "NAME MISMATCH", "The type annotation is for `"+vd.Annotation.Name.Name+
				"`, but the definition below it is `"+vd.Name.Name+"`:", "", "Make the two names match.")
		}
		m.values[vd.Name.Name] = vi
		m.order = append(m.order, vd.Name.Name)
	}
}

// checkValues infers and checks every top-level value of the module.
func (c *checker) checkValues(m *moduleInfo) {
	var decls []*syntax.ValueDecl
	for _, n := range m.order {
		decls = append(decls, m.values[n].Decl)
	}
	// Annotated values (and kernels) get their scheme from the annotation
	// first, so any order of use works and recursion may be polymorphic.
	for _, n := range m.order {
		vi := m.values[n]
		d := vi.Decl
		if d.Annotation != nil {
			vi.Scheme = c.annotationScheme(d.Annotation.Type)
			vi.known = true
		} else if vi.Kernel != "" {
			c.errorf(d.Name, "MISSING ANNOTATION", "The kernel binding `"+n+"` has no type annotation:", "",
				"A kernel's type comes from its annotation; add `"+n+" : <type>` above it.")
			vi.Scheme = Scheme{Type: &Var{level: genericLevel}}
			vi.known = true
		}
	}
	groups := sccs(decls, func(d *syntax.ValueDecl) bool { return d.Annotation == nil && m.values[d.Name.Name].Kernel == "" })
	for _, g := range groups {
		c.inferGroup(g, nil, func(d *syntax.ValueDecl, s Scheme) {
			vi := m.values[d.Name.Name]
			vi.Scheme, vi.known = s, true
		}, func(d *syntax.ValueDecl, t Type) {
			vi := m.values[d.Name.Name]
			vi.Scheme, vi.known = Scheme{Type: t}, true
		})
	}
	for _, n := range m.order {
		vi := m.values[n]
		if vi.Decl.Annotation != nil && vi.Kernel == "" {
			c.declName = n
			c.checkAnnotated(vi.Decl, vi.Scheme, nil)
		}
	}
	c.declName = ""
}

// annotationScheme converts an annotation into a generalised scheme.
func (c *checker) annotationScheme(t syntax.Type) Scheme {
	c.u.level++
	ty := c.convertType(t, map[string]*Var{}, annotationVars)
	c.u.level--
	return c.u.generalize(ty)
}

// rigidInstance instantiates a scheme with rigid variables, to check the
// body a signature describes.
func (c *checker) rigidInstance(s Scheme, names map[string]*Var) Type {
	m := map[*Var]Type{}
	t := c.u.inst(s.Type, m)
	for _, v := range m {
		rv := v.(*Var)
		rv.Rigid = true
		if rv.Name == "" {
			rv.Name = "a"
		}
		names[rv.Name] = rv
	}
	return t
}

// checkAnnotated checks a definition's body against its annotation.
func (c *checker) checkAnnotated(d *syntax.ValueDecl, s Scheme, e *env) {
	outer := c.rigid
	inner := map[string]*Var{}
	for k, v := range outer {
		inner[k] = v
	}
	c.u.level++
	t := c.rigidInstance(s, inner)
	c.rigid = inner
	c.checkFunction(d, t, e)
	c.rigid = outer
	c.u.level--
}

// checkFunction checks `name params = body` against the expected type t,
// peeling one argument type per parameter.
func (c *checker) checkFunction(d *syntax.ValueDecl, t Type, e *env) {
	c.info.Defs[d] = t
	names := map[string]Scheme{}
	cur := t
	for i, p := range d.Params {
		f, ok := unalias(cur).(*Fun)
		if !ok {
			if v, isVar := Prune(cur).(*Var); isVar && !v.Rigid {
				f = &Fun{Arg: c.u.fresh(), Res: c.u.fresh()}
				c.u.unify(v, f)
			} else {
				var pr Printer
				pr.Qualify = c.sc.qualify
				c.errorf(p, "TOO MANY ARGS", "The type annotation for `"+d.Name.Name+"` says it takes "+
					plural(i, "argument", "arguments")+", but it is defined with "+
					plural(len(d.Params), "parameter", "parameters")+":",
					"The annotation says:\n\n"+indent(pr.String(t)),
					"Remove the extra parameters, or add their types to the annotation.")
				return
			}
		}
		pt := c.inferPattern(p, names)
		if m := c.u.unify(f.Arg, pt); m != nil {
			c.mismatchError(p, m, f.Arg, pt, ctxText{
				msg:      "The " + ordinal(i+1) + " parameter of `" + d.Name.Name + "` does not match its type annotation:",
				found:    "The pattern is for values of type:",
				expected: "But the annotation says the " + ordinal(i+1) + " argument is:",
			})
		}
		c.checkIrrefutable(p, "parameter")
		cur = f.Res
	}
	body := c.infer(d.Body, e.child(names))
	if m := c.u.unify(cur, body); m != nil {
		c.mismatchError(d.Body, m, cur, body, ctxText{
			msg:      "Something is off with the body of the `" + d.Name.Name + "` definition:",
			found:    "The body is:",
			expected: "But the type annotation on `" + d.Name.Name + "` says it should be:",
		})
	}
}

// inferGroup infers a strongly connected group of unannotated definitions
// together, then generalises them. done receives each final scheme; mono
// receives the monomorphic type while the group is being inferred.
func (c *checker) inferGroup(g []*syntax.ValueDecl, e *env, done func(*syntax.ValueDecl, Scheme), mono func(*syntax.ValueDecl, Type)) {
	c.u.level++
	tvs := make([]Type, len(g))
	for i, d := range g {
		tvs[i] = c.u.fresh()
		mono(d, tvs[i])
	}
	for i, d := range g {
		prev := c.declName
		if e == nil {
			c.declName = d.Name.Name
		}
		c.checkFunction(d, tvs[i], e)
		c.declName = prev
	}
	c.u.level--
	for i, d := range g {
		done(d, c.u.generalize(tvs[i]))
	}
}

// sccs orders the definitions selected by infer into strongly connected
// groups of mutual reference, dependencies first.
func sccs(decls []*syntax.ValueDecl, infer func(*syntax.ValueDecl) bool) [][]*syntax.ValueDecl {
	idx := map[string]int{}
	var nodes []*syntax.ValueDecl
	for _, d := range decls {
		if infer(d) {
			idx[d.Name.Name] = len(nodes)
			nodes = append(nodes, d)
		}
	}
	edges := make([][]int, len(nodes))
	for i, d := range nodes {
		seen := map[int]bool{}
		freeVars(d, func(n string) {
			if j, ok := idx[n]; ok && !seen[j] {
				seen[j] = true
				edges[i] = append(edges[i], j)
			}
		})
	}
	var out [][]*syntax.ValueDecl
	for _, g := range tarjan(edges) {
		var ds []*syntax.ValueDecl
		for _, i := range g {
			ds = append(ds, nodes[i])
		}
		out = append(out, ds)
	}
	return out
}

// tarjan returns the strongly connected components of a graph, each
// component after the components it depends on, members in index order.
func tarjan(edges [][]int) [][]int {
	n := len(edges)
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	var strong func(v int)
	strong = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		on[v] = true
		for _, w := range edges[v] {
			if index[w] < 0 {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var g []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				g = append(g, w)
				if w == v {
					break
				}
			}
			sort.Ints(g)
			out = append(out, g)
		}
	}
	for i := 0; i < n; i++ {
		if index[i] < 0 {
			strong(i)
		}
	}
	return out
}
