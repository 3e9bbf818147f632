package view

import (
	"fmt"
	"strings"

	"skydurable/runtime/durable/store"
)

// EventText says what one history event was, in words: "claimed by
// worker-2 (attempt 2)", "reclaimed by worker-2 from worker-1, whose lease
// ran out (attempt 2)", "dead by worker-2 at step "charge" (attempt 2):
// Unavailable: down", "retried by ann@box via sky durable (attempt 2)".
// The detail is kept as stored, line breaks and all: the CLI escapes them
// (Safe), the dashboard puts them on one line (OneLine).
func EventText(e store.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s by %s", e.Kind, e.Actor)
	switch e.Kind {
	case store.EventReclaimed:
		fmt.Fprintf(&b, " from %s, whose lease ran out", e.Detail)
	case store.EventReleased:
		if e.Detail != "" {
			fmt.Fprintf(&b, " from %s", e.Detail)
		}
	case store.EventForked:
		fmt.Fprintf(&b, " from %s at step %q", e.Detail, e.Step)
	case store.EventRewound:
		fmt.Fprintf(&b, " to step %q", e.Step)
	case store.EventSignalReplaced:
		fmt.Fprintf(&b, ": signal %q", e.Detail)
	case store.EventSuspended:
		fmt.Fprintf(&b, " on %s", e.Detail)
	}
	if (e.Kind == store.EventFailed || e.Kind == store.EventDead) && e.Step != "" {
		fmt.Fprintf(&b, " at step %q", e.Step)
	}
	if e.Attempt > 0 {
		fmt.Fprintf(&b, " (attempt %d)", e.Attempt)
	}
	if e.Kind == store.EventFailed || e.Kind == store.EventDead || e.Kind == store.EventTimedOut {
		fmt.Fprintf(&b, ": %s", e.Detail)
	}
	return b.String()
}

// HistoryGap says how many events the bound dropped between two kept
// ones ("" for none): "… 12 events not kept (a run keeps its first 20 and
// last 80) …".
func HistoryGap(prev, next store.Event) string {
	n := next.Pos - prev.Pos - 1
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf("… %d events not kept (a run keeps its first %d and last %d) …", n, store.HistoryFirst, store.HistoryLast)
}

// FailedStep is the step a failed or dead run last failed at, from its
// history ("" for another status, or when the history does not say: a
// failure outside a step, or a compacted run).
func FailedStep(r store.Run, history []store.Event) string {
	if r.Status != store.StatusFailed && r.Status != store.StatusDead {
		return ""
	}
	for i := len(history) - 1; i >= 0; i-- {
		if e := history[i]; e.Kind == store.EventFailed || e.Kind == store.EventDead {
			return e.Step
		}
	}
	return ""
}
