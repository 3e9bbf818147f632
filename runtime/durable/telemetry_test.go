package durable_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// otelEngine is an engine whose spans land in an in-memory recorder and
// whose metrics a manual reader collects.
type otelEngine struct {
	e      *durable.Engine
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

func newOtelEngine(t *testing.T, d *db.DB) otelEngine {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	e := durable.New(d, durable.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	if err := e.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return otelEngine{e: e, spans: spans, tp: tp, reader: reader}
}

// span finds the one ended span called name.
func (o otelEngine) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range o.spans.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans called %q, want 1; spans: %v", len(found), name, names(o.spans.Ended()))
	}
	return found[0]
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// wantAttrs checks s carries each of want.
func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]any) {
	t.Helper()
	got := attrs(s)
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %v, want %v (all: %v)", s.Name(), k, got[k], v, got)
		}
	}
}

// metrics sums the durable.runs counter by outcome, counts the points of
// each histogram, and says whether the durable.due.backlog gauge reported.
func (o otelEngine) metrics(t *testing.T) (runs map[string]int64, histograms map[string]uint64, backlog bool) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	runs, histograms = map[string]int64{}, map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					outcome, _ := p.Attributes.Value("durable.outcome")
					runs[outcome.AsString()] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					histograms[m.Name] += p.Count
				}
			case metricdata.Gauge[int64]:
				backlog = backlog || m.Name == "durable.due.backlog"
			}
		}
	}
	return runs, histograms, backlog
}

// TestTraceFollowsTheRunAcrossWorkers: the span of the request that
// started a run is the parent of every attempt's span, even in a worker
// that started later (a restart after a crash); each fresh step is a child
// span of its attempt, a replayed step has none; the metrics count it all.
func TestTraceFollowsTheRunAcrossWorkers(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		checkout := durable.Register("checkout", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "reserve", task.Succeed("r")), func(r string) task.Task[string] {
				return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(s string) task.Task[string] {
					return durable.Step(c, codec.String, "charge", task.Succeed(r+s))
				})
			})
		})
		broken := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "broken", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return durable.Step(c, codec.String, "charge", task.Fail[string](task.Errorf(task.Unavailable, "provider down")))
		})
		defs := []durable.Workflow{checkout.Erase(), broken.Erase()}

		first := newOtelEngine(t, d)
		reqCtx, req := first.tp.Tracer("test").Start(ctx, "POST /checkout")
		if err := durable.Start(reqCtx, first.e, checkout, "order-1", "o"); err != nil {
			t.Fatal(err)
		}
		req.End()
		if err := durable.Start(ctx, first.e, broken, "broken-1", "b"); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if worked, err := first.e.Poll(ctx, defs); err != nil || !worked {
				t.Fatalf("Poll = %v, %v", worked, err)
			}
		}
		start := first.span(t, "durable start checkout")
		attempt := first.span(t, "durable attempt checkout")
		reserve := first.span(t, "durable step reserve")
		if start.Parent().SpanID() != req.SpanContext().SpanID() || start.SpanContext().TraceID() != req.SpanContext().TraceID() {
			t.Errorf("the start span is not a child of the request's")
		}
		if attempt.Parent().SpanID() != start.SpanContext().SpanID() || attempt.SpanContext().TraceID() != req.SpanContext().TraceID() {
			t.Errorf("attempt 1 is not a child of the start span")
		}
		if reserve.Parent().SpanID() != attempt.SpanContext().SpanID() {
			t.Errorf("the step span is not a child of its attempt's")
		}
		wantAttrs(t, attempt, map[string]any{"durable.workflow": "checkout", "durable.run_id": "order-1", "durable.attempt": int64(1), "durable.outcome": "suspended"})
		wantAttrs(t, reserve, map[string]any{"durable.workflow": "checkout", "durable.run_id": "order-1", "durable.step_id": "reserve", "durable.attempt": int64(1), "durable.outcome": "ok"})
		wantAttrs(t, first.span(t, "durable attempt broken"), map[string]any{"durable.run_id": "broken-1", "durable.outcome": "dead"})
		wantAttrs(t, first.span(t, "durable step charge"), map[string]any{"durable.run_id": "broken-1", "durable.outcome": "error"})
		runs, hist, backlog := first.metrics(t)
		if runs["started"] != 2 || runs["dead"] != 1 || runs["done"] != 0 {
			t.Errorf("run counts = %v, want 2 started, 1 dead", runs)
		}
		if hist["durable.step.duration"] != 2 || hist["durable.claim.duration"] != 2 || !backlog {
			t.Errorf("histograms = %v, backlog reported %v", hist, backlog)
		}

		// Another worker (a restart) resumes the run: the same trace.
		second := newOtelEngine(t, d)
		if err := second.e.Signal(ctx, "order-1", "go", `"!"`); err != nil {
			t.Fatal(err)
		}
		if worked, err := second.e.Poll(ctx, defs); err != nil || !worked {
			t.Fatalf("Poll = %v, %v", worked, err)
		}
		resumed := second.span(t, "durable attempt checkout")
		if resumed.SpanContext().TraceID() != req.SpanContext().TraceID() || resumed.Parent().SpanID() != start.SpanContext().SpanID() {
			t.Errorf("the resumed attempt left the request's trace: trace %s parent %s", resumed.SpanContext().TraceID(), resumed.Parent().SpanID())
		}
		wantAttrs(t, resumed, map[string]any{"durable.outcome": "done"})
		if charge := second.span(t, "durable step charge"); charge.Parent().SpanID() != resumed.SpanContext().SpanID() {
			t.Errorf("the fresh step of the resumed attempt is not its child")
		}
		for _, s := range second.spans.Ended() {
			if s.Name() == "durable step reserve" {
				t.Errorf("a replayed step has a span")
			}
		}
		if runs, _, _ := second.metrics(t); runs["done"] != 1 {
			t.Errorf("the second worker's run counts = %v, want 1 done", runs)
		}
		if trace.SpanContextFromContext(reqCtx).TraceID() != req.SpanContext().TraceID() {
			t.Fatal("the test's own request span is broken")
		}
	})
}

