package durable

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"skydurable/runtime/durable/store"
)

// This file is the engine's OpenTelemetry: a span per run attempt, parented
// on the span that started the run (its trace context is stored with the
// run, so the trace survives crashes and restarts), a child span per fresh
// step, a link from the attempt that consumes a signal to the span that
// sent it (its trace context is stored with the signal), and the counters
// and histograms below. Everything goes through the
// providers in Options; with none the engine uses no-op ones, stores no
// trace context and builds no span or metric attributes (a step or an
// attempt without telemetry costs no allocation for it).

// instrumentation names the engine's tracer and meter.
const instrumentation = "skydurable/runtime/durable"

// The attribute keys of spans and metrics.
const (
	attrWorkflow = attribute.Key("durable.workflow")
	attrRun      = attribute.Key("durable.run_id")
	attrStep     = attribute.Key("durable.step_id")
	attrAttempt  = attribute.Key("durable.attempt")
	attrOutcome  = attribute.Key("durable.outcome")
	attrVersion  = attribute.Key("durable.version")
	attrSignal   = attribute.Key("durable.signal")
	// attrNamespace is on every span and metric point of an engine
	// outside the default namespace (run ids and workflow names are per
	// namespace).
	attrNamespace = attribute.Key("durable.namespace")
)

type telemetry struct {
	tracing bool // a TracerProvider was given: store and read trace contexts
	// metering: a MeterProvider was given; without one no metric point
	// (nor its attributes) is made.
	metering bool
	tracer   trace.Tracer
	prop     propagation.TraceContext

	runs                  metric.Int64Counter     // by outcome: started, done, failed, dead
	stepLatency, claimLat metric.Float64Histogram // seconds
	// ns is the namespace attribute of an engine outside the default
	// namespace (none in it).
	ns []attribute.KeyValue
}

func newTelemetry(e *Engine, tp trace.TracerProvider, mp metric.MeterProvider) *telemetry {
	t := &telemetry{tracing: tp != nil, metering: mp != nil}
	if e.namespace != DefaultNamespace {
		t.ns = []attribute.KeyValue{attrNamespace.String(e.namespace)}
	}
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t.tracer = tp.Tracer(instrumentation)
	m := mp.Meter(instrumentation)
	// Instrument errors only come from invalid names, which these are not;
	// a nil instrument is never returned (a no-op one is).
	t.runs, _ = m.Int64Counter("durable.runs", metric.WithDescription("runs started, and attempts ended done, failed or dead, by outcome"))
	t.stepLatency, _ = m.Float64Histogram("durable.step.duration", metric.WithUnit("s"), metric.WithDescription("time a fresh step took: its task, and its journal write when the step wrote to the database"))
	t.claimLat, _ = m.Float64Histogram("durable.claim.duration", metric.WithUnit("s"), metric.WithDescription("time one claim statement took, found or not"))
	_, _ = m.Int64ObservableGauge("durable.due.backlog", metric.WithDescription("runs due now that no worker has claimed"),
		metric.WithInt64Callback(func(ctx context.Context, o metric.Int64Observer) error {
			n, err := e.store.DueBacklog(ctx, e.now(), ownNamespace)
			if err == nil {
				o.Observe(n, metric.WithAttributes(t.ns...))
			}
			return err
		}))
	return t
}

// count adds one run of workflow to the run counter under outcome.
func (t *telemetry) count(ctx context.Context, workflow, outcome string) {
	if !t.metering {
		return
	}
	t.runs.Add(ctx, 1, metric.WithAttributes(append([]attribute.KeyValue{attrWorkflow.String(workflow), attrOutcome.String(outcome)}, t.ns...)...))
}

// startSpan returns the trace context to store with a new run: the
// traceparent of a "durable start" span, child of ctx's span.
func (t *telemetry) startSpan(ctx context.Context, workflow, runID string, version int) string {
	if !t.tracing {
		return ""
	}
	ctx, span := t.tracer.Start(ctx, "durable start "+workflow, trace.WithAttributes(
		attrWorkflow.String(workflow), attrRun.String(runID), attrVersion.Int(version)), trace.WithAttributes(t.ns...))
	defer span.End()
	return t.traceparent(ctx)
}

// traceparent is the W3C trace context of ctx's span.
func (t *telemetry) traceparent(ctx context.Context) string {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	return carrier["traceparent"]
}

// signalSpan returns the trace context to store with a signal sent to
// runID: the traceparent of a "durable signal NAME" span, child of ctx's
// span. A sender outside any trace (ctx has no span) stores none, and
// starts no trace of its own.
func (t *telemetry) signalSpan(ctx context.Context, runID, name string) string {
	if !t.tracing || !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	ctx, span := t.tracer.Start(ctx, "durable signal "+name, trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(attrRun.String(runID), attrSignal.String(name)), trace.WithAttributes(t.ns...))
	defer span.End()
	return t.traceparent(ctx)
}

