package store

import (
	"context"
	"fmt"
	"time"
)

// A run's history is what happened to it, one Event a row in
// _sky_durable_history (PostgreSQL 0013, SQLite 0011), written by the very
// statement that makes the change (a CTE on PostgreSQL, a trigger on
// SQLite), so recording costs no statement and no round trip. The run row
// counts its events (history_count); event n is stored at position n and,
// once a run has more than HistoryFirst+HistoryLast events, writing event n
// deletes event n-HistoryLast: a run keeps its first HistoryFirst and its
// last HistoryLast events. The first claim of a run is not recorded (every
// run has one; the worker of attempt 1 is the actor of the next event);
// every later claim is.

// The bound on a run's history: its first HistoryFirst and last
// HistoryLast events are kept.
const (
	HistoryFirst = 20
	HistoryLast  = 80
)

// EventKind says what happened to a run.
type EventKind string

// The event kinds.
const (
	// EventClaimed is a claim of attempt 2 or later, or of a run that
	// suspended before (the first claim of a run is not recorded).
	EventClaimed EventKind = "claimed"
	// EventReclaimed is a claim of a run whose previous lease was not
	// released (its worker crashed or stalled); Detail names that worker.
	EventReclaimed EventKind = "reclaimed"
	// EventSuspended is a run parked on a sleep, a signal or children.
	EventSuspended EventKind = "suspended"
	// EventFailed is a failed attempt, retried after backoff; EventDead
	// one that ended the run dead. Detail is the error, Step the step.
	EventFailed EventKind = "failed"
	EventDead   EventKind = "dead"
	// EventDone is a run's completion.
	EventDone EventKind = "done"
	// EventReleased is a run given back mid-attempt: by its stopping
	// worker, or by an operator who knows its worker is dead.
	EventReleased EventKind = "released"
	// EventTimedOut is a run ended by its deadline.
	EventTimedOut EventKind = "timed_out"
	// The operator's actions.
	EventRetried        EventKind = "retried"
	EventCancelled      EventKind = "cancelled"
	EventSignalReplaced EventKind = "signal_replaced"
	EventForked         EventKind = "forked"
	EventRewound        EventKind = "rewound"
)

// Event is one recorded event of a run's history.
type Event struct {
	// Pos is the event's number in the run's history, from 1; a gap
	// between HistoryFirst and the next kept event says how many the
	// bound dropped.
	Pos  int64
	At   time.Time
	Kind EventKind
	// Actor is the worker (its id) for a worker's event, the operator
	// (WithActor) for an operator's, "deadline" for a time-out.
	Actor string
	// Attempt is the run's attempt count when the event happened.
	Attempt int
	// Detail says more: what a suspension waits for, an error, the
	// worker a reclaim took the run from, a signal's name.
	Detail string
	// Step is the step a failed attempt stopped at ("" for none).
	Step string
}

// Historian reads a run's history.
type Historian interface {
	// ReadHistory reads runID's recorded events in order (empty for a run
	// with none, or no run).
	ReadHistory(ctx context.Context, runID string) ([]Event, error)
}

// The actors of events no operator caused.
const (
	// ActorDeadline is the actor of a time-out.
	ActorDeadline = "deadline"
	// ActorAPI is the operator when the Go API's caller named none.
	ActorAPI = "api"
)

type actorKey struct{}

// WithActor returns ctx naming the operator of the actions taken with it
// (retry, cancel, release, signal replace, fork, rewind), recorded in the
// runs' histories: "user@host via sky durable", "dashboard 10.0.0.5:5123".
func WithActor(ctx context.Context, actor string) context.Context {
	return context.WithValue(ctx, actorKey{}, actor)
}

// ActorOf is the operator WithActor put in ctx, ActorAPI when none.
func ActorOf(ctx context.Context) string {
	if a, ok := ctx.Value(actorKey{}).(string); ok && a != "" {
		return a
	}
	return ActorAPI
}

// SuspendDetail is the Detail of a suspension on a sleep (wakeAt, zero:
// none) or a signal (name, "": none).
func SuspendDetail(wakeAt time.Time, signal string) string {
	switch {
	case signal != "" && !wakeAt.IsZero():
		return fmt.Sprintf("signal %q or until %s", signal, wakeAt.UTC().Format(time.RFC3339Nano))
	case signal != "":
		return fmt.Sprintf("signal %q", signal)
	case !wakeAt.IsZero():
		return "sleep until " + wakeAt.UTC().Format(time.RFC3339Nano)
	}
	return "sleep forever"
}

// Detail is the Detail of a suspension on w.
func (w ChildWait) Detail() string {
	if w.Group != "" {
		return fmt.Sprintf("children of group %q", w.Group)
	}
	return fmt.Sprintf("child %q", w.ChildID)
}