// TestNoProvidersNoTraceContext: the default engine stores no trace
// context, even under a traced caller.
func TestNoProvidersNoTraceContext(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	ctx := context.Background()
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	reqCtx, req := tp.Tracer("test").Start(ctx, "POST /x")
	defer req.End()
	w := durable.Register("w", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] { return task.Succeed(in) })
	if err := durable.Start(reqCtx, e, w, "r", "x"); err != nil {
		t.Fatal(err)
	}
	var tc *string
	if err := d.QueryRow(ctx, `SELECT trace_context FROM _sky_durable_runs WHERE id = 'r'`).Scan(&tc); err != nil || tc != nil {
		t.Errorf("trace_context = %v, %v; want NULL", tc, err)
	}
}

// TestOneTracePerRun: a run started under a request's span, suspended three
// times (signal waits) and resumed by two workers in turn, is one trace:
// every span of both workers has the request's trace id, and every span but
// the request's has its parent among them (no orphan root span), on both
// stores.
func TestOneTracePerRun(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		wf := durable.Register("tri", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			wait := func(name string, acc string) task.Task[string] {
				return task.AndThen(durable.AwaitSignal(c, codec.String, name), func(s string) task.Task[string] {
					return durable.Step(c, codec.String, "after-"+name, task.Succeed(acc+s))
				})
			}
			return task.AndThen(wait("a", in), func(a string) task.Task[string] {
				return task.AndThen(wait("b", a), func(b string) task.Task[string] { return wait("c", b) })
			})
		})
		defs := []durable.Workflow{wf.Erase()}
		workers := []otelEngine{newOtelEngine(t, d), newOtelEngine(t, d)}
		reqCtx, req := workers[0].tp.Tracer("test").Start(ctx, "POST /start")
		if err := durable.Start(reqCtx, workers[0].e, wf, "tri-1", "x"); err != nil {
			t.Fatal(err)
		}
		req.End()
		for i, sig := range []string{"a", "b", "c", ""} {
			w := workers[i%2]
			if worked, err := w.e.Poll(ctx, defs); err != nil || !worked {
				t.Fatalf("poll %d = %v, %v", i, worked, err)
			}
			if sig != "" {
				if err := w.e.Signal(ctx, "tri-1", sig, `"!"`); err != nil {
					t.Fatal(err)
				}
			}
		}
		var all []sdktrace.ReadOnlySpan
		for _, w := range workers {
			all = append(all, w.spans.Ended()...)
		}
		ids := map[trace.SpanID]bool{}
		attempts := 0
		for _, s := range all {
			ids[s.SpanContext().SpanID()] = true
			if s.Name() == "durable attempt tri" {
				attempts++
			}
		}
		if attempts != 4 {
			t.Errorf("%d attempt spans, want 4 (the start and three resumes)", attempts)
		}
		for _, s := range all {
			if s.SpanContext().TraceID() != req.SpanContext().TraceID() {
				t.Errorf("span %q is in trace %s, want the request's %s", s.Name(), s.SpanContext().TraceID(), req.SpanContext().TraceID())
			}
			if s.SpanContext().SpanID() != req.SpanContext().SpanID() && !ids[s.Parent().SpanID()] {
				t.Errorf("span %q has parent %s, which is no span of the run's: an orphan root", s.Name(), s.Parent().SpanID())
			}
		}
	})
}

// TestTelemetryNamesTheNamespace: an engine outside the default namespace
// puts durable.namespace on its spans and metric points; the default
// namespace's carry none (their attributes are as before namespaces).
func TestTelemetryNamesTheNamespace(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		spans := tracetest.NewSpanRecorder()
		reader := sdkmetric.NewManualReader()
		e := durable.New(d, durable.Options{Namespace: "billing", TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)),
			MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
		w := durable.Register("w", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return durable.Step(c, codec.String, "s", task.Succeed(in))
		})
		if err := durable.Start(ctx, e, w, "r", "x"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Poll(ctx, []durable.Workflow{w.Erase()}); err != nil {
			t.Fatal(err)
		}
		o := otelEngine{e: e, spans: spans, reader: reader}
		for _, name := range []string{"durable attempt w", "durable step s"} {
			wantAttrs(t, o.span(t, name), map[string]any{"durable.namespace": "billing", "durable.run_id": "r"})
		}
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		points := 0
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				check := func(set attribute.Set) {
					points++
					if v, ok := set.Value("durable.namespace"); !ok || v.AsString() != "billing" {
						t.Errorf("metric %s: a point without durable.namespace=billing", m.Name)
					}
				}
				switch data := m.Data.(type) {
				case metricdata.Sum[int64]:
					for _, p := range data.DataPoints {
						check(p.Attributes)
					}
				case metricdata.Histogram[float64]:
					for _, p := range data.DataPoints {
						check(p.Attributes)
					}
				case metricdata.Gauge[int64]:
					for _, p := range data.DataPoints {
						check(p.Attributes)
					}
				}
			}
		}
		if points < 4 {
			t.Errorf("%d metric points, want the runs counter, the two histograms and the backlog", points)
		}
	})
}