// linkSignal links the attempt span in ctx to the span that sent the
// signal name it consumed (traceContext, as signalSpan stored it), so the
// trace of the request that sent a signal leads to the run it woke, and the
// run's trace back to that request.
func (t *telemetry) linkSignal(ctx context.Context, name, traceContext string) {
	a, ok := ctx.Value(attemptKey{}).(*attempt)
	if !t.tracing || traceContext == "" || !ok {
		return
	}
	sc := trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.MapCarrier{"traceparent": traceContext}))
	if sc.IsValid() {
		a.span.AddLink(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{attrSignal.String(name)}})
	}
}

// attempt is the span of one claimed attempt; its outcome is set where the
// attempt ends (finish, or advance's lost and suspended branches).
type attempt struct {
	t       *telemetry
	span    trace.Span
	outcome string
	attrs   []attribute.KeyValue
}

type attemptKey struct{}

// claimed times a claim; the claim's duration goes to the histogram.
func (t *telemetry) claimed(ctx context.Context, began time.Time, found bool) {
	if !t.metering {
		return
	}
	t.claimLat.Record(ctx, time.Since(began).Seconds(), metric.WithAttributes(append([]attribute.KeyValue{attribute.Bool("durable.found", found)}, t.ns...)...))
}

// startAttempt starts the attempt span of cl, parented on the span that
// started the run; the returned ctx carries it to the body's steps. Without
// a TracerProvider there is no span (ctx keeps the caller's, as a no-op
// tracer's span would carry it), and without a MeterProvider either no
// attributes: the attempt only holds its outcome.
func (t *telemetry) startAttempt(ctx context.Context, cl store.Claimed) (context.Context, *attempt) {
	a := &attempt{t: t, outcome: "error"}
	if !t.tracing && !t.metering {
		return context.WithValue(ctx, attemptKey{}, a), a
	}
	a.attrs = append([]attribute.KeyValue{
		attrWorkflow.String(cl.Workflow), attrRun.String(cl.ID), attrAttempt.Int(cl.Attempts), attrVersion.Int(cl.Version)}, t.ns...)
	if !t.tracing {
		return context.WithValue(ctx, attemptKey{}, a), a
	}
	parent := ctx
	if cl.TraceContext != "" {
		parent = t.prop.Extract(ctx, propagation.MapCarrier{"traceparent": cl.TraceContext})
	}
	// The run's stored context is the parent; the worker's own span (a
	// poll loop's, if any) is linked rather than lost.
	opts := []trace.SpanStartOption{trace.WithAttributes(a.attrs...), trace.WithSpanKind(trace.SpanKindConsumer)}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && parent != ctx {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx, a.span = t.tracer.Start(parent, "durable attempt "+cl.Workflow, opts...)
	return context.WithValue(ctx, attemptKey{}, a), a
}

// end records the attempt's outcome on its span and in the run counter.
func (a *attempt) end(ctx context.Context) {
	if a.span != nil {
		a.span.SetAttributes(attrOutcome.String(a.outcome))
		if a.outcome == "failed" || a.outcome == "dead" || a.outcome == "error" {
			a.span.SetStatus(codes.Error, a.outcome)
		}
		a.span.End()
	}
	if a.t.metering && (a.outcome == "done" || a.outcome == "failed" || a.outcome == "dead") {
		a.t.count(ctx, a.attrs[0].Value.AsString(), a.outcome)
	}
}

// setOutcome names how the attempt in ctx ended.
func setOutcome(ctx context.Context, outcome string) {
	if a, ok := ctx.Value(attemptKey{}).(*attempt); ok {
		a.outcome = outcome
	}
}

// outcomeOf maps finish's log event to the attempt outcome.
var outcomeOf = map[string]string{"durable run done": "done", "durable attempt failed": "failed", "durable run dead": "dead"}

// stepSpan is the span of one fresh step (without telemetry, none: span
// nil).
type stepSpan struct {
	span  trace.Span
	began time.Time
	t     *telemetry
	attrs []attribute.KeyValue
}

// step starts the span of a fresh step of c, a child of the attempt's.
func (t *telemetry) step(ctx context.Context, c *Ctx, stepID string) (context.Context, stepSpan) {
	if !t.tracing && !t.metering {
		return ctx, stepSpan{}
	}
	attrs := append([]attribute.KeyValue{attrWorkflow.String(c.Workflow()), attrRun.String(c.RunID()), attrStep.String(stepID), attrAttempt.Int(c.Attempt())}, t.ns...)
	ctx, span := t.tracer.Start(ctx, "durable step "+stepID, trace.WithAttributes(attrs...))
	return ctx, stepSpan{span: span, began: time.Now(), t: t, attrs: attrs}
}

// end records the step's outcome and latency.
func (s stepSpan) end(ctx context.Context, err error) {
	if s.span == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = "error"
		if IsSuspend(err) {
			outcome = "suspended"
		}
		s.span.RecordError(err)
		s.span.SetStatus(codes.Error, errText(err))
	}
	s.span.SetAttributes(attrOutcome.String(outcome))
	s.span.End()
	s.t.stepLatency.Record(ctx, time.Since(s.began).Seconds(), metric.WithAttributes(append([]attribute.KeyValue{s.attrs[0], s.attrs[2], attrOutcome.String(outcome)}, s.t.ns...)...))
}
