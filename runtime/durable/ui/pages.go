package ui

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// PageSize is how many runs one page of the list shows.
const PageSize = 50

func (s *Server) overview(w http.ResponseWriter, r *http.Request) {
	st, err := s.e.Stats(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	type row struct {
		Workflow string
		Counts   []int // in durable.AllStatuses order
		Total    int
	}
	var rows []row
	totals := make([]int, len(durable.AllStatuses))
	for _, c := range st.Counts {
		if len(rows) == 0 || rows[len(rows)-1].Workflow != c.Workflow {
			rows = append(rows, row{Workflow: c.Workflow, Counts: make([]int, len(durable.AllStatuses))})
		}
		i := slices.Index(durable.AllStatuses, c.Status)
		rows[len(rows)-1].Counts[i] += c.N
		rows[len(rows)-1].Total += c.N
		totals[i] += c.N
	}
	s.render(w, http.StatusOK, "overview", "Overview", map[string]any{
		"Stats": st, "Rows": rows, "Totals": totals, "Statuses": durable.AllStatuses,
		"Chart": newChart(st.Started, st.Finished), "Now": st.Now,
	})
}

// listQuery is the runs list's filters, as the URL carries them.
type listQuery struct {
	Status, Workflow, Prefix, Parent string
	Before                           *durable.Cursor
}

func (q listQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "workflow": q.Workflow, "q": q.Prefix, "parent": q.Parent} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// encodeCursor makes a page position an opaque URL value.
func encodeCursor(c *durable.Cursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt.UTC().Format(time.RFC3339Nano) + " " + c.ID))
}

func decodeCursor(text string) (*durable.Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(text)
	at, id, ok := strings.Cut(string(b), " ")
	t, terr := time.Parse(time.RFC3339Nano, at)
	if err != nil || !ok || terr != nil {
		return nil, task.Errorf(task.InvalidInput, "the page position %q is not one this dashboard made; hint: start from the first page", text)
	}
	return &durable.Cursor{CreatedAt: t, ID: id}, nil
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	form := r.URL.Query()
	q := listQuery{Status: form.Get("status"), Workflow: strings.TrimSpace(form.Get("workflow")), Prefix: strings.TrimSpace(form.Get("q")),
		Parent: strings.TrimSpace(form.Get("parent"))}
	if b := form.Get("before"); b != "" {
		var err error
		if q.Before, err = decodeCursor(b); err != nil {
			s.fail(w, err)
			return
		}
	}
	// One more than a page tells whether there is a next one.
	runs, err := s.e.ListRuns(r.Context(), durable.ListFilter{Status: durable.Status(q.Status), Workflow: q.Workflow,
		IDPrefix: q.Prefix, Parent: q.Parent, Before: q.Before, Limit: PageSize + 1})
	if err != nil {
		s.fail(w, err)
		return
	}
	var next string
	if len(runs) > PageSize {
		runs = runs[:PageSize]
		v := q.values()
		v.Set("before", encodeCursor(durable.CursorOf(runs[len(runs)-1])))
		next = "/runs?" + v.Encode()
	}
	held, err := s.e.HeldBy(r.Context(), runs)
	if err != nil {
		s.fail(w, err)
		return
	}
	var first string
	if q.Before != nil {
		first = "/runs?" + q.values().Encode()
	}
	s.render(w, http.StatusOK, "runs", "Runs", map[string]any{
		"Runs": runs, "Held": held, "Query": q, "Statuses": durable.AllStatuses, "Next": next, "First": first, "Now": s.opts.Now(),
		"Bulk": bulkLinks(q), "Notice": form.Get("done"),
	})
}

// eventView is one event of the run's history: its text, and how many
// events the bound dropped before it (Gap, "" for none).
type eventView struct {
	durable.HistoryEvent
	Text, Gap string
}

// historyView renders a run's history.
func historyView(h []durable.HistoryEvent) []eventView {
	out := make([]eventView, len(h))
	for i, e := range h {
		out[i] = eventView{HistoryEvent: e, Text: view.EventText(e)}
		if i > 0 {
			out[i].Gap = view.HistoryGap(h[i-1], e)
		}
	}
	return out
}

// entryView is one journal entry on the timeline.
type entryView struct {
	durable.JournalEntry
	Gap    string
	Detail string
}

