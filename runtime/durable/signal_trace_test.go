package durable_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestSignalLinksTheSendersTrace: a signal sent from a webhook's request (a
// server span continuing its caller's traceparent, in another process) is
// stored with the sender's trace context, and the attempt that consumes it
// links to it: the request's trace leads to the run it woke. A signal sent
// outside any trace stores none and makes no span; an engine without
// telemetry stores none either. Both stores.
func TestSignalLinksTheSendersTrace(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		approval := durable.Register("approval", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.AwaitSignal(c, codec.String, "approved"), func(by string) task.Task[string] {
				return task.AndThen(durable.AwaitSignal(c, codec.String, "shipped"), func(s string) task.Task[string] {
					return durable.Step(c, codec.String, "record", task.Succeed(by+s))
				})
			})
		})
		defs := []durable.Workflow{approval.Erase()}
		w := newOtelEngine(t, d)
		if err := durable.Start(ctx, w.e, approval, "a-1", "x"); err != nil {
			t.Fatal(err)
		}
		poll := func() {
			t.Helper()
			if worked, err := w.e.Poll(ctx, defs); err != nil || !worked {
				t.Fatalf("poll = %v, %v", worked, err)
			}
		}
		poll() // parks on "approved"

		// The webhook: its own process (tracer provider), a request whose
		// traceparent header names the caller's span.
		hook := tracetest.NewSpanRecorder()
		hookTP := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(hook))
		const caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		reqCtx := propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": caller})
		reqCtx, req := hookTP.Tracer("webhook").Start(reqCtx, "POST /hooks/:id", trace.WithSpanKind(trace.SpanKindServer))
		if err := w.e.Signal(reqCtx, "a-1", "approved", `"ann"`); err != nil {
			t.Fatal(err)
		}
		req.End()
		poll() // consumes "approved", parks on "shipped"
		// An operator's signal, in no trace.
		if err := w.e.Signal(ctx, "a-1", "shipped", `"!"`); err != nil {
			t.Fatal(err)
		}
		poll() // consumes "shipped", done

		sent := w.span(t, "durable signal approved")
		if sent.SpanContext().TraceID() != req.SpanContext().TraceID() || sent.Parent().SpanID() != req.SpanContext().SpanID() {
			t.Errorf("the signal's span is in trace %s under %s, want the request's %s under %s",
				sent.SpanContext().TraceID(), sent.Parent().SpanID(), req.SpanContext().TraceID(), req.SpanContext().SpanID())
		}
		if req.SpanContext().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Fatalf("the request did not continue its caller's trace: %s", req.SpanContext().TraceID())
		}
		var attempts []sdktrace.ReadOnlySpan
		for _, s := range w.spans.Ended() {
			switch s.Name() {
			case "durable attempt approval":
				attempts = append(attempts, s)
			case "durable signal shipped":
				t.Errorf("a signal sent in no trace made a span (%s)", s.SpanContext().TraceID())
			}
		}
		if len(attempts) != 3 {
			t.Fatalf("%d attempt spans, want 3", len(attempts))
		}
		for i, a := range attempts {
			var linked []trace.SpanContext
			for _, l := range a.Links() {
				if l.SpanContext.TraceID() == req.SpanContext().TraceID() {
					linked = append(linked, l.SpanContext)
				}
			}
			want := 0
			if i == 1 { // the attempt that consumed "approved"
				want = 1
			}
			if len(linked) != want {
				t.Errorf("attempt %d has %d links to the webhook's trace, want %d: %v", i+1, len(linked), want, a.Links())
				continue
			}
			if want == 1 && linked[0].SpanID() != sent.SpanContext().SpanID() {
				t.Errorf("attempt 2 links to span %s, want the signal's %s", linked[0].SpanID(), sent.SpanContext().SpanID())
			}
		}

		// Without telemetry, the same call stores no trace context.
		plain := durable.New(d, durable.Options{})
		if err := durable.Start(ctx, plain, approval, "a-2", "x"); err != nil {
			t.Fatal(err)
		}
		if err := plain.Signal(reqCtx, "a-2", "approved", `"bob"`); err != nil {
			t.Fatal(err)
		}
		var n int64
		if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_signals WHERE trace_context IS NOT NULL`).Scan(&n); err != nil || n != 1 {
			t.Errorf("%d signals store a trace context (%v), want 1: the traced engine's approved", n, err)
		}
	})
}
