package ui

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// The run page's timeline draws a run on one time axis, as inline SVG the
// server renders (no script): a bar per journalled step, from the entry
// before it (or the claim that started its attempt) to its own entry; a
// span per suspension of the history, from the suspension to the event
// that ended it (the wake's claim, a cancel); a mark per other history
// event (claims, reclaims, failures, releases, retries); a bar per child
// the page lists, linking to its page. Each element's <title> gives its
// exact times; a step or wait links to its journal row, a mark to its
// history row.

// maxBars is how many step bars the timeline draws; a longer journal is
// drawn up to there, and the page says how many were left out.
const maxBars = 200

// timeline is the drawing, in percents of the width (so the text of the
// axis is not stretched) and pixels of the height.
type timeline struct {
	Span   string // the axis's length, exactly
	Origin time.Time
	Ticks  []tick
	Steps  []mark
	Waits  []mark
	Marks  []mark
	Kids   []mark
	// Undrawn is how many step bars maxBars left out.
	Undrawn int
	Height  int
}

type tick struct{ X, Label string }

// mark is one drawn element: a bar, a span or a mark.
type mark struct {
	X, W       string
	Y          int
	Kind, Href string
	Title      string
}

// The lanes' tops, in pixels.
const (
	laneSteps = 22
	laneWaits = 46
	laneMarks = 70
	laneKids  = 94
	laneH     = 16
	kidStep   = 14
)

// The history's event kinds the timeline draws differently (store.EventClaimed,
// …; runtime/durable does not re-export them).
const (
	evClaimed   durable.EventKind = "claimed"
	evReclaimed durable.EventKind = "reclaimed"
	evSuspended durable.EventKind = "suspended"
)

// ended reports whether a run in status s has its last update as its end
// (a dead run too: only an operator's retry wakes it).
func ended(s durable.Status) bool {
	return s == durable.StatusDone || s == durable.StatusDead || s == durable.StatusCancelled || s == durable.StatusTimedOut
}

// tlHref makes the address of the i-th journal row, on its page.
type tlHref func(i int) string

// newTimeline draws run with its whole journal and history, and the
// children the page lists; end is the axis's right edge for a run not
// finished (now).
func newTimeline(run durable.Run, journal []durable.JournalEntry, history []durable.HistoryEvent, kids []durable.Run, now time.Time, entryHref tlHref) timeline {
	finished := ended(run.Status)
	origin, end := run.CreatedAt, now
	if finished {
		end = run.UpdatedAt
	}
	widen := func(t time.Time) {
		if t.IsZero() {
			return
		}
		if t.Before(origin) {
			origin = t
		}
		if t.After(end) {
			end = t
		}
	}
	for _, e := range journal {
		widen(e.CreatedAt)
	}
	for _, e := range history {
		widen(e.At)
	}
	for _, k := range kids {
		widen(k.CreatedAt)
	}
	span := max(end.Sub(origin), time.Millisecond)
	x := func(t time.Time) float64 { return 10 + 89*float64(t.Sub(origin))/float64(span) }
	pct := func(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) + "%" }
	bar := func(from, to time.Time, y int, kind, href, title string) mark {
		return mark{X: pct(x(from)), W: pct(max(x(to)-x(from), 0.2)), Y: y, Kind: kind, Href: href, Title: title}
	}
	tl := timeline{Span: view.Gap(span), Origin: origin, Height: laneKids + len(kids)*kidStep + 6}
	every := tickEvery(span)
	for d, n := time.Duration(0), 0; d <= span && n <= 20; d, n = d+every, n+1 {
		tl.Ticks = append(tl.Ticks, tick{X: pct(x(origin.Add(d))), Label: "+" + axisLabel(d)})
	}

	// Steps: from the later of the previous entry and the last claim
	// before the entry, to the entry.
	start, ev := run.CreatedAt, 0
	for i, e := range journal {
		for ; ev < len(history) && !history[ev].At.After(e.CreatedAt); ev++ {
			if k := history[ev].Kind; (k == evClaimed || k == evReclaimed) && history[ev].At.After(start) {
				start = history[ev].At
			}
		}
		if e.Kind == durable.KindStep || e.Kind == durable.KindError {
			if len(tl.Steps) == maxBars {
				tl.Undrawn++
			} else {
				from := start
				if from.After(e.CreatedAt) {
					from = e.CreatedAt // a forked run's copied entries predate it
				}
				tl.Steps = append(tl.Steps, bar(from, e.CreatedAt, laneSteps, string(e.Kind), entryHref(i),
					fmt.Sprintf("%s %q (#%d): %s, %s → %s", e.Kind, e.StepID, e.Seq, view.Gap(e.CreatedAt.Sub(from)), view.Stamp(from), view.Stamp(e.CreatedAt))))
			}
		}
		start = e.CreatedAt
	}

	// Waits: a suspension to the next event (kept by the history's bound).
	for i, e := range history {
		if e.Kind != evSuspended {
			continue
		}
		var to time.Time
		var title string
		switch {
		case i+1 < len(history) && history[i+1].Pos == e.Pos+1:
			to = history[i+1].At
			title = fmt.Sprintf("waited on %s: %s, %s → %s (%s)", e.Detail, view.Gap(to.Sub(e.At)), view.Stamp(e.At), view.Stamp(to), history[i+1].Kind)
		case i+1 == len(history) && !finished:
			to = end
			title = fmt.Sprintf("waiting on %s for %s, since %s", e.Detail, view.Gap(to.Sub(e.At)), view.Stamp(e.At))
		case i+1 == len(history):
			to = run.UpdatedAt
			title = fmt.Sprintf("waited on %s: %s, %s → %s (run %s)", e.Detail, view.Gap(to.Sub(e.At)), view.Stamp(e.At), view.Stamp(to), run.Status)
		default:
			continue // what ended it is among the events not kept
		}
		kind, _, _ := strings.Cut(e.Detail, " ")
		tl.Waits = append(tl.Waits, bar(e.At, to, laneWaits, kind, waitHref(journal, kind, e.At, to, entryHref), title))
	}

	for _, e := range history {
		if e.Kind == evSuspended {
			continue
		}
		m := bar(e.At, e.At, laneMarks, string(e.Kind), "#h-"+strconv.FormatInt(e.Pos, 10), view.OneLine(view.EventText(e))+" at "+view.Stamp(e.At))
		m.W = ""
		tl.Marks = append(tl.Marks, m)
	}

	for i, k := range kids {
		to := end
		if ended(k.Status) {
			to = k.UpdatedAt
		}
		tl.Kids = append(tl.Kids, bar(k.CreatedAt, to, laneKids+i*kidStep, string(k.Status), "/runs/"+url.PathEscape(k.ID),
			fmt.Sprintf("child %s (%s) %s: %s, %s → %s", k.ID, k.Workflow, k.Status, view.Gap(to.Sub(k.CreatedAt)), view.Stamp(k.CreatedAt), view.Stamp(to))))
	}
	return tl
}

