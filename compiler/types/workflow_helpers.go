package types

import (
	"slices"

	"skydurable/compiler/syntax"
)

// What the program's own functions reach, for the workflow rules: a helper
// called between steps is an effect when its Task reaches a standard-library
// effect, and a helper called inside a step's Task is a durable operation
// when it reaches one. Each helper is walked once per way it is called and
// the answer kept; a helper that calls itself reaches nothing more through
// that call.

// effectSite is an effect a walk reached: the call that runs it, and, when
// the call is to a helper, what the helper reaches in turn.
type effectSite struct {
	file string
	span syntax.Span
	// name is the called function as written ("Db.exec", "chargeCard").
	name string
	// ref is the standard-library function finally reached.
	ref Ref
	via *effectSite
}

// declAt is a top-level value of the program and its file.
type declAt struct {
	file *syntax.File
	decl *syntax.ValueDecl
}

// helperEffect is what a helper's Task does when it runs: the first
// standard-library effect it reaches (nil for none), and which of its
// parameters it runs outside a step (`withLog msg task = println msg |>
// Task.andThen (\_ -> task)` runs its 2nd), so the Tasks a call passes
// there are checked at the call.
type helperEffect struct {
	site *effectSite
	runs []int
}

// effectKey is a helper applied to enough arguments to run, with rest more
// arguments applied to its result.
type effectKey struct {
	decl *syntax.ValueDecl
	rest int
}

// helperFacts holds what each helper reaches, computed on demand.
type helperFacts struct {
	prog    *Program
	info    *Info
	decls   map[Ref]declAt
	effects map[effectKey]helperEffect
	ops     map[*syntax.ValueDecl]*effectSite
	steps   map[*syntax.ValueDecl][]int
}

func newHelperFacts(prog *Program, info *Info) *helperFacts {
	h := &helperFacts{prog: prog, info: info, decls: map[Ref]declAt{},
		effects: map[effectKey]helperEffect{}, ops: map[*syntax.ValueDecl]*effectSite{},
		steps: map[*syntax.ValueDecl][]int{}}
	for name, f := range prog.Modules {
		if isStdlibModule(name) {
			continue
		}
		for _, d := range f.Decls {
			if vd, ok := d.(*syntax.ValueDecl); ok {
				h.decls[Ref{Kind: RefTopLevel, Module: name, Name: vd.Name.Name}] = declAt{f, vd}
			}
		}
	}
	return h
}

// decl is the program's own top-level value ref names, or nil.
func (h *helperFacts) decl(ref Ref) (*syntax.File, *syntax.ValueDecl) {
	d := h.decls[ref]
	return d.file, d.decl
}

// effect is what the helper's Task does when it is called with nargs
// arguments (nothing when nargs is too few for its body to run).
func (h *helperFacts) effect(ref Ref, nargs int) helperEffect {
	f, vd := h.decl(ref)
	if vd == nil || nargs < len(vd.Params) {
		return helperEffect{}
	}
	k := effectKey{vd, nargs - len(vd.Params)}
	if s, ok := h.effects[k]; ok {
		return s
	}
	h.effects[k] = helperEffect{}
	w := &effectChecker{prog: h.prog, info: h.info, file: f, done: map[syntax.Node]bool{},
		seen: map[siteKey]bool{}, helpers: h, collect: true, params: paramIndex(vd)}
	if e, rest := peelLambdas(vd.Body, k.rest); rest > 0 {
		w.runCall(e, rest)
	} else {
		w.run(e)
	}
	h.effects[k] = helperEffect{site: w.first, runs: w.ranParams}
	return h.effects[k]
}

// paramIndex maps each parameter of d that is a plain name to its index.
func paramIndex(d *syntax.ValueDecl) map[string]int {
	out := map[string]int{}
	for i, p := range d.Params {
		if v, ok := p.(*syntax.VarPat); ok {
			out[v.Name] = i
		}
	}
	return out
}

// operation is the first durable operation the helper can run, anywhere in
// its body or in the helpers it uses, or nil. Only a function whose result
// is a Task is looked into (a WorkflowDef holds a body that is not run).
func (h *helperFacts) operation(ref Ref) *effectSite {
	f, vd := h.decl(ref)
	if vd == nil {
		return nil
	}
	if v := h.info.Values[ref.Module][ref.Name]; v == nil || !returnsTaskType(v.Scheme.Type) {
		return nil
	}
	if s, ok := h.ops[vd]; ok {
		return s
	}
	h.ops[vd] = nil
	found := h.reachedOperation(f, vd.Body, nil)
	h.ops[vd] = found
	return found
}

// returnsTaskType reports whether a function of type t, given all its
// arguments, is a Task.
func returnsTaskType(t Type) bool {
	_, res := uncurry(t)
	return isCon(res, "Task")
}

// writtenName is a name as the program wrote it (`Db.exec`, `chargeCard`).
func writtenName(v *syntax.Var) string {
	if v.Module != "" {
		return v.Module + "." + v.Name
	}
	return v.Name
}

// stepParams are the parameters of the helper that it runs as the Task of
// a step (given to a durable operation as its effect, directly or through
// another helper), so a durable operation passed there is nested.
func (h *helperFacts) stepParams(ref Ref) []int {
	_, vd := h.decl(ref)
	if vd == nil {
		return nil
	}
	if s, ok := h.steps[vd]; ok {
		return s
	}
	h.steps[vd] = nil
	params := paramIndex(vd)
	var out []int
	mark := func(a syntax.Expr) {
		if v, ok := a.(*syntax.Var); ok && h.info.Refs[v].Kind == RefLocal {
			if i, isParam := params[v.Name]; isParam && !slices.Contains(out, i) {
				out = append(out, i)
			}
		}
	}
	walkExprs(vd.Body, func(e syntax.Expr) {
		if dc, ok := h.info.asDurableOp(e); ok {
			for _, a := range dc.effectArgs() {
				mark(a)
			}
			return
		}
		head, args, _ := call(e)
		if v, ok := head.(*syntax.Var); ok {
			for _, j := range h.stepParams(h.info.Refs[v]) {
				if j < len(args) {
					mark(args[j])
				}
			}
		}
	})
	h.steps[vd] = out
	return out
}
