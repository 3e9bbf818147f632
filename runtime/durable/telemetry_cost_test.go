package durable_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestTracingAddsNoStatement: with tracing on, a run costs the statements
// it costs with tracing off (the claim reads the stored trace context with
// the run; a signal's INSERT writes its sender's, and the statement that
// consumes it reads it), and its attempt still joins the start's trace.
func TestTracingAddsNoStatement(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		w := durable.Register("three", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "a", task.Succeed(in)), func(string) task.Task[string] {
				return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(string) task.Task[string] {
					return durable.Step(c, codec.String, "c", task.Succeed(in))
				})
			})
		})
		spans := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		ops := func(runID string, opts durable.Options) []string {
			var mu sync.Mutex
			var seen []string
			opts.OnStatement = func(op, _ string) {
				mu.Lock()
				seen = append(seen, op)
				mu.Unlock()
			}
			e := durable.New(d, opts)
			if err := durable.Start(ctx, e, w, runID, "x"); err != nil {
				t.Fatal(err)
			}
			drain := func() {
				for {
					worked, err := e.Poll(ctx, []durable.Workflow{w.Erase()})
					if err != nil {
						t.Fatal(err)
					}
					if !worked {
						return
					}
				}
			}
			drain()
			// Sent from a request's span, as a webhook does.
			reqCtx, req := tp.Tracer("webhook").Start(ctx, "POST /hooks/:id")
			if err := e.Signal(reqCtx, runID, "go", `"!"`); err != nil {
				t.Fatal(err)
			}
			req.End()
			drain()
			mu.Lock()
			defer mu.Unlock()
			return seen
		}
		if err := durable.New(d, durable.Options{}).Setup(ctx); err != nil {
			t.Fatal(err)
		}
		off := ops("off", durable.Options{})
		// The run just finished waits in SQLite's search backlog: another
		// engine's first poll indexes it, so the next run starts alike.
		if _, err := durable.New(d, durable.Options{}).Poll(ctx, []durable.Workflow{w.Erase()}); err != nil {
			t.Fatal(err)
		}
		on := ops("on", durable.Options{TracerProvider: tp, MeterProvider: mp})
		if !slices.Equal(off, on) {
			t.Errorf("statements with tracing off %v, on %v; want the same", off, on)
		}
		var start, attempt sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			switch s.Name() {
			case "durable start three":
				start = s
			case "durable attempt three":
				attempt = s
			}
		}
		if start == nil || attempt == nil || attempt.Parent().SpanID() != start.SpanContext().SpanID() {
			t.Fatalf("the attempt is not a child of the start span: spans %v", names(spans.Ended()))
		}
	})
}
