package ui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// Time travel on the dashboard. Each journal entry of a run's page links to
// /runs/{id}/fork?step=S, a confirmation page whose button POSTs the step,
// the new id and the result to set to Engine.Fork, as `sky durable fork ID
// --from S [--as NEW] [--set S=JSON]` does; /diff?a=A&b=B compares two
// runs' journals with Engine.Diff, as `sky durable diff A B` does.

// forkStep is one entry of the fork page's step list.
type forkStep struct {
	durable.JournalEntry
	Position int // 1-based
}

func (s *Server) forkConfirm(w http.ResponseWriter, r *http.Request) {
	s.forkPage(w, r, http.StatusOK, "")
}

// forkPage renders the fork confirmation of run {id} at the form's step,
// with the form's new id and result kept, and errText (when not "") with
// status.
func (s *Server) forkPage(w http.ResponseWriter, r *http.Request, status int, errText string) {
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	id := r.PathValue("id")
	run, journal, err := s.e.Describe(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	step := r.FormValue("step")
	steps := make([]forkStep, len(journal))
	for i, en := range journal {
		steps[i] = forkStep{JournalEntry: en, Position: i + 1}
	}
	at := slices.IndexFunc(journal, func(en durable.JournalEntry) bool { return en.StepID == step })
	data := map[string]any{
		"ID": id, "Run": run, "Steps": steps, "Step": step, "Total": len(journal),
		"As": r.FormValue("as"), "Set": r.FormValue("set"), "Error": errText,
	}
	if at < 0 {
		if errText == "" {
			status = http.StatusBadRequest
			data["Error"] = fmt.Sprintf("run %q has no step %q; hint: pick one of its steps below (its run page has a \"fork from here\" link on each)", id, step)
			if len(journal) == 0 {
				data["Error"] = fmt.Sprintf("run %q has no journal entry to fork from (its journal is empty or was compacted)", id)
			}
		}
	} else {
		en := journal[at]
		data["Entry"] = en
		data["Detail"] = entryDetail(en)
		data["Kept"] = at
		data["Settable"] = en.Kind == durable.KindStep || en.Kind == durable.KindError
	}
	s.render(w, status, "fork", "Fork run "+id, data)
}

func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	if err := r.ParseForm(); err != nil || !equal(r.PostFormValue("csrf"), s.opts.CSRF) {
		http.Error(w, "403 forbidden: the form's CSRF token is missing or wrong; hint: reload the page and submit it again", http.StatusForbidden)
		return
	}
	id, step := r.PathValue("id"), r.PostFormValue("step")
	opts := durable.ForkOptions{NewID: strings.TrimSpace(r.PostFormValue("as")), Set: strings.TrimSpace(r.PostFormValue("set"))}
	newID, err := s.e.Fork(operator(r), id, step, opts)
	if err != nil {
		s.forkPage(w, r, statusOf(err), err.Error())
		return
	}
	done := fmt.Sprintf("run %s forked from %s at %s; it is due now", newID, id, step)
	if opts.Set != "" {
		done = fmt.Sprintf("run %s forked from %s at %s, with the result of %s set; it is due now", newID, id, step, step)
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(newID)+"?done="+url.QueryEscape(done), http.StatusSeeOther)
}

// value is a value on one line, elided to Short when longer; the page
// shows Full when asked (a <details> element, no script).
type value struct {
	Short, Full string
}

func valueOf(s string) value {
	s = view.Payload(s)
	return value{Short: view.Elide(view.OneLine(s), 80), Full: s}
}

// Elided reports whether Short leaves part of the value out.
func (v value) Elided() bool { return v.Short != v.Full }

// diffCounts counts a diff's positions by kind.
type diffCounts struct {
	Same, Changed, OnlyA, OnlyB int
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, b := strings.TrimSpace(q.Get("a")), strings.TrimSpace(q.Get("b"))
	data := map[string]any{"A": a, "B": b}
	if a == "" || b == "" {
		status := http.StatusOK
		if a != "" || b != "" {
			status = http.StatusBadRequest
			data["Error"] = fmt.Sprintf("a diff needs two run ids, but a is %q and b is %q; hint: /diff?a=ID&b=ID", a, b)
		}
		s.render(w, status, "diff", "Diff", data)
		return
	}
	d, err := s.e.Diff(r.Context(), a, b)
	if err != nil {
		data["Error"] = err.Error()
		s.render(w, statusOf(err), "diff", "Diff", data)
		return
	}
	var n diffCounts
	for _, en := range d.Entries {
		switch en.Kind {
		case durable.DiffSame:
			n.Same++
		case durable.DiffChanged:
			n.Changed++
		case durable.DiffOnlyA:
			n.OnlyA++
		case durable.DiffOnlyB:
			n.OnlyB++
		}
	}
	data["Diff"], data["Counts"], data["Identical"] = d, n, d.Identical()
	s.render(w, http.StatusOK, "diff", "Diff "+a+" "+b, data)
}
