package types

import (
	"fmt"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The parallel rule: a workflow's journal holds its durable operations in
// the order the body runs them, and a resumed run asks for them in that
// order. Task.parallel starts its Tasks side by side, in no fixed order, so
// two of them that each run a durable operation fail the run when the
// second starts ("started while step ... was still running"). The rule
// refuses, wherever it is written, a concurrent Task combinator given two
// Tasks that each reach a durable operation (called there, or reached
// through a helper of the program's own or a let-bound value), or given a
// list built by a function that reaches one (`List.map (\i -> step) xs`
// runs it once for each element). One durable operation beside Tasks that
// are not is allowed, and so is Durable.all, the durable way to run child
// workflows side by side: it is one operation.

// taskModule is the module of the Task combinators.
const taskModule = "Sky.Core.Task"

// concurrentTasks are the Sky.Core.Task functions that run a list of Tasks
// side by side, with the index of that list among their arguments.
var concurrentTasks = map[string]int{"parallel": 0, "parallelN": 1}

// parallelOperations checks e when it calls a concurrent Task combinator;
// scopes are the let-bound values in scope of e.
func (ec *effectChecker) parallelOperations(f *syntax.File, e syntax.Expr, scopes []letScope) {
	head, args, _ := call(e)
	v, ok := head.(*syntax.Var)
	if !ok {
		return
	}
	ref := ec.info.Refs[v]
	at, concurrent := concurrentTasks[ref.Name]
	if !concurrent || ref.Kind != RefTopLevel || ref.Module != taskModule || at >= len(args) {
		return
	}
	if limit, ok := args[0].(*syntax.IntLit); ok && ref.Name == "parallelN" && limit.Value <= 1 {
		return // groups of one Task run one after another
	}
	list := args[at]
	// a list bound in a let: `let tasks = [ ... ] in Task.parallel tasks`
	for {
		lv, ok := list.(*syntax.Var)
		if !ok || ec.info.Refs[lv].Kind != RefLocal {
			break
		}
		vd, in := boundIn(scopes, lv.Name)
		if vd == nil || len(vd.Params) > 0 {
			return
		}
		list, scopes = vd.Body, in
	}
	combinator := writtenName(v)
	if lit, ok := list.(*syntax.List); ok {
		var first *effectSite
		for _, x := range lit.Elems {
			s := ec.helpers.reachedOperation(f, x, scopes)
			if s == nil {
				continue
			}
			if first != nil {
				ec.reportParallel(combinator, *s, first)
				return
			}
			first = s
		}
		return
	}
	_, built, _ := call(list)
	for _, a := range built {
		if _, isFun := unalias(ec.info.TypeOf(a)).(*Fun); !isFun {
			continue
		}
		if s := ec.helpers.reachedOperation(f, a, scopes); s != nil {
			ec.reportParallel(combinator, *s, nil)
			return
		}
	}
}

// reachedOperation is the first durable operation e runs, in the file f:
// one it calls, one a helper of the program's own reaches, or one a value
// bound in e's own lets or in scopes reaches (through that name); nil for
// none. A workflow body registered in e is not run by it.
func (h *helperFacts) reachedOperation(f *syntax.File, e syntax.Expr, scopes []letScope) *effectSite {
	var found *effectSite
	seen := map[*syntax.ValueDecl]bool{}
	var visit func(e syntax.Expr, scopes []letScope)
	visit = func(e syntax.Expr, scopes []letScope) {
		if _, registers := h.info.asRegistration(e); registers || found != nil {
			return
		}
		switch x := e.(type) {
		case *syntax.Var:
			r := h.info.Refs[x]
			site := effectSite{file: f.Name, span: x.Span, name: writtenName(x), ref: r}
			var inner *effectSite
			switch {
			case h.info.durableKindOf(r) == durableOperation:
				found = &site
				return
			case r.Kind == RefLocal:
				vd, in := boundIn(scopes, r.Name)
				if vd == nil || seen[vd] {
					return
				}
				seen[vd] = true
				visit(vd.Body, in)
				inner, found = found, nil
			default:
				inner = h.operation(r)
			}
			if inner != nil {
				site.ref, site.via = inner.ref, inner
				found = &site
			}
			return
		case *syntax.Let:
			scopes = withLet(scopes, x)
		}
		for _, s := range subExprs(e) {
			visit(s, scopes)
		}
	}
	visit(e, scopes)
	return found
}

// reportParallel gives the DURABLE OPERATIONS IN PARALLEL error for s, a
// durable operation (or a helper or let-bound value reaching one) the
// concurrent combinator runs beside the one at other, or once for each
// element of its list when other is nil.
func (ec *effectChecker) reportParallel(combinator string, s effectSite, other *effectSite) {
	if !ec.claim(s.file, s.span) {
		return
	}
	op := operationName(&s)
	message := "`" + combinator + "` runs the durable operation " + op + " side by side with another one:"
	detail := ""
	if s.via != nil {
		detail = chain(&s) + ".\n"
	}
	if other != nil {
		detail += fmt.Sprintf("The other one is `%s` at %s:%d:%d", other.name, other.file, other.span.Start.Line, other.span.Start.Col)
		if other.via != nil {
			detail += ", which runs " + operationName(other)
		}
		detail += ".\n"
	} else {
		message = "`" + combinator + "` runs the durable operation " + op + " once for each element of its list, side by side:"
	}
	detail += "A workflow's journal holds its durable operations in the order the body runs them, and a " +
		"resumed run asks for them in that order. Started side by side, they run in no fixed order: the " +
		"run fails when the second one starts while the first is still running (\"started while step ... " +
		"was still running\") and ends dead."
	ec.errs = append(ec.errs, diag.Diagnostic{
		Title: "DURABLE OPERATIONS IN PARALLEL", File: s.file, Start: diagPos(s.span.Start), End: diagPos(s.span.End),
		Message: message,
		Detail:  detail,
		Hint: "Run them one after another: give the same list to `Task.sequence` instead of `" + combinator + "`, " +
			"or chain them with `Task.andThen`. To run child workflows side by side, start them all with one durable operation, " +
			"`Durable.all ctx childWorkflow [ ( \"key-1\", input1 ), ( \"key-2\", input2 ) ]`.",
		SourceLine: diag.Line(ec.prog.Sources[s.file], s.span.Start.Line),
	})
}

// operationName is the durable operation s finally reaches, as written
// ("`Durable.step`").
func operationName(s *effectSite) string {
	for s.via != nil {
		s = s.via
	}
	return "`" + s.name + "`"
}
