// Package view renders durable runs for people, in words: when a run is
// due ("in 2h", "due 3m ago", "waiting for approve"), how long ago it moved,
// the time between two journal entries, payloads as indented JSON. The CLI
// (`sky durable ls/show`) and the dashboard (runtime/durable/ui) share it, so
// both say the same thing about the same run.
//
// A payload sealed with a key the reader lacks (runtime/durable/keyring)
// reads "encrypted (key k1)" (Payload, Pretty).
//
// It may import runtime/durable/store, runtime/durable/keyring and the
// standard library, never the engine, so the CLI and the dashboard share it
// without pulling in more.
package view

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"skydurable/runtime/durable/keyring"
	"skydurable/runtime/durable/store"
)

// WakeText says when a run is next due, in words. A run parked on a signal
// (or on children) shows "(timeout in 1d)" only while its due time is in
// the future, which only an awaitSignalFor's timeout sets; once due it is
// "waiting for approve, due 2s ago", which is true whether the signal
// arrived, the timeout passed or an operator woke it (WakeTextIn tells an
// arrived signal apart from the run's mailbox).
func WakeText(r store.Run, now time.Time) string { return WakeTextIn(r, nil, now) }

// WakeTextIn is WakeText for a run whose mailbox is at hand (`sky durable
// show`, the dashboard's run page): a due run whose awaited signal is
// pending says so, "approve arrived, due 2s ago".
func WakeTextIn(r store.Run, mailbox []store.SignalInfo, now time.Time) string {
	switch {
	case store.Terminal(r.Status) || r.Status == store.StatusDead:
		return "-"
	case r.Status == store.StatusRunning:
		return "running"
	case r.KeyQueued:
		return "queued behind key " + r.LimitKey + "'s turn"
	case r.WaitingSignal != "" && r.WakeAt.IsZero():
		return "waiting for " + WaitingFor(r.WaitingSignal)
	case r.WaitingSignal != "" && r.WakeAt.After(now):
		return "waiting for " + WaitingFor(r.WaitingSignal) + " (timeout " + Until(r.WakeAt, now) + ")"
	case r.WaitingSignal != "" && pendingIn(mailbox, r.WaitingSignal):
		return r.WaitingSignal + " arrived, " + Due(r.WakeAt, now)
	case r.WaitingSignal != "":
		return "waiting for " + WaitingFor(r.WaitingSignal) + ", " + Due(r.WakeAt, now)
	case r.WakeAt.IsZero():
		return "-"
	}
	return Until(r.WakeAt, now)
}

// pendingIn reports whether the mailbox holds a pending signal name.
func pendingIn(mailbox []store.SignalInfo, name string) bool {
	for _, si := range mailbox {
		if si.Name == name && !si.Delivered {
			return true
		}
	}
	return false
}

// Due renders a due time that has come: "due now", "due 2s ago".
func Due(t, now time.Time) string {
	if u := Until(t, now); u != "now" {
		return u
	}
	return "due now"
}

// SignalState is where a signal stands in its run's mailbox: the one word
// `sky durable show` (text and --json) and the dashboard use for it.
type SignalState string

// The signal states.
const (
	// SignalPending: stored and not consumed yet; the run consumes it when
	// it awaits that name (the first signal of a name wins; an operator may
	// still correct its payload with `sky durable signal --replace`).
	SignalPending SignalState = "pending"
	// SignalConsumed: an awaitSignal consumed it; its payload is in the
	// run's journal and can no longer change.
	SignalConsumed SignalState = "consumed"
	// SignalOrphan: not consumed, and its run is finished (done,
	// cancelled or timed out), so nothing ever will.
	SignalOrphan SignalState = "orphan"
)

// SignalStateOf says where si stands, given the status of its run.
func SignalStateOf(si store.SignalInfo, run store.Status) SignalState {
	switch {
	case si.Delivered:
		return SignalConsumed
	case store.Terminal(run):
		return SignalOrphan
	}
	return SignalPending
}

// Explained is the state with its meaning, for a person.
func (s SignalState) Explained() string {
	switch s {
	case SignalPending:
		return "pending (not consumed yet)"
	case SignalConsumed:
		return "consumed (its payload is in the journal)"
	case SignalOrphan:
		return "orphan (the run finished without consuming it)"
	}
	return string(s)
}

// HeldText says which limit holds a due run back: "held by concurrency",
// "held by concurrency (key k)" or "held by rate limit". Such a run is
// claimed as soon as its limit allows: it waits for the limit, not for a
// worker.
func HeldText(h store.Hold) string {
	switch h.Limit {
	case store.HoldKey:
		return "held by concurrency (key " + h.Key + ")"
	case store.HoldRate:
		return "held by rate limit"
	}
	return "held by concurrency"
}

// WakeOrHeld is HeldText for a run held names (Engine.HeldBy), else
// WakeText: the WAKE of `sky durable ls` and of the dashboard's lists.
func WakeOrHeld(r store.Run, held map[string]store.Hold, now time.Time) string {
	return WakeOrHeldIn(r, nil, held, now)
}

