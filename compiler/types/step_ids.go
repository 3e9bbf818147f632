package types

import (
	"fmt"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The step-id rule: the journal matches each durable operation of a body to
// its entry by id, so two operations of one body with the same literal id
// (a step's id, a `sleepAs` id, a signal name, a child key) fail the run
// when it reaches the second. The walk covers the body and the helpers of
// the program's own it uses; two ids in different branches of one `if` or
// `case` never both run and are not a duplicate. Ids computed at run time
// are not checked.

// idUse is one literal journal id in a body.
type idUse struct {
	id   string
	lit  *syntax.StringLit
	file string
	// at is where the body uses it: the literal, or the call of the helper
	// of the program's own that holds it (then named by helper).
	at     effectSite
	helper string
	// path is the if/case branches on the way to it.
	path []branch
}

// branch is one arm of an if (0 then, 1 else) or a case.
type branch struct {
	node syntax.Node
	arm  int
}

// idWalk collects the literal journal ids of one body.
type idWalk struct {
	info    *Info
	helpers *helperFacts
	uses    []idUse
	active  map[*syntax.ValueDecl]bool
}

// stepIDs reports the ids the workflow body e (in file f) uses twice.
func (ec *effectChecker) stepIDs(f *syntax.File, e syntax.Expr) {
	w := &idWalk{info: ec.info, helpers: ec.helpers, active: map[*syntax.ValueDecl]bool{}}
	w.walk(f.Name, e, nil, effectSite{})
	byID := map[string][]idUse{}
	for _, u := range w.uses {
		for _, prev := range byID[u.id] {
			if !exclusive(prev.path, u.path) {
				ec.reportDuplicate(prev, u)
				break
			}
		}
		byID[u.id] = append(byID[u.id], u)
	}
}

// walk collects the ids e uses, on path; at is the call of the helper e
// is in (zero in the body itself).
func (w *idWalk) walk(file string, e syntax.Expr, path []branch, at effectSite) {
	if _, registers := w.info.asRegistration(e); registers {
		return // another workflow's body: its ids are its own
	}
	if dc, ok := w.info.asDurableOp(e); ok {
		// the effect of a step is the nesting rule's: not looked into here
		if id, lit, ok := dc.journalID(); ok {
			u := idUse{id: id, lit: lit, file: file, at: at, helper: at.name, path: path}
			if at.name == "" {
				u.at = effectSite{file: file, span: lit.Span}
			}
			w.uses = append(w.uses, u)
		}
		return
	}
	switch x := e.(type) {
	case *syntax.If:
		w.walk(file, x.Cond, path, at)
		w.walk(file, x.Then, with(path, x, 0), at)
		w.walk(file, x.Else, with(path, x, 1), at)
		return
	case *syntax.Case:
		w.walk(file, x.Subject, path, at)
		for i, br := range x.Branches {
			w.walk(file, br.Body, with(path, x, i), at)
		}
		return
	case *syntax.Var:
		ref := w.info.Refs[x]
		f, vd := w.helpers.decl(ref)
		v := w.info.Values[ref.Module][ref.Name]
		if vd == nil || w.active[vd] || v == nil || !returnsTaskType(v.Scheme.Type) {
			return
		}
		if at.name == "" {
			at = effectSite{file: file, span: x.Span, name: writtenName(x)}
		}
		w.active[vd] = true
		w.walk(f.Name, vd.Body, path, at)
		w.active[vd] = false
		return
	}
	for _, s := range subExprs(e) {
		w.walk(file, s, path, at)
	}
}

// with is path followed by one more branch.
func with(path []branch, n syntax.Node, arm int) []branch {
	return append(append([]branch(nil), path...), branch{n, arm})
}

// exclusive reports whether two paths take different arms of one if or
// case, so the code at their ends never runs in one pass of the body.
func exclusive(a, b []branch) bool {
	for _, x := range a {
		for _, y := range b {
			if x.node == y.node && x.arm != y.arm {
				return true
			}
		}
	}
	return false
}

// reportDuplicate gives the DUPLICATE STEP ID error for u, whose id prev
// used first.
func (ec *effectChecker) reportDuplicate(prev, u idUse) {
	if !ec.claim(u.at.file, u.at.span) {
		return
	}
	pos := func(file string, p syntax.Pos) string { return fmt.Sprintf("%s:%d:%d", file, p.Line, p.Col) }
	first := pos(prev.at.file, prev.at.span.Start)
	if prev.helper != "" {
		first += " (through `" + prev.helper + "`"
		if prev.lit != u.lit {
			first += ", at " + pos(prev.file, prev.lit.Start)
		}
		first += ")"
	}
	detail := "The first is at " + first + ".\nThe journal finds each step's recorded result by its " +
		"id, so the run fails when it reaches the second one, with the error: the step id " +
		fmt.Sprintf("%q", u.id) + " is used twice in one body."
	if u.helper != "" {
		detail = "Here `" + u.helper + "` uses it (" + pos(u.file, u.lit.Start) + "). " + detail
	}
	hint := "Give each step its own id, a name for what it does (\"" + u.lit.Value + "-2\" at the least)."
	message := "The workflow `" + ec.workflow + "` uses the id \"" + u.lit.Value + "\" twice:"
	switch {
	case prev.lit.Value != u.lit.Value:
		// Two operations whose journal ids meet: a step named as the
		// journal names a signal wait or a child ("signal:go").
		message = "The workflow `" + ec.workflow + "` gives two operations the journal id " + fmt.Sprintf("%q", u.id) +
			": \"" + prev.lit.Value + "\" and \"" + u.lit.Value + "\":"
		hint = "The journal names a signal wait \"signal:NAME\", a child \"child:KEY\" and its wait \"await:KEY\": " +
			"give the step an id not of those forms, a name for what it does."
	case strings.HasPrefix(u.id, "signal:"):
		hint = "A signal is delivered once: wait for it once and pass its value on, or give the second " +
			"wait a signal name of its own."
	case u.helper != "" || prev.helper != "":
		h := u.helper
		if h == "" {
			h = prev.helper
		}
		hint = "Give each step its own id. A helper used twice takes the id as an argument: `" + h +
			" ctx \"" + u.lit.Value + "-1\" ...` and `" + h + " ctx \"" + u.lit.Value + "-2\" ...`."
	}
	ec.errs = append(ec.errs, diag.Diagnostic{
		Title: "DUPLICATE STEP ID", File: u.at.file, Start: diagPos(u.at.span.Start), End: diagPos(u.at.span.End),
		Message:    message,
		Detail:     detail,
		Hint:       hint,
		SourceLine: diag.Line(ec.prog.Sources[u.at.file], u.at.span.Start.Line),
	})
}
