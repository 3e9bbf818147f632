package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"skydurable/runtime/durable"
	"skydurable/runtime/durable/view"
)

// This file renders runs for `sky durable ls` and `show`, as text for people
// and as JSON for scripts.

// newTable is the tabwriter of every `sky durable` table: columns two
// spaces apart, and no line ending in the padding of an empty last cell
// (an ls row without an error ends with its UPDATED).
func newTable(out io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&lineEndTrimmer{w: out}, 0, 0, 2, ' ', 0)
}

// lineEndTrimmer drops the spaces before each line break of what it is
// given; other spaces pass through once a non-space follows them.
type lineEndTrimmer struct {
	w      io.Writer
	spaces int
}

func (t *lineEndTrimmer) Write(p []byte) (int, error) {
	var buf []byte
	for _, b := range p {
		switch b {
		case ' ':
			t.spaces++
			continue
		case '\n':
			t.spaces = 0
		}
		for ; t.spaces > 0; t.spaces-- {
			buf = append(buf, ' ')
		}
		buf = append(buf, b)
	}
	if _, err := t.w.Write(buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// printRunTable prints one line per run; a due run a limit holds back says
// so in WAKE (held, from Engine.HeldBy).
func printRunTable(out io.Writer, runs []durable.Run, held map[string]durable.Hold, now time.Time) {
	if len(runs) == 0 {
		fmt.Fprintln(out, "no runs")
		return
	}
	tw := newTable(out)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tVERSION\tSTATUS\tATTEMPTS\tWAKE\tUPDATED\tLAST ERROR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", view.Safe(r.ID), view.Safe(r.Workflow), r.Version, r.Status, r.Attempts,
			view.Safe(view.WakeOrHeld(r, held, now)), view.Ago(r.UpdatedAt, now), view.Elide(view.Safe(r.LastError), 60))
	}
	tw.Flush()
}

// printRun prints a run, then its journal as a timeline; its mailbox tells
// an arrived signal in the wake line, and a due run a limit holds back
// (held) says so there.
func printRun(out io.Writer, r durable.Run, journal []durable.JournalEntry, mailbox []durable.SignalInfo, held map[string]durable.Hold, history []durable.HistoryEvent, now time.Time) {
	fmt.Fprintf(out, "run %s\n", view.Safe(r.ID))
	// A field is one line: a tab or line break in it (an error's text) is
	// printed escaped, as \t and \n. A block (a payload, indented JSON)
	// keeps its lines, indented under the first.
	field := func(name, v string) {
		fmt.Fprintf(out, "  %-10s %s\n", name+":", view.Safe(v))
	}
	block := func(name, v string) {
		fmt.Fprintf(out, "  %-10s %s\n", name+":", strings.ReplaceAll(view.SafeText(v), "\n", "\n"+strings.Repeat(" ", 13)))
	}
	field("workflow", fmt.Sprintf("%s (version %d)", r.Workflow, r.Version))
	field("status", string(r.Status))
	if step := view.FailedStep(r, history); step != "" {
		// A failed or dead run leads with where and why.
		field("failed at", fmt.Sprintf("step %q", step))
		field("error", r.LastError)
	}
	if r.ParentID != "" {
		field("parent", r.ParentID)
	}
	if r.ForkedFrom != "" {
		field("forked", forkedText(r))
	}
	field("attempts", fmt.Sprint(r.Attempts))
	field("wake", view.WakeOrHeldIn(r, mailbox, held, now))
	if !r.Deadline.IsZero() {
		when := view.Stamp(r.Deadline)
		if r.Status == durable.StatusWaiting || r.Status == durable.StatusRunning || r.Status == durable.StatusFailed {
			when += " (times out " + view.Until(r.Deadline, now) + ")"
		}
		field("deadline", when)
	}
	if r.Priority != 0 {
		field("priority", fmt.Sprint(r.Priority))
	}
	if r.LimitKey != "" {
		field("limit key", r.LimitKey)
	}
	if r.LastError != "" && view.FailedStep(r, history) == "" {
		field("error", r.LastError)
	}
	if !r.ClaimedAt.IsZero() && r.ClaimedBy != "" {
		field("lease", fmt.Sprintf("held by %s since %s", r.ClaimedBy, view.Stamp(r.ClaimedAt)))
	}
	if r.Status == durable.StatusRunning {
		field("expires", view.LeaseExpiry(r, now))
	}
	field("created", view.Stamp(r.CreatedAt))
	field("updated", view.Stamp(r.UpdatedAt))
	if !r.CompactedAt.IsZero() {
		field("compacted", view.Stamp(r.CompactedAt)+" (journal and signals deleted)")
	}
	block("input", view.Pretty(r.Input, 10))
	if r.Status == durable.StatusDone {
		block("output", view.Pretty(r.Output, 10))
	}
	if len(journal) == 0 {
		if r.CompactedAt.IsZero() {
			fmt.Fprintln(out, "journal: empty")
		} else {
			fmt.Fprintln(out, "journal: compacted")
		}
		return
	}
	fmt.Fprintf(out, "journal (%d %s):\n", len(journal), plural(len(journal), "entry", "entries"))
	prev := r.CreatedAt
	for _, e := range journal {
		fmt.Fprintf(out, "  %3d  %s  %-8s %s  %s\n", e.Seq, view.Stamp(e.CreatedAt), "+"+view.Gap(e.CreatedAt.Sub(prev)), e.Kind, view.Safe(e.StepID))
		prev = e.CreatedAt
		switch e.Kind {
		case durable.KindSleep, durable.KindDeadline:
			fmt.Fprintf(out, "         wakes at %s\n", view.Safe(view.WakeAt(e.Result)))
		case durable.KindTimeout:
			fmt.Fprintln(out, "         timed out with no signal")
		default:
			for _, line := range strings.Split(view.Pretty(e.Result, 12), "\n") {
				fmt.Fprintf(out, "         %s\n", view.Safe(line))
			}
		}
	}
}

