package types

import (
	"slices"
	"sort"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The workflow-effect rule: a workflow body (the function given to any
// function that returns a WorkflowDef, see durable_api.go) re-runs from the
// top on every resume, so a Task it runs outside a step runs again each time.
// The pass walks the positions where the body itself runs a Task — its
// result, the task and the continuation of Task.andThen and the other Task
// combinators, the branches of if and case, `_ = task` let bindings, tasks
// bound in its own let — and reports every call there to a standard-library
// Task that is not a durable operation (Time.now, Uuid.v4, Db.exec,
// Durable.start, ...), and every call to a function of the program's own
// (in any of its modules) whose Task reaches one: the helper is walked the
// same way, once, and what it reaches is remembered. The arguments of a
// durable operation (a step's Task, a transaction's function) are not looked
// into: that is where effects belong. Logging (Std.Log) is allowed.

// allowedEffectModules are standard-library modules whose Tasks a workflow
// body may run between steps: the combinators and logging.
var allowedEffectModules = map[string]bool{taskModule: true, "Std.Log": true}

// effectChecker is the state of one walk: of the program's workflow bodies
// (reporting), or of one helper (collecting what it reaches).
type effectChecker struct {
	prog *Program
	info *Info
	errs diag.List
	// file is the file of the code being walked; workflow names the
	// registered function, for the message.
	file     *syntax.File
	workflow string
	// locals are the let-bound values in scope of the walk, innermost last.
	locals []letScope
	done   map[syntax.Node]bool
	seen   map[siteKey]bool
	// helpers remembers what each helper of the program reaches; shared by
	// every walk of one pass.
	helpers *helperFacts
	// collect is set on the walk of a helper: the first effect it reaches
	// is kept in first instead of being reported.
	collect bool
	first   *effectSite
	// params are the helper's parameters by name, and ranParams those its
	// walk found run outside a step.
	params    map[string]int
	ranParams []int
}

// siteKey identifies a reported position across the program's files.
type siteKey struct {
	file string
	span syntax.Span
}

// workflowEffects applies the workflow rules to every module of the program
// that is not part of the standard library: the effect rule and the step-id
// rule on each workflow body, the nesting rule on every step, the parallel
// rule on every concurrent Task combinator.
func workflowEffects(prog *Program, info *Info) diag.List {
	facts := newHelperFacts(prog, info)
	ec := &effectChecker{prog: prog, info: info, done: map[syntax.Node]bool{}, seen: map[siteKey]bool{}, helpers: facts}
	names := make([]string, 0, len(prog.Modules))
	for n := range prog.Modules {
		if !isStdlibModule(n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		f := prog.Modules[n]
		for _, d := range f.Decls {
			if vd, ok := d.(*syntax.ValueDecl); ok {
				walkScoped(vd.Body, nil, func(e syntax.Expr, scopes []letScope) {
					ec.registration(f, e, scopes)
					ec.parallelOperations(f, e, scopes)
				})
				walkExprs(vd.Body, func(e syntax.Expr) { ec.nestedOperations(f, e) })
			}
		}
	}
	return ec.errs
}

// call splits an application, with pipes undone, into its head and all its
// arguments: `x |> f a` and `f a <| x` are `f a x`; ok is false when e is not
// a call or a name.
func call(e syntax.Expr) (head syntax.Expr, args []syntax.Expr, ok bool) {
	switch e := e.(type) {
	case *syntax.App:
		h, inner, _ := call(e.Fn)
		return h, append(inner, e.Args...), true
	case *syntax.BinOp:
		switch e.Op {
		case "|>":
			h, inner, _ := call(e.R)
			return h, append(inner, e.L), true
		case "<|":
			h, inner, _ := call(e.L)
			return h, append(inner, e.R), true
		}
	case *syntax.Var:
		return e, nil, true
	}
	return e, nil, false
}

// letScope is the values one let binds, by name.
type letScope = map[string]*syntax.ValueDecl

// walkScoped is walkExprs that also hands visit the let-bound values in
// scope of each expression, innermost last, so that a workflow body given
// by the name of a let-bound function is found.
func walkScoped(e syntax.Expr, scopes []letScope, visit func(syntax.Expr, []letScope)) {
	if e == nil {
		return
	}
	visit(e, scopes)
	if l, ok := e.(*syntax.Let); ok {
		scopes = withLet(scopes, l)
	}
	for _, x := range subExprs(e) {
		walkScoped(x, scopes, visit)
	}
}

// withLet is scopes with the values l binds innermost.
func withLet(scopes []letScope, l *syntax.Let) []letScope {
	scope := letScope{}
	for _, b := range l.Bindings {
		if vd, ok := b.(*syntax.ValueDecl); ok {
			scope[vd.Name.Name] = vd
		}
	}
	return append(slices.Clip(scopes), scope)
}

// registration finds the workflow body given to a function that returns a
// WorkflowDef (every Durable.register*, and any wrapper of the program's
// own with such a parameter) and checks it; scopes are the let-bound values
// in scope of the call.
func (ec *effectChecker) registration(f *syntax.File, e syntax.Expr, scopes []letScope) {
	reg, ok := ec.info.asRegistration(e)
	if !ok {
		return
	}
	ec.workflow = ""
	for i, a := range reg.args[:reg.body] {
		if lit, ok := a.(*syntax.StringLit); ok && isCon(reg.params[i], "String") {
			ec.workflow = lit.Value
			break
		}
	}
	ec.body(f, reg.args[reg.body], 2, scopes)
}

// body walks the run positions of a workflow function that still takes n
// arguments: a lambda, a top-level function of the program (named or
// partially applied) or a let-bound one; scopes are the let-bound values in
// scope of e, which the body may run too.
func (ec *effectChecker) body(f *syntax.File, e syntax.Expr, n int, scopes []letScope) {
	e, n = peelLambdas(e, n)
	if n <= 0 {
		ec.file, ec.locals = f, slices.Clone(scopes)
		ec.run(e)
		ec.stepIDs(f, e)
		return
	}
	head, args, _ := call(e)
	v, ok := head.(*syntax.Var)
	if !ok {
		return
	}
	ref := ec.info.Refs[v]
	mf, vd := ec.helpers.decl(ref)
	if ref.Kind == RefLocal {
		mf = f
		vd, scopes = boundIn(scopes, ref.Name)
	} else {
		scopes = nil
	}
	if vd == nil || ec.done[vd] {
		return
	}
	ec.done[vd] = true
	if ec.workflow == "" {
		ec.workflow = ref.Name
	}
	if rest := n + len(args) - len(vd.Params); rest >= 0 {
		ec.body(mf, vd.Body, rest, scopes)
	}
}

// letBinding is scopes up to the innermost one that binds name (nil when
// none does): what is in scope of that binding's body.
func letBinding(scopes []letScope, name string) []letScope {
	for i := len(scopes) - 1; i >= 0; i-- {
		if scopes[i][name] != nil {
			return scopes[:i+1]
		}
	}
	return nil
}

// boundIn is the let-bound value of scopes named name and what is in scope
// of its body, or nil when no let binds it.
func boundIn(scopes []letScope, name string) (*syntax.ValueDecl, []letScope) {
	in := letBinding(scopes, name)
	if in == nil {
		return nil, nil
	}
	return in[len(in)-1][name], in
}

// peelLambdas is the body of e applied to n arguments as far as e is a
// lambda, and the arguments left over.
func peelLambdas(e syntax.Expr, n int) (syntax.Expr, int) {
	for n > 0 {
		lam, ok := e.(*syntax.Lambda)
		if !ok {
			break
		}
		n -= len(lam.Params)
		e = lam.Body
	}
	return e, n
}

// run checks an expression whose Task the workflow body runs.
func (ec *effectChecker) run(e syntax.Expr) {
	switch x := e.(type) {
	case *syntax.If:
		ec.run(x.Then)
		ec.run(x.Else)
		return
	case *syntax.Case:
		for _, br := range x.Branches {
			ec.run(br.Body)
		}
		return
	case *syntax.Let:
		scope := letScope{}
		ec.locals = append(ec.locals, scope)
		for _, b := range x.Bindings {
			switch b := b.(type) {
			case *syntax.ValueDecl:
				scope[b.Name.Name] = b
			case *syntax.Destructure:
				if ec.info.TaskDiscards[b] {
					ec.run(b.Body)
				}
			}
		}
		ec.run(x.Body)
		ec.locals = ec.locals[:len(ec.locals)-1]
		return
	}
	ec.runCall(e, 0)
}

// runCall checks the call e, applied to extra more arguments (1 for a
// continuation given by name, `Task.andThen (Db.exec db sql)`), whose Task
// the body runs.
func (ec *effectChecker) runCall(e syntax.Expr, extra int) {
	head, args, ok := call(e)
	if !ok {
		return
	}
	v, isVar := head.(*syntax.Var)
	if !isVar {
		return
	}
	ref, known := ec.info.Refs[v]
	if !known {
		return
	}
	switch {
	case ref.Kind == RefLocal:
		ec.local(ref.Name, len(args)+extra)
	case ref.Kind != RefTopLevel:
	case !isStdlibModule(ref.Module):
		fx := ec.helpers.effect(ref, len(args)+extra)
		if fx.site != nil {
			ec.hit(ec.site(e, v, ref, fx.site))
		}
		for _, i := range fx.runs {
			if i < len(args) {
				ec.run(args[i])
			}
		}
	case ec.info.durableKindOf(ref) == durableOperation:
		// a journalled operation: its arguments may have effects
	case allowedEffectModules[ref.Module]:
		if extra == 0 {
			ec.combinator(args)
		}
	case returnsTask(ec.info.TypeOf(v), len(args)+extra):
		ec.hit(ec.site(e, v, ref, nil))
	}
}

// local walks a let-bound value the body runs, applied to nargs arguments;
// in a helper, a parameter run is remembered.
func (ec *effectChecker) local(name string, nargs int) {
	if i, isParam := ec.params[name]; isParam && !ec.letBound(name) && !slices.Contains(ec.ranParams, i) {
		ec.ranParams = append(ec.ranParams, i)
		return
	}
	for i := len(ec.locals) - 1; i >= 0; i-- {
		vd, ok := ec.locals[i][name]
		if !ok {
			continue
		}
		if ec.done[vd] || nargs < len(vd.Params) {
			return
		}
		ec.done[vd] = true
		saved := ec.locals
		ec.locals = ec.locals[:i+1]
		ec.run(vd.Body)
		ec.locals = saved
		return
	}
}

// letBound reports whether name is a let-bound value in scope of the walk.
func (ec *effectChecker) letBound(name string) bool {
	return slices.ContainsFunc(ec.locals, func(scope letScope) bool { return scope[name] != nil })
}

// combinator walks the arguments of a Task combinator: a Task argument is
// run, and so is the result of a function argument (a continuation) or of a
// list of Tasks.
func (ec *effectChecker) combinator(args []syntax.Expr) {
	for _, a := range args {
		switch t := unalias(ec.info.TypeOf(a)).(type) {
		case *Fun:
			ec.continuation(a)
		case *Con:
			if t.Name == "List" {
				ec.tasks(a)
			} else {
				ec.run(a)
			}
		default:
			ec.run(a)
		}
	}
}

// continuation walks a function the body calls for a Task: a lambda's
// body, or a function given by name or partially applied, as a call with
// one more argument.
func (ec *effectChecker) continuation(e syntax.Expr) {
	if lam, ok := e.(*syntax.Lambda); ok {
		ec.run(lam.Body)
		return
	}
	ec.runCall(e, 1)
}

// tasks walks a list of Tasks: a list literal's elements, or the function
// mapped over a list (`List.map (\item -> task) items`).
func (ec *effectChecker) tasks(e syntax.Expr) {
	if l, ok := e.(*syntax.List); ok {
		for _, x := range l.Elems {
			ec.run(x)
		}
		return
	}
	_, args, _ := call(e)
	for _, a := range args {
		if _, isFun := unalias(ec.info.TypeOf(a)).(*Fun); isFun {
			ec.continuation(a)
		}
	}
}

// returnsTask reports whether t, applied to n arguments, is a Task.
func returnsTask(t Type, n int) bool {
	for ; n > 0 && t != nil; n-- {
		f, ok := unalias(t).(*Fun)
		if !ok {
			return false
		}
		t = f.Res
	}
	return t != nil && isCon(t, "Task")
}
