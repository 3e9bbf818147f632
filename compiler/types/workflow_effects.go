package types

import (
	"sort"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The workflow-effect rule: a workflow body (the function passed to
// Durable.register, registerWith or registerVersioned) re-runs from the top on
// every resume, so a Task it runs outside a step runs again each time. The
// pass walks the positions where the body itself runs a Task — its result, the
// task and the continuation of Task.andThen and the other Task combinators,
// the branches of if and case, `_ = task` let bindings, tasks bound in its own
// let — and reports every call there to a standard-library Task that is not a
// durable operation (Time.now, Uuid.v4, Db.exec, Durable.start, ...). The
// arguments of a durable operation (a step's Task, a transaction's function)
// are not looked into: that is where effects belong. Logging (Std.Log) is
// allowed; a call to a function of the program's own is not followed.

const durableModule = "Std.Durable"

// workflowBodyArg is the index of the body argument of each register
// function of Std.Durable.
var workflowBodyArg = map[string]int{"register": 3, "registerWith": 4, "registerVersioned": 4}

// workflowNameArg is the index of the workflow-name argument of each.
var workflowNameArg = map[string]int{"register": 0, "registerWith": 1, "registerVersioned": 0, "registerWithLimits": 1}

// durableOps are the Std.Durable functions that take the Ctx: journalled
// operations, safe in a workflow body.
var durableOps = map[string]bool{
	"step": true, "stepValue": true, "transaction": true, "sleep": true, "sleepAs": true,
	"awaitSignal": true, "awaitSignalFor": true,
	"startChild": true, "awaitChild": true, "all": true, "setEvent": true,
}

// allowedEffectModules are standard-library modules whose Tasks a workflow
// body may run between steps: the combinators and logging.
var allowedEffectModules = map[string]bool{"Sky.Core.Task": true, "Std.Log": true}

// effectChecker is the state of one workflowEffects pass.
type effectChecker struct {
	prog *Program
	info *Info
	errs diag.List
	// file is the file of the body being walked; workflow names the
	// registered function, for the message.
	file     *syntax.File
	workflow string
	// locals are the let-bound values in scope of the walk, innermost last.
	locals []map[string]*syntax.ValueDecl
	done   map[syntax.Node]bool
	seen   map[syntax.Span]bool
}

// workflowEffects applies the rule to every module of the program that is
// not part of the standard library.
func workflowEffects(prog *Program, info *Info) diag.List {
	ec := &effectChecker{prog: prog, info: info, done: map[syntax.Node]bool{}, seen: map[syntax.Span]bool{}}
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
				walkExprs(vd.Body, func(e syntax.Expr) { ec.registration(f, e) })
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

// registration finds the body of a Durable.register* call and walks it.
func (ec *effectChecker) registration(f *syntax.File, e syntax.Expr) {
	if _, isApp := e.(*syntax.App); !isApp {
		if b, isPipe := e.(*syntax.BinOp); !isPipe || (b.Op != "|>" && b.Op != "<|") {
			return
		}
	}
	head, args, _ := call(e)
	v, ok := head.(*syntax.Var)
	if !ok {
		return
	}
	ref := ec.info.Refs[v]
	idx, isReg := workflowBodyArg[ref.Name]
	if ref.Kind != RefTopLevel || ref.Module != durableModule || !isReg || len(args) <= idx {
		return
	}
	ec.workflow = ""
	if lit, ok := args[workflowNameArg[ref.Name]].(*syntax.StringLit); ok {
		ec.workflow = lit.Value
	}
	ec.body(f, args[idx], 2)
}

// body walks the run positions of a workflow function that still takes n
// arguments: a lambda, a top-level function of the program (named or
// partially applied) or a let-bound one.
func (ec *effectChecker) body(f *syntax.File, e syntax.Expr, n int) {
	for n > 0 {
		lam, ok := e.(*syntax.Lambda)
		if !ok {
			break
		}
		n -= len(lam.Params)
		e = lam.Body
	}
	if n <= 0 {
		ec.file, ec.locals = f, nil
		ec.run(e)
		return
	}
	head, args, _ := call(e)
	v, ok := head.(*syntax.Var)
	if !ok {
		return
	}
	ref := ec.info.Refs[v]
	if ref.Kind != RefTopLevel || isStdlibModule(ref.Module) {
		return
	}
	mf := ec.prog.Modules[ref.Module]
	if mf == nil {
		return
	}
	for _, d := range mf.Decls {
		if vd, ok := d.(*syntax.ValueDecl); ok && vd.Name.Name == ref.Name {
			if ec.done[vd] {
				return
			}
			ec.done[vd] = true
			if ec.workflow == "" {
				ec.workflow = ref.Name
			}
			rest := n + len(args) - len(vd.Params)
			if rest < 0 {
				return
			}
			ec.body(mf, vd.Body, rest)
			return
		}
	}
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
		scope := map[string]*syntax.ValueDecl{}
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
	case ref.Kind != RefTopLevel || !isStdlibModule(ref.Module):
		// a function of the program's own: not followed
	case ref.Module == durableModule && durableOps[ref.Name]:
		// a journalled operation: its arguments may have effects
	case allowedEffectModules[ref.Module]:
		if extra == 0 {
			ec.combinator(args)
		}
	case returnsTask(ec.info.TypeOf(v), len(args)+extra):
		ec.report(e, v, ref)
	}
}

// local walks a let-bound value the body runs, applied to nargs arguments.
func (ec *effectChecker) local(name string, nargs int) {
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

// report records the error for the call e of the standard-library Task ref.
func (ec *effectChecker) report(e syntax.Expr, head *syntax.Var, ref Ref) {
	sp := e.Range()
	if b, ok := e.(*syntax.BinOp); ok {
		// `x |> Db.exec ...`: point at the call, not at what is piped into it
		if b.Op == "|>" {
			sp = b.R.Range()
		} else {
			sp = b.L.Range()
		}
	}
	if ec.seen[sp] {
		return
	}
	ec.seen[sp] = true
	name := head.Name
	if head.Module != "" {
		name = head.Module + "." + head.Name
	}
	src := ec.prog.Sources[ec.file.Name]
	text := name + " ..."
	if line := diag.Line(src, sp.Start.Line); sp.End.Line == sp.Start.Line && sp.End.Col <= len(line)+1 &&
		sp.End.Col-sp.Start.Col <= 60 {
		text = line[sp.Start.Col-1 : sp.End.Col-1]
	}
	hint := "Make it the Task of a step, `Durable.step ctx codec \"some-id\" (" + text + ")`: its result is " +
		"journalled, and a resumed run reads it back instead of running it again. A value computed once " +
		"from what the body already has is `Durable.stepValue ctx codec \"some-id\" (\\() -> ...)`."
	if ref.Module == "Sky.Core.Time" && ref.Name == "sleep" {
		hint = "Use `Durable.sleep ctx ms`: a durable sleep is journalled, survives a restart and does not " +
			"hold a worker."
	}
	ec.errs = append(ec.errs, diag.Diagnostic{
		Title: "EFFECT BETWEEN STEPS", File: ec.file.Name, Start: diagPos(sp.Start), End: diagPos(sp.End),
		Message: "The workflow `" + ec.workflow + "` runs `" + name + "` outside a durable step:",
		Detail: "A workflow body re-runs from the top every time its run resumes (after a crash, a sleep or a " +
			"signal), so `" + name + "` would run again each time, and a value it returns could differ " +
			"from the one the journal was built on.",
		Hint:       hint,
		SourceLine: diag.Line(src, sp.Start.Line),
	})
}