// runOut is the stable JSON shape of a run for --json.
type runOut struct {
	ID            string          `json:"id"`
	Workflow      string          `json:"workflow"`
	Version       int             `json:"version"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	WakeAt        *time.Time      `json:"wake_at"`
	WaitingSignal string          `json:"waiting_signal"`
	LastError     string          `json:"last_error"`
	ClaimedBy     string          `json:"claimed_by"`
	ClaimedAt     *time.Time      `json:"claimed_at"`
	Input         json.RawMessage `json:"input"`
	Output        json.RawMessage `json:"output"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	CompactedAt   *time.Time      `json:"compacted_at"`
	// LeaseExpiresAt is when a running run's lease ends (its wake_at).
	LeaseExpiresAt *time.Time `json:"lease_expires_at"`
	DeadlineAt     *time.Time `json:"deadline_at"`
	ParentID       string     `json:"parent_id,omitempty"`
	// Priority and LimitKey (flow control) are left out when unset.
	Priority int    `json:"priority,omitempty"`
	LimitKey string `json:"limit_key,omitempty"`
	// ForkedFrom and ForkStep (sky durable fork) are left out when unset.
	ForkedFrom string `json:"forked_from,omitempty"`
	ForkStep   string `json:"fork_step,omitempty"`
	// Held is the limit that holds a due run back, left out when none.
	Held *heldOut `json:"held,omitempty"`
}

// heldOut is a Hold in JSON: limit "concurrency", "key" (with key) or
// "rate", and the words ls and show print.
type heldOut struct {
	Limit string `json:"limit"`
	Key   string `json:"key,omitempty"`
	Text  string `json:"text"`
}

func runJSON(r durable.Run, held map[string]durable.Hold) runOut {
	o := runOut{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: string(r.Status), Attempts: r.Attempts,
		WaitingSignal: r.WaitingSignal, LastError: r.LastError, ClaimedBy: r.ClaimedBy,
		Input: raw(r.Input), Output: raw(r.Output), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ParentID: r.ParentID,
		Priority: r.Priority, LimitKey: r.LimitKey, ForkedFrom: r.ForkedFrom, ForkStep: r.ForkStep}
	if !r.WakeAt.IsZero() {
		o.WakeAt = &r.WakeAt
	}
	if !r.ClaimedAt.IsZero() {
		o.ClaimedAt = &r.ClaimedAt
	}
	if !r.CompactedAt.IsZero() {
		o.CompactedAt = &r.CompactedAt
	}
	if r.Status == durable.StatusRunning && !r.WakeAt.IsZero() {
		o.LeaseExpiresAt = &r.WakeAt
	}
	if !r.Deadline.IsZero() {
		o.DeadlineAt = &r.Deadline
	}
	if h, ok := held[r.ID]; ok {
		o.Held = &heldOut{Limit: string(h.Limit), Key: h.Key, Text: view.HeldText(h)}
	}
	return o
}

func runsJSON(runs []durable.Run, held map[string]durable.Hold) []runOut {
	out := make([]runOut, len(runs))
	for i, r := range runs {
		out[i] = runJSON(r, held)
	}
	return out
}

// printSignals prints a run's mailbox: what was sent and where each signal
// stands (view.SignalState: pending, consumed or orphan).
func printSignals(out io.Writer, signals []durable.SignalInfo, run durable.Status) {
	if len(signals) == 0 {
		return
	}
	fmt.Fprintf(out, "signals (%d):\n", len(signals))
	for _, si := range signals {
		fmt.Fprintf(out, "  %s  %s  %s\n", view.Stamp(si.CreatedAt), view.Safe(si.Name), view.SignalStateOf(si, run).Explained())
		for _, line := range strings.Split(view.Pretty(si.Payload, 6), "\n") {
			fmt.Fprintf(out, "         %s\n", view.Safe(line))
		}
	}
}

// signalOut is the JSON shape of a mailbox entry; State is the same word
// the text says (view.SignalState).
type signalOut struct {
	Name      string           `json:"name"`
	Payload   json.RawMessage  `json:"payload"`
	State     view.SignalState `json:"state"`
	CreatedAt time.Time        `json:"created_at"`
}

func signalsJSON(signals []durable.SignalInfo, run durable.Status) []signalOut {
	out := make([]signalOut, len(signals))
	for i, si := range signals {
		out[i] = signalOut{Name: si.Name, Payload: raw(si.Payload), State: view.SignalStateOf(si, run), CreatedAt: si.CreatedAt}
	}
	return out
}

type entryOut struct {
	Seq       int             `json:"seq"`
	StepID    string          `json:"step_id"`
	Kind      string          `json:"kind"`
	Result    json.RawMessage `json:"result"`
	CreatedAt time.Time       `json:"created_at"`
}

func journalJSON(journal []durable.JournalEntry) []entryOut {
	out := make([]entryOut, len(journal))
	for i, e := range journal {
		out[i] = entryOut{Seq: e.Seq, StepID: e.StepID, Kind: string(e.Kind), Result: raw(e.Result), CreatedAt: e.CreatedAt}
	}
	return out
}

// raw is JSON text as a RawMessage; a sealed value is the string
// "encrypted (key k1)" (view.Payload); empty or invalid text is null.
func raw(js string) json.RawMessage {
	if shown := view.Payload(js); shown != js {
		b, _ := json.Marshal(shown)
		return b
	}
	if js == "" || !json.Valid([]byte(js)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(js)
}
