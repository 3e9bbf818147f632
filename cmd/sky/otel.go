package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// telemetry is the OpenTelemetry of one `sky run`: the providers the
// program's durable engines report to, made from the environment.
//
//   - SKY_OTEL_EXPORTER unset, "" or "none": off (the engines use no-op
//     providers and store no trace context). OTEL_SDK_DISABLED=true also
//     turns it off.
//   - "stdout": spans (one JSON object a line) and, at exit, metrics on
//     standard output.
//   - "otlp": OTLP over HTTP/protobuf to OTEL_EXPORTER_OTLP_ENDPOINT
//     (default http://localhost:4318); the exporters read the other
//     OTEL_EXPORTER_OTLP_* variables (headers, timeout, per-signal
//     endpoints) themselves.
//
// The SDK reads OTEL_TRACES_SAMPLER, OTEL_BSP_* and
// OTEL_METRIC_EXPORT_INTERVAL; the resource is service.name = the sky.toml
// name (else "sky"), overridden by OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES.
type telemetry struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

// telemetryFromEnv returns the telemetry SKY_OTEL_EXPORTER asks for, nil
// when it is off, or an error naming a value it cannot use.
func telemetryFromEnv(ctx context.Context, getenv func(string) string, service string, stdout io.Writer) (*telemetry, error) {
	exporter := strings.ToLower(strings.TrimSpace(getenv("SKY_OTEL_EXPORTER")))
	if exporter == "" || exporter == "none" || strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	if service == "" {
		service = "sky"
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME): %w", err)
	}
	var spans sdktrace.SpanExporter
	var metrics sdkmetric.Exporter
	switch exporter {
	case "stdout":
		if spans, err = stdouttrace.New(stdouttrace.WithWriter(stdout)); err == nil {
			metrics, err = stdoutmetric.New(stdoutmetric.WithWriter(stdout))
		}
	case "otlp":
		for _, v := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL"} {
			if p := strings.TrimSpace(getenv(v)); p != "" && p != "http/protobuf" {
				return nil, fmt.Errorf("%s=%q is not supported: sky exports OTLP over http/protobuf "+
					"(unset it, or point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP port, usually 4318)", v, p)
			}
		}
		if spans, err = otlptracehttp.New(ctx); err == nil {
			metrics, err = otlpmetrichttp.New(ctx)
		}
	default:
		return nil, fmt.Errorf("SKY_OTEL_EXPORTER=%q is not an exporter; use otlp or stdout, or leave it unset for no telemetry", exporter)
	}
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry %s exporter: %w", exporter, err)
	}
	return &telemetry{
		tp: sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans), sdktrace.WithResource(res)),
		mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics)), sdkmetric.WithResource(res)),
	}, nil
}

// telemetryFlushTimeout bounds the export of what is left at exit.
const telemetryFlushTimeout = 5 * time.Second

// shutdown exports the spans and metrics still buffered and stops the
// providers. It runs on a context of its own, so an interrupted program
// still flushes.
func (t *telemetry) shutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushTimeout)
	defer cancel()
	return errors.Join(t.tp.Shutdown(ctx), t.mp.Shutdown(ctx))
}
