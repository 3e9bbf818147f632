package durable

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
)

// TestTelemetryOffAllocatesNothing: an engine without providers builds no
// span or metric attribute for a step, a claim or a finished run (the
// attempt keeps only its outcome), where one with a MeterProvider does.
func TestTelemetryOffAllocatesNothing(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	ctx := context.Background()
	began := time.Now()
	hot := func(e *Engine, c *Ctx) func() {
		return func() {
			sctx, span := e.tel.step(ctx, c, "s")
			span.end(sctx, nil)
			e.tel.claimed(ctx, began, true)
			e.tel.count(ctx, "w", "done")
		}
	}
	off := New(d, Options{})
	if n := testing.AllocsPerRun(100, hot(off, &Ctx{e: off})); n != 0 {
		t.Errorf("without telemetry a step, a claim and a count allocate %.0f times, want 0", n)
	}
	actx, a := off.tel.startAttempt(ctx, store.Claimed{ID: "r", Workflow: "w"})
	a.outcome = "done"
	a.end(actx)
	if a.span != nil || a.attrs != nil {
		t.Errorf("without telemetry the attempt has span %v, attributes %v; want none", a.span, a.attrs)
	}

	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	metered := New(d, Options{MeterProvider: mp})
	c := &Ctx{e: metered}
	if n := testing.AllocsPerRun(100, hot(metered, c)); n == 0 {
		t.Error("with a MeterProvider a step, a claim and a count allocate nothing: the measure above cannot fail")
	}
}