// entryDetail is what a journal entry shows under its step id: a timer's
// wake time, or its result as indented JSON.
func entryDetail(e durable.JournalEntry) string {
	switch e.Kind {
	case durable.KindSleep, durable.KindDeadline:
		return "wakes at " + view.WakeAt(e.Result)
	case durable.KindTimeout:
		return "timed out with no signal"
	default:
		return view.Pretty(e.Result, 200)
	}
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	run, journal, err := s.e.Describe(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	signals, err := s.e.Signals(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	children, err := s.children(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	held, err := s.e.HeldBy(r.Context(), append([]durable.Run{run}, children.Runs...))
	if err != nil {
		s.fail(w, err)
		return
	}
	history, err := s.e.History(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	var entries []entryView
	prev := run.CreatedAt
	for _, e := range journal {
		entries = append(entries, entryView{JournalEntry: e, Gap: "+" + view.Gap(e.CreatedAt.Sub(prev)), Detail: entryDetail(e)})
		prev = e.CreatedAt
	}
	s.render(w, http.StatusOK, "run", "Run "+run.ID, map[string]any{
		"Run": run, "Held": held, "Journal": entries, "Signals": signals, "Children": children, "Now": s.opts.Now(), "Notice": r.URL.Query().Get("done"),
		"Actions": actionsFor(run.Status), "History": historyView(history),
	})
}

// actionsFor lists the actions the state machine allows from status, for
// the buttons; the engine is still the one that decides.
func actionsFor(status durable.Status) []string {
	var out []string
	if status != durable.StatusDone && status != durable.StatusCancelled && status != durable.StatusTimedOut {
		out = append(out, "signal")
	}
	if status == durable.StatusFailed || status == durable.StatusDead {
		out = append(out, "retry")
	}
	if status == durable.StatusWaiting || status == durable.StatusRunning || status == durable.StatusFailed {
		out = append(out, "cancel")
	}
	return out
}

// actions are what the dashboard can do to a run, by URL segment.
var actions = map[string]struct {
	verb, consequence string
}{
	"retry":  {"Retry", "It becomes due now with its attempts reset; its journal is kept, so journalled steps do not run again."},
	"cancel": {"Cancel", "It ends cancelled and is never claimed again; a worker holding it stops at its next step. This cannot be undone."},
	"signal": {"Signal", "The signal waits in the run's mailbox until the run awaits it. A signal is one-shot: once one of that name was sent, another is ignored (correct an unconsumed payload with sky durable signal --replace)."},
}

func (s *Server) confirm(w http.ResponseWriter, r *http.Request) {
	s.confirmPage(w, r, http.StatusOK, "")
}

func (s *Server) confirmPage(w http.ResponseWriter, r *http.Request, status int, errText string) {
	a, ok := actions[r.PathValue("action")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	id := r.PathValue("id")
	run, _, err := s.e.Describe(r.Context(), id)
	if err != nil && r.PathValue("action") != "signal" {
		s.fail(w, err)
		return
	}
	s.render(w, status, "action", a.verb+" run "+id, map[string]any{
		"ID": id, "Run": run, "Action": r.PathValue("action"), "Verb": a.verb, "Consequence": a.consequence, "Error": errText,
		"Name": r.FormValue("name"), "Payload": r.FormValue("payload"), "Known": err == nil,
	})
}

func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	action := r.PathValue("action")
	if _, ok := actions[action]; !ok {
		http.NotFound(w, r)
		return
	}
	if s.opts.ReadOnly {
		s.fail(w, errForbidden)
		return
	}
	if err := r.ParseForm(); err != nil || !equal(r.PostFormValue("csrf"), s.opts.CSRF) {
		http.Error(w, "403 forbidden: the form's CSRF token is missing or wrong; hint: reload the page and submit it again", http.StatusForbidden)
		return
	}
	id := r.PathValue("id")
	ctx := operator(r)
	var done string
	var err error
	switch action {
	case "retry":
		err = s.e.Retry(ctx, id)
		done = fmt.Sprintf("run %s is due again (its journal is kept)", id)
	case "cancel":
		err = s.e.Cancel(ctx, id)
		done = fmt.Sprintf("run %s cancelled", id)
	case "signal":
		name, payload := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("payload")
		var outcome durable.SignalOutcome
		if name == "" {
			err = task.Errorf(task.InvalidInput, "a signal needs a name")
		} else {
			outcome, err = s.e.SignalRun(ctx, id, name, payload)
		}
		done = outcome.Message(id, name)
		if err == nil && outcome == durable.SignalNoRunYet {
			done += fmt.Sprintf("; note: no run with id %q exists yet, the signal waits in its mailbox for a run with that id", id)
		}
	}
	if err != nil {
		s.confirmPage(w, r, statusOf(err), err.Error())
		return
	}
	http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"?done="+url.QueryEscape(done), http.StatusSeeOther)
}

// chart is the overview's per-minute bar chart as SVG geometry, oldest
// minute on the left.
type chart struct {
	Bars          []bar
	Width, Height int
	Max           int
	Started, Done int
}

type bar struct {
	X, W                int
	StartedH, FinishedH int
	StartedY, FinishedY int
	Minute              string
	StartedN, FinishedN int
}

func newChart(started, finished []int) chart {
	const w, h, step = 600, 120, 10
	c := chart{Width: w, Height: h, Max: 1}
	for i := range started {
		c.Max = max(c.Max, started[i], finished[i])
		c.Started += started[i]
		c.Done += finished[i]
	}
	n := len(started)
	for i := range started {
		ago := n - 1 - i // draw oldest first
		sh, fh := started[ago]*h/c.Max, finished[ago]*h/c.Max
		c.Bars = append(c.Bars, bar{
			X: i * step, W: step/2 - 1, StartedH: sh, StartedY: h - sh, FinishedH: fh, FinishedY: h - fh,
			Minute: fmt.Sprintf("%d min ago", ago), StartedN: started[ago], FinishedN: finished[ago],
		})
	}
	return c
}

var funcs = template.FuncMap{
	"wake":   view.WakeOrHeld,
	"wakeIn": view.WakeOrHeldIn,
	"held":   view.HeldCount,
	"signalState": func(si durable.SignalInfo, run durable.Status) string {
		return view.SignalStateOf(si, run).Explained()
	},
	"ago":    view.Ago,
	"stamp":  view.Stamp,
	"short":  view.Short,
	"pretty": func(js string) string { return view.Pretty(js, 200) },
	"line":   func(s string) string { return view.Elide(view.OneLine(s), 80) },
	"since":  func(t, now time.Time) time.Duration { return now.Sub(t) },
	"path":   url.PathEscape,
	"add":    func(a, b int) int { return a + b },
	"value":  valueOf,
}