// waitHref links a wait to the journal entry that records it: a signal
// wait to the signal (or time-out) consumed nearest its end, a sleep to
// the sleep entry nearest its start; "" for none.
func waitHref(journal []durable.JournalEntry, kind string, from, to time.Time, entryHref tlHref) string {
	want, at := []durable.EntryKind{durable.KindSignal, durable.KindTimeout}, to
	if kind == "sleep" {
		want, at = []durable.EntryKind{durable.KindSleep, durable.KindDeadline}, from
	} else if kind != "signal" {
		return ""
	}
	best, bestD := -1, time.Duration(0)
	for i, e := range journal {
		if e.Kind != want[0] && e.Kind != want[1] {
			continue
		}
		d := e.CreatedAt.Sub(at).Abs()
		if best < 0 || d < bestD {
			best, bestD = i, d
		}
	}
	if best < 0 {
		return ""
	}
	return entryHref(best)
}

// tickSteps are the axis's possible tick intervals.
var tickSteps = func() []time.Duration {
	var out []time.Duration
	for _, unit := range []time.Duration{time.Millisecond, time.Second, time.Minute, time.Hour} {
		for _, n := range []time.Duration{1, 2, 5, 10, 15, 30} {
			if unit == time.Hour && n > 12 || unit == time.Millisecond && n > 10 {
				break
			}
			out = append(out, n*unit)
		}
		if unit == time.Millisecond {
			out = append(out, 20*unit, 50*unit, 100*unit, 200*unit, 500*unit)
		}
	}
	for _, days := range []time.Duration{1, 2, 7, 14, 30, 90, 365} {
		out = append(out, days*24*time.Hour)
	}
	return out
}()

// tickEvery is the smallest tick interval that puts at most 8 ticks on an
// axis of length span.
func tickEvery(span time.Duration) time.Duration {
	for _, d := range tickSteps {
		if span/d <= 8 {
			return d
		}
	}
	return tickSteps[len(tickSteps)-1]
}

// axisLabel writes a tick's offset in its largest whole unit: 0, 250ms,
// 1.5s, 90m, 12h, 7d.
func axisLabel(d time.Duration) string {
	day := 24 * time.Hour
	switch {
	case d == 0:
		return "0"
	case d%day == 0:
		return fmt.Sprintf("%dd", d/day)
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}
