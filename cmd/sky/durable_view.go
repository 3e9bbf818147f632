package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"skydurable/runtime/durable"
)

// This file renders runs for `sky durable ls` and `show`, as text for people
// and as JSON for scripts.

// printRunTable prints one line per run.
func printRunTable(out io.Writer, runs []durable.Run, now time.Time) {
	if len(runs) == 0 {
		fmt.Fprintln(out, "no runs")
		return
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWORKFLOW\tVERSION\tSTATUS\tATTEMPTS\tWAKE\tUPDATED\tLAST ERROR")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\n", r.ID, r.Workflow, r.Version, r.Status, r.Attempts,
			wakeText(r, now), ago(r.UpdatedAt, now), elide(oneLine(r.LastError), 60))
	}
	tw.Flush()
}

// wakeText says when a run is next due, in words.
func wakeText(r durable.Run, now time.Time) string {
	switch {
	case r.Status == durable.StatusDone || r.Status == durable.StatusDead || r.Status == durable.StatusCancelled:
		return "-"
	case r.Status == durable.StatusRunning:
		return "running"
	case r.WaitingSignal != "" && r.WakeAt.IsZero():
		return "waiting for " + r.WaitingSignal
	case r.WaitingSignal != "":
		return "waiting for " + r.WaitingSignal + " (timeout " + until(r.WakeAt, now) + ")"
	case r.WakeAt.IsZero():
		return "-"
	}
	return until(r.WakeAt, now)
}

// until renders a due time relative to now: "now", "in 2h", "3m overdue".
func until(t, now time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		if -d < time.Second {
			return "now"
		}
		return "due " + short(-d) + " ago"
	}
	return "in " + short(d)
}

// ago renders a past time relative to now: "5s ago".
func ago(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < time.Second {
		return "just now"
	}
	return short(d) + " ago"
}

// short renders a duration with its largest unit: 45s, 12m, 3h, 2d.
func short(d time.Duration) string {
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

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// elide shortens s to n runes with an ellipsis.
func elide(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// printRun prints a run, then its journal as a timeline.
func printRun(out io.Writer, r durable.Run, journal []durable.JournalEntry, now time.Time) {
	fmt.Fprintf(out, "run %s\n", r.ID)
	field := func(name, v string) {
		fmt.Fprintf(out, "  %-10s %s\n", name+":", strings.ReplaceAll(v, "\n", "\n"+strings.Repeat(" ", 13)))
	}
	field("workflow", fmt.Sprintf("%s (version %d)", r.Workflow, r.Version))
	field("status", string(r.Status))
	field("attempts", fmt.Sprint(r.Attempts))
	field("wake", wakeText(r, now))
	if r.LastError != "" {
		field("error", r.LastError)
	}
	if !r.ClaimedAt.IsZero() && r.ClaimedBy != "" {
		field("lease", fmt.Sprintf("held by %s since %s", r.ClaimedBy, stamp(r.ClaimedAt)))
	}
	field("created", stamp(r.CreatedAt))
	field("updated", stamp(r.UpdatedAt))
	if !r.CompactedAt.IsZero() {
		field("compacted", stamp(r.CompactedAt)+" (journal and signals deleted)")
	}
	field("input", pretty(r.Input, 10))
	if r.Status == durable.StatusDone {
		field("output", pretty(r.Output, 10))
	}
	if len(journal) == 0 {
		if r.CompactedAt.IsZero() {
			fmt.Fprintln(out, "journal: empty")
		} else {
			fmt.Fprintln(out, "journal: compacted")
		}
		return
	}
	fmt.Fprintf(out, "journal (%d entries):\n", len(journal))
	prev := r.CreatedAt
	for _, e := range journal {
		fmt.Fprintf(out, "  %3d  %s  %-8s %s  %s\n", e.Seq, stamp(e.CreatedAt), "+"+gap(e.CreatedAt.Sub(prev)), e.Kind, e.StepID)
		prev = e.CreatedAt
		switch e.Kind {
		case durable.KindSleep, durable.KindDeadline:
			fmt.Fprintf(out, "         wakes at %s\n", wakeAt(e.Result))
		case durable.KindTimeout:
			fmt.Fprintln(out, "         timed out with no signal")
		default:
			for _, line := range strings.Split(pretty(e.Result, 12), "\n") {
				fmt.Fprintf(out, "         %s\n", line)
			}
		}
	}
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}

// gap renders the time between two journal entries.
func gap(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	return d.Round(time.Millisecond).String()
}

// wakeAt reads {"wakeAt": ms} from a timer entry.
func wakeAt(result string) string {
	var w struct {
		WakeAt int64 `json:"wakeAt"`
	}
	if json.Unmarshal([]byte(result), &w) != nil || w.WakeAt == 0 {
		return result
	}
	return stamp(time.UnixMilli(w.WakeAt))
}

// pretty indents JSON and keeps at most maxLines lines of it.
func pretty(js string, maxLines int) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(js), "", "  ") != nil {
		return elide(js, 200)
	}
	lines := strings.Split(buf.String(), "\n")
	for i, l := range lines {
		lines[i] = elide(l, 160)
	}
	if len(lines) > maxLines {
		lines = append(lines[:maxLines-1], fmt.Sprintf("… (%d more lines)", len(lines)-maxLines+1))
	}
	return strings.Join(lines, "\n")
}

// runJSON is the stable JSON shape of a run for --json.
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
}

func runJSON(r durable.Run) runOut {
	o := runOut{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Status: string(r.Status), Attempts: r.Attempts,
		WaitingSignal: r.WaitingSignal, LastError: r.LastError, ClaimedBy: r.ClaimedBy,
		Input: raw(r.Input), Output: raw(r.Output), CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if !r.WakeAt.IsZero() {
		o.WakeAt = &r.WakeAt
	}
	if !r.ClaimedAt.IsZero() {
		o.ClaimedAt = &r.ClaimedAt
	}
	if !r.CompactedAt.IsZero() {
		o.CompactedAt = &r.CompactedAt
	}
	return o
}

func runsJSON(runs []durable.Run) []runOut {
	out := make([]runOut, len(runs))
	for i, r := range runs {
		out[i] = runJSON(r)
	}
	return out
}

// printSignals prints a run's mailbox: what was sent and whether the run
// consumed it.
func printSignals(out io.Writer, signals []durable.SignalInfo) {
	if len(signals) == 0 {
		return
	}
	fmt.Fprintf(out, "signals (%d):\n", len(signals))
	for _, si := range signals {
		state := "pending (not consumed yet)"
		if si.Delivered {
			state = "received"
		}
		fmt.Fprintf(out, "  %s  %s  %s\n", stamp(si.CreatedAt), si.Name, state)
		for _, line := range strings.Split(pretty(si.Payload, 6), "\n") {
			fmt.Fprintf(out, "         %s\n", line)
		}
	}
}

type signalOut struct {
	Name      string          `json:"name"`
	Payload   json.RawMessage `json:"payload"`
	Delivered bool            `json:"delivered"`
	CreatedAt time.Time       `json:"created_at"`
}

func signalsJSON(signals []durable.SignalInfo) []signalOut {
	out := make([]signalOut, len(signals))
	for i, si := range signals {
		out[i] = signalOut{Name: si.Name, Payload: raw(si.Payload), Delivered: si.Delivered, CreatedAt: si.CreatedAt}
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

// raw is JSON text as a RawMessage; empty or invalid text is null.
func raw(js string) json.RawMessage {
	if js == "" || !json.Valid([]byte(js)) {
		return json.RawMessage("null")
	}
	return json.RawMessage(js)
}
