package types

import (
	"fmt"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// The messages of the workflow rules: each names the workflow and the
// offending call, shows its line, says why it breaks a resumed run and
// gives the exact fix.

// site is the effect reached at the call e (whose head is head, resolving to
// ref) of the code being walked; inner is what a helper reaches.
func (ec *effectChecker) site(e syntax.Expr, head *syntax.Var, ref Ref, inner *effectSite) effectSite {
	sp := e.Range()
	if b, ok := e.(*syntax.BinOp); ok {
		// `x |> Db.exec ...`: point at the call, not at what is piped into it
		if b.Op == "|>" {
			sp = b.R.Range()
		} else {
			sp = b.L.Range()
		}
	}
	s := effectSite{file: ec.file.Name, span: sp, name: writtenName(head), ref: ref, via: inner}
	if inner != nil {
		s.ref = inner.ref
	}
	return s
}

// hit reports the effect s, or keeps it when the walk only collects.
func (ec *effectChecker) hit(s effectSite) {
	if ec.collect {
		if ec.first == nil {
			ec.first = &s
		}
		return
	}
	ec.report(s)
}

// claim records that a diagnostic is given at the span of file, and reports
// whether none was before.
func (ec *effectChecker) claim(file string, sp syntax.Span) bool {
	k := siteKey{file, sp}
	if ec.seen[k] {
		return false
	}
	ec.seen[k] = true
	return true
}

// snippet is the source text of sp when it fits on its line and is short,
// else the fallback.
func (ec *effectChecker) snippet(file string, sp syntax.Span, fallback string) string {
	line := diag.Line(ec.prog.Sources[file], sp.Start.Line)
	if sp.End.Line == sp.Start.Line && sp.End.Col <= len(line)+1 && sp.End.Col-sp.Start.Col <= 60 {
		return line[sp.Start.Col-1 : sp.End.Col-1]
	}
	return fallback
}

// chain says what a helper call reaches: "`chargeCard` runs `Db.exec`
// (Payments.sky:12:5)", through every helper on the way.
func chain(s *effectSite) string {
	out := ""
	for ; s.via != nil; s = s.via {
		if out != "" {
			out += ", which"
		} else {
			out = "`" + s.name + "`"
		}
		out += fmt.Sprintf(" runs `%s` (%s:%d:%d)", s.via.name, s.via.file, s.via.span.Start.Line, s.via.span.Start.Col)
	}
	return out
}

// report gives the EFFECT BETWEEN STEPS error for s.
func (ec *effectChecker) report(s effectSite) {
	if !ec.claim(s.file, s.span) {
		return
	}
	text := ec.snippet(s.file, s.span, s.name+" ...")
	why := "A workflow body re-runs from the top every time its run resumes (after a crash, a sleep or a " +
		"signal), so `" + s.name + "` would run again each time, and a value it returns could differ " +
		"from the one the journal was built on."
	if s.via != nil {
		why = chain(&s) + ".\n" + why
	}
	hint := "Make it the Task of a step, `Durable.step ctx codec \"some-id\" (" + text + ")`: its result is " +
		"journalled, and a resumed run reads it back instead of running it again. A value computed once " +
		"from what the body already has is `Durable.stepValue ctx codec \"some-id\" (\\() -> ...)`."
	if s.via == nil && s.ref.Module == "Sky.Core.Time" && s.ref.Name == "sleep" {
		hint = "Use `Durable.sleep ctx ms`: a durable sleep is journalled, survives a restart and does not " +
			"hold a worker."
	}
	ec.errs = append(ec.errs, diag.Diagnostic{
		Title: "EFFECT BETWEEN STEPS", File: s.file, Start: diagPos(s.span.Start), End: diagPos(s.span.End),
		Message:    "The workflow `" + ec.workflow + "` runs `" + s.name + "` outside a durable step:",
		Detail:     why,
		Hint:       hint,
		SourceLine: diag.Line(ec.prog.Sources[s.file], s.span.Start.Line),
	})
}
