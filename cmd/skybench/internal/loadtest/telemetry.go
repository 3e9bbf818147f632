package loadtest

// The telemetry part: what OpenTelemetry costs the engine. The compared
// throughput configuration (the most steps, the most pollers, Poll) runs
// with no providers and with real SDK providers, alternating off, on, off,
// on, ... so both see the same machine. The spans go through the SDK's
// batch processor to the stdout exporter writing to io.Discard (the JSON
// encoding of every span is paid, the I/O of a collector is not); the
// metrics to a manual reader (every recording is paid, no export).

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// telemetryRounds is how many times each of off and on runs.
const telemetryRounds = 3

// TelemetryCost is the outcome of the telemetry part on one driver.
type TelemetryCost struct {
	Driver         string
	Steps, Pollers int
	// Off and On are the workflows/s of each round, in the order run.
	Off, On []float64
	// OffCosts and OnCosts are the counted pass's costs per workflow (the
	// first round's): the statements tracing adds.
	OffCosts, OnCosts Costs
	// OffCPU and OnCPU are this process's CPU time (user and system, from
	// getrusage) per run started, median of the rounds: unlike throughput
	// on a shared machine, what the SDK costs the worker shows there.
	OffCPU, OnCPU time.Duration
	// Spans is how many spans the "on" rounds exported, SpansWant how many
	// they should have: per run, its start, its attempt and its steps.
	Spans, SpansWant int64
}

// Overhead is 1 - median(on)/median(off): the share of throughput
// telemetry costs (negative when the on rounds happened to be faster).
func (t TelemetryCost) Overhead() float64 {
	return 1 - median(t.On)/median(t.Off)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// otelSink is one measurement's OpenTelemetry SDK providers.
type otelSink struct {
	tp    *sdktrace.TracerProvider
	mp    *sdkmetric.MeterProvider
	spans *countingExporter
}

// countingExporter counts the spans it passes to the exporter it wraps.
type countingExporter struct {
	sdktrace.SpanExporter
	n atomic.Int64
}

func (c *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.n.Add(int64(len(spans)))
	return c.SpanExporter.ExportSpans(ctx, spans)
}

func newOtelSink() (*otelSink, error) {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(io.Discard))
	if err != nil {
		return nil, err
	}
	spans := &countingExporter{SpanExporter: exp}
	return &otelSink{
		tp:    sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans)),
		mp:    sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		spans: spans,
	}, nil
}

// exported flushes the batch processor and returns the spans exported.
func (s *otelSink) exported(ctx context.Context) (int64, error) {
	err := s.tp.ForceFlush(ctx)
	return s.spans.n.Load(), err
}

func (s *otelSink) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.tp.Shutdown(ctx)
	_ = s.mp.Shutdown(ctx)
}

// measureTelemetry runs the compared configuration on driver with
// telemetry off and on, telemetryRounds times each, alternating.
func (r *runner) measureTelemetry(ctx context.Context, driver string) error {
	t := TelemetryCost{Driver: driver, Steps: slices.Max(r.cfg.Steps), Pollers: slices.Max(r.cfg.Pollers)}
	var offCPU, onCPU []float64
	for i := 0; i < telemetryRounds; i++ {
		cpu0 := processCPU()
		off, err := r.measureThroughput(ctx, driver, t.Steps, t.Pollers, 1, nil)
		if err != nil {
			return err
		}
		cpu1 := processCPU()
		sink, err := newOtelSink()
		if err != nil {
			return err
		}
		on, err := r.measureThroughput(ctx, driver, t.Steps, t.Pollers, 1, sink)
		if err != nil {
			sink.shutdown()
			return err
		}
		spans, err := sink.exported(ctx)
		sink.shutdown()
		if err != nil {
			return fmt.Errorf("flushing the spans: %w", err)
		}
		cpu2 := processCPU()
		offCPU = append(offCPU, float64(cpu1-cpu0)/float64(off.Started))
		onCPU = append(onCPU, float64(cpu2-cpu1)/float64(on.Started))
		t.Off, t.On = append(t.Off, off.WorkflowsPerSec), append(t.On, on.WorkflowsPerSec)
		t.Spans += spans
		t.SpansWant += on.Started * int64(2+t.Steps)
		if i == 0 {
			t.OffCosts, t.OnCosts = off.PerWorkflow, on.PerWorkflow
		}
		r.printf("%-8s telemetry round %d, %d-step %d poller(s): off %7.1f workflows/s, on %7.1f workflows/s; process CPU per workflow off %-9s on %s\n",
			driver, i+1, t.Steps, t.Pollers, off.WorkflowsPerSec, on.WorkflowsPerSec,
			time.Duration(offCPU[i]).Round(time.Microsecond), time.Duration(onCPU[i]).Round(time.Microsecond))
	}
	t.OffCPU, t.OnCPU = time.Duration(median(offCPU)), time.Duration(median(onCPU))
	r.rep.Telemetry = append(r.rep.Telemetry, t)
	r.printf("%-8s telemetry: median off %.1f, on %.1f workflows/s: %.1f%% of the throughput; process CPU per workflow off %s, on %s (+%s); per workflow off: %s; on: %s; spans exported %d of %d\n",
		driver, median(t.Off), median(t.On), 100*t.Overhead(), t.OffCPU.Round(time.Microsecond), t.OnCPU.Round(time.Microsecond),
		(t.OnCPU - t.OffCPU).Round(time.Microsecond), t.OffCosts.format(driver), t.OnCosts.format(driver), t.Spans, t.SpansWant)
	if t.Spans != t.SpansWant {
		return fmt.Errorf("the on rounds exported %d spans, want %d (a start, an attempt and %d steps per run)", t.Spans, t.SpansWant, t.Steps)
	}
	return nil
}

// processCPU is the CPU time this process has used, user and system, in
// ns (0 where getrusage fails).
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
