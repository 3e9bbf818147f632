package ui

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"skydurable/runtime/durable"
)

// The runs list's bulk actions: with a status, workflow or parent filter on,
// the list links to /bulk/{action}?<its filters>, a confirmation page with
// the count of the runs the action would change, whose button POSTs the
// same filters to Engine.Bulk (batches of one statement each, as `sky
// durable retry --status S --workflow W --yes`).

// bulkConsequences say what each bulk action does to every run it takes.
var bulkConsequences = map[durable.BulkAction]string{
	durable.BulkRetry:   "Each becomes due now with its attempts reset; its journal is kept, so journalled steps do not run again.",
	durable.BulkCancel:  "Each ends cancelled, with its unfinished children, and is never claimed again; a worker holding one stops at its next step. This cannot be undone.",
	durable.BulkRelease: "Each is freed as if its worker were known dead: due at once, a worker resumes it from its journal. Use it only when the workers holding them are gone.",
}

// bulkLink is a bulk action's button on the runs list.
type bulkLink struct {
	Action durable.BulkAction
	Href   string
}

// bulkLinks are the buttons of the bulk actions the list's filters allow:
// none without a status, workflow or parent filter, or with an id prefix
// or a search (a bulk action cannot filter by them); with a status, the
// actions that take runs in it.
func bulkLinks(q listQuery) []bulkLink {
	if q.Status == "" && q.Workflow == "" && q.Parent == "" || q.Prefix != "" || q.Search != "" {
		return nil
	}
	var out []bulkLink
	for _, a := range []durable.BulkAction{durable.BulkRetry, durable.BulkCancel, durable.BulkRelease} {
		if q.Status == "" || slices.Contains(a.Statuses(), durable.Status(q.Status)) {
			out = append(out, bulkLink{a, "/bulk/" + string(a) + "?" + q.values().Encode()})
		}
	}
	return out
}

// bulkRequest reads a bulk action's filters from the URL or the form.
func bulkRequest(r *http.Request) (durable.BulkAction, listQuery, durable.BulkFilter, bool) {
	a := durable.BulkAction(r.PathValue("action"))
	if _, ok := bulkConsequences[a]; !ok {
		return a, listQuery{}, durable.BulkFilter{}, false
	}
	q := listQuery{Status: r.FormValue("status"), Workflow: strings.TrimSpace(r.FormValue("workflow")), Parent: strings.TrimSpace(r.FormValue("parent"))}
	f := durable.BulkFilter{Workflow: q.Workflow, Parent: q.Parent}
	if q.Status != "" {
		f.Statuses = []durable.Status{durable.Status(q.Status)}
	}
	return a, q, f, true
}

func (s *Server) bulkConfirm(w http.ResponseWriter, r *http.Request) {
	a, q, f, ok := bulkRequest(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	if q.Status == "" && q.Workflow == "" && q.Parent == "" {
		s.render(w, http.StatusBadRequest, "bulk", "Bulk "+string(a), map[string]any{"Action": a, "Query": q,
			"Error": "a bulk action needs a filter (status, workflow or parent); hint: filter the runs list first"})
		return
	}
	n, err := s.e.CountBulk(r.Context(), a, f)
	if err != nil {
		s.fail(w, err)
		return
	}
	verb := strings.ToUpper(string(a[:1])) + string(a[1:])
	runs := map[bool]string{true: "run", false: "runs"}[n == 1]
	s.render(w, http.StatusOK, "bulk", fmt.Sprintf("%s %d %s", verb, n, runs), map[string]any{
		"Action": a, "Verb": verb, "Count": n, "Runs": runs, "Batch": durable.DefaultBulkBatch, "Query": q, "Back": "/runs?" + q.values().Encode(),
		"Consequence": bulkConsequences[a], "Statuses": strings.Join(statusNames(a.Statuses()), ", "),
	})
}

func (s *Server) bulkAct(w http.ResponseWriter, r *http.Request) {
	a, q, f, ok := bulkRequest(r)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	if !equal(r.PostFormValue("csrf"), s.opts.CSRF) {
		http.Error(w, "403 forbidden: the form's CSRF token is missing or wrong; hint: reload the page and submit it again", http.StatusForbidden)
		return
	}
	if q.Status == "" && q.Workflow == "" && q.Parent == "" {
		http.Error(w, "400 bad request: a bulk action needs a filter (status, workflow or parent)", http.StatusBadRequest)
		return
	}
	res, err := s.e.Bulk(operator(r), a, f, durable.BulkOptions{})
	if err != nil {
		s.fail(w, err)
		return
	}
	v := q.values()
	v.Set("done", fmt.Sprintf("%s: %d %s changed", a, res.Changed, map[bool]string{true: "run", false: "runs"}[res.Changed == 1]))
	http.Redirect(w, r, "/runs?"+v.Encode(), http.StatusSeeOther)
}

func statusNames(statuses []durable.Status) []string {
	out := make([]string, len(statuses))
	for i, st := range statuses {
		out[i] = string(st)
	}
	return out
}
