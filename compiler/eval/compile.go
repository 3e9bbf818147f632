package eval

import (
	"context"
	"fmt"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// Program is a loaded, compiled Sky program ready to run.
type Program struct {
	entry   *Module
	modules []*Module
	// ctx is the context a `let _ = task` outside any Task runs under; the
	// drivers set it to theirs.
	ctx context.Context
	// kernels are the stdlib's, for running a `main` that is an App.
	kernels map[string]value.Kernel
}

// Value returns the value of a top-level declaration of the entry module.
func (p *Program) Value(name string) (value.Value, error) {
	g, ok := p.entry.values[name]
	if !ok {
		return nil, fmt.Errorf("module %s has no top-level `%s`", p.entry.Name, name)
	}
	return g.get()
}

// compiler compiles the declarations of one module to closures.
type compiler struct {
	prog    *Program
	mod     *Module
	ns      *namespace
	src     *source
	kernels map[string]value.Kernel
	errs    *diag.List
}

// link declares every module, compiles every declaration, then computes
// every top-level constant, so a running program never initialises lazily.
func link(order []*Module, entry *Module, kernels map[string]value.Kernel) (*Program, error) {
	p := &Program{entry: entry, modules: order, ctx: context.Background(), kernels: kernels}
	var errs diag.List
	for _, m := range order {
		m.declare(&errs)
	}
	for _, m := range order {
		c := &compiler{prog: p, mod: m, ns: newNamespace(m, &errs), src: m.src, kernels: kernels, errs: &errs}
		for _, d := range m.File.Decls {
			if vd, ok := d.(*syntax.ValueDecl); ok {
				c.topLevel(vd)
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	for _, m := range order {
		for _, d := range m.File.Decls {
			if vd, ok := d.(*syntax.ValueDecl); ok {
				if _, err := m.values[vd.Name.Name].get(); err != nil {
					return nil, err
				}
			}
		}
	}
	return p, nil
}

func (c *compiler) errorf(pos syntax.Pos, format string, args ...any) {
	c.mod.errorf(c.errs, pos, format, args...)
}

// topLevel compiles one top-level declaration into its global.
func (c *compiler) topLevel(d *syntax.ValueDecl) {
	g := c.mod.values[d.Name.Name]
	if g == nil || g.init != nil || g.state == stateReady {
		return // a duplicate, already reported
	}
	if name, ok := kernelName(d); ok {
		c.bindKernel(g, d, name)
		return
	}
	params, body := d.Params, d.Body
	if lam, ok := body.(*syntax.Lambda); ok && len(params) == 0 {
		// `f = \x -> ...` is the function `f x = ...` (self tail calls too).
		params, body = lam.Params, lam.Body
	}
	if len(params) > 0 {
		fs := &fnScope{selfGlobal: g}
		g.v = &closure{lam: c.lambda(d.Name.Name, params, body, fs, nil)}
		g.state = stateReady
		return
	}
	fs := &fnScope{}
	sc := &scope{fn: fs}
	run := c.expr(d.Body, sc, false)
	g.init = func() (value.Value, error) {
		return run(newFrame(fs.nslots, nil))
	}
}

// kernelName recognises a body `Ffi.kernel "Name"`.
func kernelName(d *syntax.ValueDecl) (string, bool) {
	app, ok := d.Body.(*syntax.App)
	if !ok || len(app.Args) != 1 {
		return "", false
	}
	fn, ok := app.Fn.(*syntax.Var)
	if !ok || fn.Module != "Ffi" || fn.Name != "kernel" {
		return "", false
	}
	lit, ok := app.Args[0].(*syntax.StringLit)
	if !ok {
		return "", false
	}
	return lit.Value, true
}

func (c *compiler) bindKernel(g *global, d *syntax.ValueDecl, name string) {
	k, ok := c.kernels[name]
	if !ok || k.Fn == nil {
		c.errorf(d.Body.Range().Start, "no Go kernel is registered under the name %q (for `%s`); hint: add it to the compiler/ffi table", name, g.name)
		return
	}
	if len(d.Params) > 0 {
		c.errorf(d.Name.Start, "a kernel binding takes no parameters: write `%s = Ffi.kernel %q`", d.Name.Name, name)
		return
	}
	if k.Arity == 0 {
		pos := d.Body.Range().Start
		g.init = func() (value.Value, error) {
			v, err := k.Fn(nil)
			return v, c.src.wrapAt(pos, err)
		}
		return
	}
	g.v, g.state = &kernelFunc{k: k}, stateReady
}

// binding is one local variable: its slot in its function's frame.
type binding struct{ slot int }

// fnScope is the compile-time view of one function's frame.
type fnScope struct {
	nslots int
	outer  *scope // the scope the function was written in; nil at top level
	// The function's own name, for self tail calls.
	selfGlobal  *global
	selfBinding *binding
	arity       int
	lam         *lambda // the function being compiled
	// captured is set when a closure is created over this function's
	// frame; otherwise a self tail call may reuse the frame.
	captured bool
}

// scope is a block of names inside one function (parameters, a let, a case
// branch); parent nil means the next scope out is fn.outer, one frame up.
type scope struct {
	vars   map[string]*binding
	parent *scope
	fn     *fnScope
	// track, when set, hears of every reference to a name of this scope
	// (used to order let bindings by dependency).
	track func(*binding)
}

func (s *scope) child() *scope { return &scope{parent: s, fn: s.fn} }

// bind allocates a fresh slot in the function's frame for name.
func (s *scope) bind(name string) *binding {
	b := &binding{slot: s.fn.nslots}
	s.fn.nslots++
	if s.vars == nil {
		s.vars = map[string]*binding{}
	}
	s.vars[name] = b
	return b
}

// resolve finds a local: how many frames up, and its binding.
func (s *scope) resolve(name string) (int, *binding, bool) {
	depth := 0
	for s != nil {
		if b, ok := s.vars[name]; ok {
			if s.track != nil {
				s.track(b)
			}
			return depth, b, true
		}
		if s.parent != nil {
			s = s.parent
		} else {
			s = s.fn.outer
			depth++
		}
	}
	return 0, nil, false
}

// lambda compiles a function of params and body; fs may carry the
// function's own name for self tail calls. outer is where it is written.
func (c *compiler) lambda(name string, params []syntax.Pattern, body syntax.Expr, fs *fnScope, outer *scope) *lambda {
	fs.outer, fs.arity = outer, len(params)
	if outer != nil {
		outer.fn.captured = true
	}
	fs.nslots = len(params)
	sc := &scope{fn: fs}
	lam := &lambda{name: name, arity: len(params), direct: true, src: c.src}
	fs.lam = lam
	for i, p := range params {
		switch p := p.(type) {
		case *syntax.VarPat:
			if sc.vars == nil {
				sc.vars = map[string]*binding{}
			}
			sc.vars[p.Name] = &binding{slot: i}
		case *syntax.WildcardPat:
		default:
			lam.direct = false
		}
	}
	if !lam.direct {
		lam.params = make([]matcher, len(params))
		lam.pos = make([]syntax.Pos, len(params))
		for i, p := range params {
			lam.pos[i] = p.Range().Start
			if _, ok := p.(*syntax.VarPat); ok {
				lam.params[i] = matchAny // already in its slot
				continue
			}
			lam.params[i] = c.pattern(p, sc)
		}
	}
	lam.body = c.expr(body, sc, true)
	lam.nslots = fs.nslots
	lam.reuseFrame = !fs.captured
	return lam
}