// WakeOrHeldIn is WakeOrHeld for a run whose mailbox is at hand (WakeTextIn):
// `sky durable show` and the dashboard's run page.
func WakeOrHeldIn(r store.Run, mailbox []store.SignalInfo, held map[string]store.Hold, now time.Time) string {
	if h, ok := held[r.ID]; ok {
		return HeldText(h)
	}
	return WakeTextIn(r, mailbox, now)
}

// LeaseExpiry says when a running run's lease ends (its WakeAt, which the
// worker's heartbeat keeps moving) and what to do once it has: the
// `expires` of `sky durable show` and of the dashboard's run page.
func LeaseExpiry(r store.Run, now time.Time) string {
	if !r.WakeAt.After(now) {
		return Stamp(r.WakeAt) + " (ended " + Short(now.Sub(r.WakeAt)) + " ago): its worker stopped renewing it, so any worker may take the run over; `sky durable release " + r.ID + "` frees it now"
	}
	return Stamp(r.WakeAt) + " (in " + Short(r.WakeAt.Sub(now)) + "): renewed by its worker's heartbeat while it lives"
}

// HeldCount says how many due runs the limits hold back (Stats.Held), for
// the overview beside the oldest due run, which does not count them.
func HeldCount(n int) string {
	switch n {
	case 0:
		return "no due run is held by a limit"
	case 1:
		return "1 due run is held by its workflow's limits (claimed as they allow)"
	}
	return fmt.Sprintf("%d due runs are held by their workflows' limits (claimed as they allow)", n)
}

// WaitingFor names what a parked run waits for: a signal, or a parent's
// children (the markers of store.ChildWait).
func WaitingFor(waitingSignal string) string {
	if id, ok := strings.CutPrefix(waitingSignal, "sky:child:"); ok {
		return "child " + id
	}
	if group, ok := strings.CutPrefix(waitingSignal, "sky:all:"); ok {
		return "children of all " + group
	}
	return waitingSignal
}

// Until renders a due time relative to now: "now", "in 2h", "due 3m ago".
// A time to come is rounded to the nearest unit Short shows, and is at
// least 1s away: a one-hour sleep just begun is "in 1h" (not "in 59m"), a
// 300 ms backoff "in 1s" (not "in 0s").
func Until(t, now time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		if -d < time.Second {
			return "now"
		}
		return "due " + Short(-d) + " ago"
	}
	return "in " + Short(nearestUnit(d))
}

// nearestUnit rounds a positive d to the nearest unit of Short (at least a
// second), picking the unit after rounding to seconds, so 59.6s is a minute.
func nearestUnit(d time.Duration) time.Duration {
	d = max(d.Round(time.Second), time.Second)
	switch {
	case d < time.Minute:
		return d
	case d < time.Hour:
		return d.Round(time.Minute)
	case d < 48*time.Hour:
		return d.Round(time.Hour)
	}
	return d.Round(24 * time.Hour)
}

// Ago renders a past time relative to now: "5s ago".
func Ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < time.Second {
		return "just now"
	}
	return Short(d) + " ago"
}

// Short renders a duration with its largest unit: 45s, 12m, 3h, 2d.
func Short(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}

// OneLine joins the lines of s with single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Elide shortens s to n runes with an ellipsis.
func Elide(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Stamp renders a time in UTC to the millisecond, or "-" for the zero time.
func Stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// Gap renders the time between two journal entries.
func Gap(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(time.Millisecond).String()
}

// WakeAt reads {"wakeAt": ms} from a timer entry.
func WakeAt(result string) string {
	var w struct {
		WakeAt int64 `json:"wakeAt"`
	}
	if json.Unmarshal([]byte(result), &w) != nil || w.WakeAt == 0 {
		return Payload(result)
	}
	return Stamp(time.UnixMilli(w.WakeAt))
}

// Payload is a stored payload as a reader shows it: js itself, or
// "encrypted (key k1)" for a value sealed with a key the reader lacks.
func Payload(js string) string {
	if id, sealed := keyring.KeyOf(js); sealed {
		return keyring.Describe(id)
	}
	return js
}

// Pretty indents JSON and keeps at most maxLines lines of it; a sealed value
// reads as Payload says.
func Pretty(js string, maxLines int) string {
	if _, sealed := keyring.KeyOf(js); sealed {
		return Payload(js)
	}
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(js), "", "  ") != nil {
		return Elide(js, 200)
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = Elide(l, 160)
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], fmt.Sprintf("… (%d more lines)", len(lines)-maxLines+1))
	}
	return strings.Join(lines, "\n")
}

// ShowChildren is how many child runs a run's page lists (`sky durable
// show`, the dashboard's run page), newest first; `sky durable ls --parent
// ID` and the dashboard's runs list filtered by parent page through all.
const ShowChildren = 20
