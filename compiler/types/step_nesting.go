package types

import (
	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The nesting rule: the Task given to a step (`step`'s Task, `transaction`'s
// function: every parameter of a durable operation that is an effect) runs
// as one effect whose result is journalled once, so no durable operation may
// run inside it — not written there, nor in a helper of the program's own
// that it calls. The rule holds wherever a step is written, in a workflow
// body or in a helper; a Task given to a helper of the program's own that
// makes it a step's (`audited ctx id task = Durable.step ctx codec id task`)
// is checked where the helper is called.

// stepOf is the step whose Task is checked, for the message: the operation
// as written and its literal id, or the helper that runs the Task in a step.
type stepOf struct {
	op, id, helper string
}

// nestedOperations checks the effects given to e, when e is a durable
// operation or a call to a helper that runs an argument in a step.
func (ec *effectChecker) nestedOperations(f *syntax.File, e syntax.Expr) {
	if outer, ok := ec.info.asDurableOp(e); ok {
		step := stepOf{op: writtenName(outer.head)}
		if _, lit, ok := outer.journalID(); ok {
			step.id = lit.Value
		}
		for _, a := range outer.effectArgs() {
			ec.insideStep(f, step, a)
		}
		return
	}
	if _, isPipe := e.(*syntax.BinOp); isPipe {
		return // the call is also seen without its pipes
	}
	head, args, _ := call(e)
	if v, ok := head.(*syntax.Var); ok {
		for _, i := range ec.helpers.stepParams(ec.info.Refs[v]) {
			if i < len(args) {
				ec.insideStep(f, stepOf{helper: writtenName(v)}, args[i])
			}
		}
	}
}

// insideStep reports every durable operation e, a part of outer's effect,
// runs: called there, or reached through a helper.
func (ec *effectChecker) insideStep(f *syntax.File, outer stepOf, e syntax.Expr) {
	if _, registers := ec.info.asRegistration(e); registers {
		return // the body it registers is not run here
	}
	if inner, ok := ec.info.asDurableOp(e); ok {
		ec.reportNested(f, outer, effectSite{file: f.Name, span: inner.head.Span, name: writtenName(inner.head)}, e)
		return
	}
	if _, isPipe := e.(*syntax.BinOp); !isPipe {
		// a helper of the program's own, called (`pause ctx`) or named
		if head, _, ok := call(e); ok {
			if v, isVar := head.(*syntax.Var); isVar {
				if reached := ec.helpers.operation(ec.info.Refs[v]); reached != nil {
					ec.reportNested(f, outer, effectSite{file: f.Name, span: v.Span, name: writtenName(v), via: reached}, e)
					return
				}
			}
		}
	}
	for _, x := range subExprs(e) {
		ec.insideStep(f, outer, x)
	}
}

// reportNested gives the DURABLE OPERATION INSIDE A STEP error for s, a
// durable operation (or a helper reaching one) inside the effect of outer,
// run by the expression e.
func (ec *effectChecker) reportNested(f *syntax.File, outer stepOf, s effectSite, e syntax.Expr) {
	if !ec.claim(s.file, s.span) {
		return
	}
	step, id := "`"+outer.op+"`", "id"
	if outer.id != "" {
		step += " \"" + outer.id + "\""
		id = outer.id
	}
	fix := outer.op + " ctx codec \"" + id + "\" (...)"
	if outer.helper != "" {
		step = "the step in `" + outer.helper + "`"
		fix = outer.helper + " ..."
	}
	op, why := operationName(&s), ""
	if s.via != nil {
		why = chain(&s) + ".\n"
	}
	why += "A step's Task runs as one effect and only its result is journalled. A durable operation " +
		"inside it would be journalled in the middle of another step's effect, and a sleep or signal wait " +
		"cannot suspend the run from there: the run fails when it gets there (\"started while step ... was " +
		"still running\")."
	src := ec.prog.Sources[f.Name]
	ec.errs = append(ec.errs, diag.Diagnostic{
		Title: "DURABLE OPERATION INSIDE A STEP", File: s.file, Start: diagPos(s.span.Start), End: diagPos(s.span.End),
		Message: "The Task of " + step + " runs the durable operation " + op + ":",
		Detail:  why,
		Hint: "Take it out of the step's Task and run it after the step: `" + fix +
			" |> Task.andThen (\\result -> " + ec.snippet(f.Name, e.Range(), s.name+" ...") +
			")`. The Task of a step holds only the effect itself (a query, a call to a service).",
		SourceLine: diag.Line(src, s.span.Start.Line),
	})
}
