package httpserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// TestRequestsAreServerSpans: with a TracerProvider each request is a
// server span that continues the caller's trace (its traceparent header),
// the handler's Task runs under it (what it starts joins the trace), and
// the span records the route and the status, an error for a 5xx.
func TestRequestsAreServerSpans(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	env := Env{Log: io.Discard, MaxBody: 1 << 10, TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))}
	ks := KernelsWith(env)
	var seen trace.SpanContext
	handler := value.NewFunc("h", 1, func(a []value.Value) (value.Value, error) {
		return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
			seen = trace.SpanContextFromContext(ctx)
			return value.NewRecord(map[string]value.Value{
				"status": int64(200), "body": "ok", "headers": (*value.Dict)(nil), "contentType": "text/plain",
			}), nil
		})}, nil
	})
	failing := value.NewFunc("f", 1, func(a []value.Value) (value.Value, error) {
		return value.Task{T: task.Fail[value.Value](task.New(task.Unavailable, "down"))}, nil
	})
	var routes []*route
	for _, r := range []struct {
		method, path string
		h            value.Value
	}{{"POST", "/hooks/:id", handler}, {"GET", "/down", failing}} {
		rt, err := kernel(t, ks, "Server_route", r.method, r.path, r.h)
		if err != nil {
			t.Fatal(err)
		}
		routes = append(routes, rt.(value.Opaque).V.(*route))
	}
	srv := &http.Server{Handler: &mux{env: env, routes: routes}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	req, _ := http.NewRequest("POST", "http://"+l.Addr().String()+"/hooks/42", strings.NewReader("{}"))
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp, err = http.Get("http://" + l.Addr().String() + "/down"); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ended := spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans ended, want 2 (one per request)", len(ended))
	}
	hook, down := ended[0], ended[1]
	if hook.Name() != "POST /hooks/:id" || hook.SpanKind() != trace.SpanKindServer {
		t.Errorf("span %q kind %v, want \"POST /hooks/:id\", server", hook.Name(), hook.SpanKind())
	}
	if hook.SpanContext().TraceID().String() != traceID || hook.Parent().SpanID().String() != parentID {
		t.Errorf("span trace %s parent %s; want the caller's trace %s and span %s", hook.SpanContext().TraceID(), hook.Parent().SpanID(), traceID, parentID)
	}
	if seen.SpanID() != hook.SpanContext().SpanID() {
		t.Errorf("the handler ran under span %s, want the request's %s", seen.SpanID(), hook.SpanContext().SpanID())
	}
	wantAttr := func(s sdktrace.ReadOnlySpan, key string, want attribute.Value) {
		t.Helper()
		for _, kv := range s.Attributes() {
			if string(kv.Key) == key {
				if kv.Value != want {
					t.Errorf("%s: %s = %v, want %v", s.Name(), key, kv.Value.String(), want.String())
				}
				return
			}
		}
		t.Errorf("%s: no attribute %s", s.Name(), key)
	}
	wantAttr(hook, "http.route", attribute.StringValue("/hooks/:id"))
	wantAttr(hook, "url.path", attribute.StringValue("/hooks/42"))
	wantAttr(hook, "http.response.status_code", attribute.IntValue(200))
	wantAttr(down, "http.response.status_code", attribute.IntValue(503))
	if down.Status().Code != codes.Error || hook.Status().Code == codes.Error {
		t.Errorf("statuses %v (5xx) and %v (200); want an error only for the 5xx", down.Status(), hook.Status())
	}
	if down.Parent().IsValid() {
		t.Errorf("a request without traceparent has parent %s; want a new trace", down.Parent().SpanID())
	}
}
