package durable

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/durable/store"
)

// A run's history (store/history.go says what is recorded, and the bound)
// is written by the store in the statements that change the run; the
// engine reads it (History) and mirrors each event of an attempt as an
// OpenTelemetry span event on the attempt's span (and an operator's action
// on the caller's span, when it has one).

type (
	// HistoryEvent is one recorded event of a run's history.
	HistoryEvent = store.Event
	// EventKind says what happened to a run.
	EventKind = store.EventKind
)

// WithActor returns ctx naming the operator of the actions taken with it
// (Retry, Cancel, Release, ReplaceSignal, Fork, Rewind), as recorded in the
// runs' histories: "ann@box via sky durable", "dashboard 10.0.0.5:5123".
// Without it the actor is "api".
func WithActor(ctx context.Context, actor string) context.Context {
	return store.WithActor(ctx, actor)
}

// History reads a run's recorded events in order: the first
// store.HistoryFirst and the last store.HistoryLast of them (Pos numbers
// every event, so a gap says how many the bound dropped). A run that
// finished in the attempt that first claimed it, with no event on the way,
// stores none (its "done" is not written, to spare the commonest path a
// row): its history is that "done", read from the run row (Pos 1). It is
// empty for a compacted run; an unknown id is a NotFound error naming it.
func (e *Engine) History(ctx context.Context, runID string) ([]HistoryEvent, error) {
	h, err := e.store.ReadHistory(ctx, runID)
	if err != nil || len(h) > 0 {
		return h, err
	}
	r, err := e.ReadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	if r.Status == StatusDone && r.CompactedAt.IsZero() {
		return []HistoryEvent{{Pos: 1, At: r.UpdatedAt, Kind: store.EventDone, Actor: r.ClaimedBy, Attempt: r.Attempts}}, nil
	}
	return nil, nil
}

// The attributes of a history span event.
const (
	attrActor  = attribute.Key("durable.actor")
	attrDetail = attribute.Key("durable.detail")
)

// spanEvent adds the history event kind to the span in ctx (none: nothing),
// named "durable.<kind>", with its actor, detail and step when not empty.
func spanEvent(ctx context.Context, kind EventKind, actor, detail, step string) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attrActor.String(actor)}
	if detail != "" {
		attrs = append(attrs, attrDetail.String(detail))
	}
	if step != "" {
		attrs = append(attrs, attrStep.String(step))
	}
	span.AddEvent("durable."+string(kind), trace.WithAttributes(attrs...))
}

// operatorEvent records an operator's action on run runID as an event of
// the caller's span.
func operatorEvent(ctx context.Context, kind EventKind, runID, detail string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent("durable."+string(kind), trace.WithAttributes(
			attrRun.String(runID), attrActor.String(store.ActorOf(ctx)), attrDetail.String(detail)))
	}
}

// eventLeaseLost is the span event of an attempt that lost its lease
// (its run's history records the reclaim, by the next worker).
const eventLeaseLost EventKind = "lease_lost"

// finishEvent is the history kind of finish's log events.
var finishEvent = map[string]EventKind{"durable run done": store.EventDone, "durable attempt failed": store.EventFailed, "durable run dead": store.EventDead}

// attrOf is the value after key in a slog attribute list, "" when absent.
func attrOf(attrs []any, key string) string {
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i] == key {
			if s, ok := attrs[i+1].(string); ok {
				return s
			}
		}
	}
	return ""
}
