package ui

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
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

// listQuery is the runs list's filters, as the URL carries them: Prefix
// (q) an id prefix, Search (search) a text of the id, input, output or last
// error (the engine's search, what sky durable ls --search finds).
type listQuery struct {
	Status, Workflow, Prefix, Parent, Search string
	Before                                   *durable.Cursor
}

func (q listQuery) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"status": q.Status, "workflow": q.Workflow, "q": q.Prefix, "parent": q.Parent, "search": q.Search} {
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
		Parent: strings.TrimSpace(form.Get("parent")), Search: strings.TrimSpace(form.Get("search"))}
	if b := form.Get("before"); b != "" {
		var err error
		if q.Before, err = decodeCursor(b); err != nil {
			s.fail(w, err)
			return
		}
	}
	// One more than a page tells whether there is a next one.
	runs, err := s.e.ListRuns(r.Context(), durable.ListFilter{Status: durable.Status(q.Status), Workflow: q.Workflow,
		IDPrefix: q.Prefix, Parent: q.Parent, Search: q.Search, Before: q.Before, Limit: PageSize + 1})
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
		out[i] = eventView{HistoryEvent: e, Text: view.OneLine(view.EventText(e))}
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
	form := r.URL.Query()
	run, journal, err := s.e.Describe(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	// The journal and the mailbox are read whole (the engine has no
	// ranged read of them) and shown a page at a time.
	signals, err := s.e.Signals(r.Context(), id)
	if err != nil {
		s.fail(w, err)
		return
	}
	jp, err := pageParam(form, "journal_page", len(journal))
	if err != nil {
		s.fail(w, err)
		return
	}
	mp, err := pageParam(form, "mailbox_page", len(signals))
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
	here := func(journalPage, mailboxPage int, anchor string) string {
		v := url.Values{}
		if journalPage > 1 {
			v.Set("journal_page", strconv.Itoa(journalPage))
		}
		if mailboxPage > 1 {
			v.Set("mailbox_page", strconv.Itoa(mailboxPage))
		}
		u := "/runs/" + url.PathEscape(id)
		if len(v) > 0 {
			u += "?" + v.Encode()
		}
		return u + anchor
	}
	var entries []entryView
	prev := run.CreatedAt
	for i, e := range journal {
		if i >= jp.From-1 && i < jp.To {
			entries = append(entries, entryView{JournalEntry: e, Gap: "+" + view.Gap(e.CreatedAt.Sub(prev)), Detail: entryDetail(e)})
		}
		prev = e.CreatedAt
	}
	entryHref := func(i int) string { return here(i/RowsPerPage+1, mp.Page, "#j-"+strconv.Itoa(journal[i].Seq)) }
	jp.links(func(n int) string { return here(n, mp.Page, "#journal-section") })
	mp.links(func(n int) string { return here(jp.Page, n, "#mailbox-section") })
	now := s.opts.Now()
	s.render(w, http.StatusOK, "run", "Run "+run.ID, map[string]any{
		"Run": run, "Held": held, "Journal": entries, "JournalPage": jp, "Mailbox": signals, "Signals": signals[mp.From-1 : mp.To],
		"MailboxPage": mp, "Children": children, "Now": now, "Notice": form.Get("done"),
		"Actions": actionsFor(run.Status), "History": historyView(history), "FailedStep": view.FailedStep(run, history),
		"Timeline": newTimeline(run, journal, history, children.Runs, now, entryHref),
	})
}

// RowsPerPage is how many journal entries, signals or orphan signals one
// page shows.
const RowsPerPage = 50

// pager is one page of a list of Total rows: rows From to To (from 1;
// From > To when the list is empty), and the addresses of the others.
type pager struct {
	Page, Pages, Total, From, To int
	First, Prev, Next, Last      string
}

// pageParam reads the page number param of form (default 1) for a list of
// total rows; a page past the last is the last (a list that shrank).
func pageParam(form url.Values, param string, total int) (pager, error) {
	p := pager{Page: 1, Pages: max(1, (total+RowsPerPage-1)/RowsPerPage), Total: total}
	if text := form.Get(param); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 {
			return p, task.Errorf(task.InvalidInput, "%s %q is not a page number; hint: 1 or more, as the page's links give", param, text)
		}
		p.Page = min(n, p.Pages)
	}
	p.From, p.To = (p.Page-1)*RowsPerPage+1, min(p.Page*RowsPerPage, total)
	return p, nil
}

// links sets the addresses of the first, previous, next and last pages
// ("" for the page itself or none).
func (p *pager) links(at func(page int) string) {
	if p.Page > 1 {
		p.First, p.Prev = at(1), at(p.Page-1)
	}
	if p.Page < p.Pages {
		p.Next, p.Last = at(p.Page+1), at(p.Pages)
	}
}

// maxOrphanPages bounds the orphan signals page: each page reads the
// signals before it too (the store lists the oldest up to a limit).
const maxOrphanPages = 20

func (s *Server) orphans(w http.ResponseWriter, r *http.Request) {
	form := r.URL.Query()
	page := 1
	if text := form.Get("page"); text != "" {
		n, err := strconv.Atoi(text)
		if err != nil || n < 1 || n > maxOrphanPages {
			s.fail(w, task.Errorf(task.InvalidInput, "page %q is not a page of orphan signals; hint: 1 to %d here; `sky durable signals --orphans --limit N` lists more", text, maxOrphanPages))
			return
		}
		page = n
	}
	// One more than the pages up to this one tells whether there is a next.
	found, err := s.e.OrphanSignals(r.Context(), page*RowsPerPage+1)
	if err != nil {
		s.fail(w, err)
		return
	}
	p := pager{Page: page, From: (page-1)*RowsPerPage + 1, To: min(page*RowsPerPage, len(found))}
	at := func(n int) string {
		if n == 1 {
			return "/orphans"
		}
		return "/orphans?page=" + strconv.Itoa(n)
	}
	if page > 1 {
		p.First, p.Prev = at(1), at(page-1)
	}
	more := len(found) > page*RowsPerPage
	if more && page < maxOrphanPages {
		p.Next = at(page + 1)
	}
	var rows []durable.OrphanSignal
	if p.From <= p.To {
		rows = found[p.From-1 : p.To]
	}
	s.render(w, http.StatusOK, "orphans", "Orphan signals", map[string]any{
		"Orphans": rows, "Page": p, "More": more, "Now": s.opts.Now(), "Notice": form.Get("done"),
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
	var outcome durable.SignalOutcome
	switch action {
	case "retry":
		err = s.e.Retry(ctx, id)
		done = fmt.Sprintf("run %s is due again (its journal is kept)", id)
	case "cancel":
		err = s.e.Cancel(ctx, id)
		done = fmt.Sprintf("run %s cancelled", id)
	case "signal":
		name, payload := strings.TrimSpace(r.PostFormValue("name")), r.PostFormValue("payload")
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
	back := "/runs/" + url.PathEscape(id)
	if outcome == durable.SignalNoRunYet {
		// No run has this id, so its page would be a 404; the signal is
		// listed among the orphan signals until a run takes it.
		back = "/orphans"
	}
	http.Redirect(w, r, back+"?done="+url.QueryEscape(done), http.StatusSeeOther)
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
	"lease":  view.LeaseExpiry,
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
