// Package httpserver is Std.Http.Server: routes of a method, a path and a
// Sky handler returning `Task Error Response`, served by net/http until the
// program's context ends (SIGTERM or SIGINT in `sky run`), then shut down
// gracefully.
//
// The names follow real Sky's Sky.Http.Server (listen, get, post, text,
// json, withStatus, param, body, ...). A handler's failure maps to a status
// by its ErrorKind (statusOf); a runtime error is 500.
//
// With a TracerProvider (sky run's OpenTelemetry export), each request is a
// server span, continuing the caller's trace when the request carries a W3C
// traceparent header; the handler's Task runs under it, so the runs it
// starts and the signals it sends are in that trace.
//
// It may import runtime/task, runtime/value, OpenTelemetry's API and the
// standard library; never compiler/ or cmd/.
package httpserver

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Server.sky
var source string

// Modules returns the Sky source of Std.Http.Server.
func Modules() map[string]string { return map[string]string{"Std.Http.Server": source} }

// Env is what the server kernels use.
type Env struct {
	// Log receives the "listening on" line and handler failures (stderr).
	Log io.Writer
	// ShutdownGrace is how long listen waits for requests in flight when
	// its context ends (default 10 s).
	ShutdownGrace time.Duration
	// MaxBody caps a request body (default 1 MiB); a larger one is 413.
	MaxBody int64
	// TracerProvider, when set, gets a server span per handled request.
	TracerProvider trace.TracerProvider
}

// DefaultEnv logs to stderr with the documented limits.
func DefaultEnv() Env { return Env{Log: os.Stderr, ShutdownGrace: 10 * time.Second, MaxBody: 1 << 20} }

const routeKind = "Route"

// route is a Route value: a method ("*" for any), its path's segments and
// the Sky handler.
type route struct {
	method   string
	pattern  string
	segments []string
	handler  value.Value
	// files, for a Server.static or Server.staticNotFound route: the file
	// server of its directory, answering every path under the pattern. A
	// staticNotFound route also has a handler, which answers the paths the
	// file server has no file for.
	files http.Handler
}

// KernelsWith returns the Std.Http.Server kernels using env; a zero field
// takes DefaultEnv's.
func KernelsWith(env Env) map[string]value.Kernel {
	def := DefaultEnv()
	if env.Log == nil {
		env.Log = def.Log
	}
	if env.ShutdownGrace <= 0 {
		env.ShutdownGrace = def.ShutdownGrace
	}
	if env.MaxBody <= 0 {
		env.MaxBody = def.MaxBody
	}
	reqArg := func(fn string, v value.Value) (*value.Record, error) {
		if r, ok := v.(*value.Record); ok && r.Index("headers") >= 0 && r.Index("query") >= 0 {
			return r, nil
		}
		return nil, value.BadArg(fn, "a Request", v)
	}
	lookup := func(name string, get func(req *value.Record, key string) (string, bool)) value.Kernel {
		fn := "Server." + strings.TrimPrefix(name, "Server_")
		return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			key, ok := a[0].(string)
			if !ok {
				return nil, value.BadArg(fn, "a String", a[0])
			}
			req, err := reqArg(fn, a[1])
			if err != nil {
				return nil, err
			}
			if v, ok := get(req, key); ok {
				return value.Just(v), nil
			}
			return value.Nothing, nil
		}}
	}
	out := map[string]value.Kernel{}
	for _, k := range []value.Kernel{
		{Name: "Server_route", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return newRoute(a[0], a[1], a[2]) }},
		{Name: "Server_listen", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return listenTask(env, a[0], a[1]) }},
		lookup("Server_header", func(req *value.Record, k string) (string, bool) { return dictLookup(req, "headers", k, true) }),
		{Name: "Server_formValue", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			key, ok := a[0].(string)
			if !ok {
				return nil, value.BadArg("Server.formValue", "a String", a[0])
			}
			req, err := reqArg("Server.formValue", a[1])
			if err != nil {
				return nil, err
			}
			return formValue(req, key), nil
		}},
		{Name: "Server_cookieHeader", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			name, _ := a[0].(string)
			val, _ := a[1].(string)
			return cookieHeader(name, val)
		}},
		{Name: "Server_withCookie", Arity: 1, Fn: withCookie},
		{Name: "Server_static", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return staticRoute("Server.static", a[0], a[1], nil) }},
		{Name: "Server_staticNotFound", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			return staticRoute("Server.staticNotFound", a[0], a[1], a[2])
		}},
	} {
		out[k.Name] = k
	}
	return out
}

// newRoute checks a route's path: it starts with "/", and a `:name`
// segment has a name. A bad path is a runtime error naming it (it is
// program text, not input).
func newRoute(m, p, h value.Value) (value.Value, error) {
	method, _ := m.(string)
	pattern, ok := p.(string)
	if !ok {
		return nil, value.BadArg("Server."+strings.ToLower(method), "a String path", p)
	}
	if !strings.HasPrefix(pattern, "/") {
		return nil, &value.RuntimeError{Message: fmt.Sprintf("Server.%s %q: a route's path starts with /; hint: %q", strings.ToLower(method), pattern, "/"+pattern)}
	}
	segments := splitPath(pattern)
	for _, s := range segments {
		if s == ":" {
			return nil, &value.RuntimeError{Message: fmt.Sprintf("Server route %q: a : segment needs a name; hint: /orders/:id", pattern)}
		}
	}
	return value.Opaque{Kind: routeKind, V: &route{method: method, pattern: pattern, segments: segments, handler: h}}, nil
}

// staticRoute is real Sky's `Server.static urlPrefix directory`: GET (and
// HEAD) of any path under the prefix serves the file of that name under the
// directory (net/http's file server: no path leaves the directory, a
// directory without index.html is listed, a missing file is 404). With a
// notFound handler it is `Server.staticNotFound`: a request the file server
// would answer 404 runs the handler instead (serveStatic).
func staticRoute(fn string, prefix, directory, notFound value.Value) (value.Value, error) {
	dir, ok := directory.(string)
	if !ok {
		return nil, value.BadArg(fn, "a directory (String)", directory)
	}
	v, err := newRoute(http.MethodGet, prefix, notFound)
	if err != nil {
		return nil, err
	}
	rt := v.(value.Opaque).V.(*route)
	rt.files = http.StripPrefix(strings.TrimSuffix(rt.pattern, "/"), http.FileServer(http.Dir(dir)))
	return v, nil
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// match reports whether path's segments fit the route, and its captures.
func (rt *route) match(segments []string) (map[string]string, bool) {
	if rt.files != nil && len(segments) >= len(rt.segments) {
		segments = segments[:len(rt.segments)]
	}
	if len(segments) != len(rt.segments) {
		return nil, false
	}
	var params map[string]string
	for i, s := range rt.segments {
		if name, ok := strings.CutPrefix(s, ":"); ok {
			if params == nil {
				params = map[string]string{}
			}
			params[name] = segments[i]
		} else if s != segments[i] {
			return nil, false
		}
	}
	return params, true
}

func listenTask(env Env, p, rs value.Value) (value.Value, error) {
	port, ok := p.(int64)
	if !ok {
		return nil, value.BadArg("Server.listen", "an Int port", p)
	}
	list, ok := rs.(*value.List)
	if !ok {
		return nil, value.BadArg("Server.listen", "a List Route", rs)
	}
	var routes []*route
	for _, v := range list.Slice() {
		o, ok := v.(value.Opaque)
		if !ok || o.Kind != routeKind {
			return nil, value.BadArg("Server.listen", "a List Route", rs)
		}
		routes = append(routes, o.V.(*route))
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		if port < 0 || port > 65535 {
			return nil, task.Errorf(task.InvalidInput, "Server.listen: port %d is not from 0 to 65535; hint: 8080, or 0 for a free port", port)
		}
		seen := map[string]string{}
		for _, rt := range routes {
			key := rt.method + " " + strings.Join(normalSegments(rt.segments), "/")
			if first, dup := seen[key]; dup {
				return nil, task.Errorf(task.InvalidInput, "Server.listen: two routes for %s %s and %s; hint: the second never serves a request, remove one", methodName(rt.method), first, rt.pattern)
			}
			seen[key] = rt.pattern
		}
		return value.Unit{}, serve(ctx, env, int(port), routes)
	})}, nil
}

// normalSegments makes `:id` and `:name` the same segment, for the
// duplicate check.
func normalSegments(segments []string) []string {
	out := make([]string, len(segments))
	for i, s := range segments {
		if strings.HasPrefix(s, ":") {
			s = ":"
		}
		out[i] = s
	}
	return out
}

func methodName(m string) string {
	if m == "*" {
		return "any method"
	}
	return m
}

// serve listens and serves until ctx ends, then shuts down gracefully.
func serve(ctx context.Context, env Env, port int, routes []*route) error {
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		return task.Errorf(task.Io, "Server.listen %d: %w; hint: is another server on that port? pick another, or 0 for a free one", port, err)
	}
	srv := &http.Server{
		Handler:           &mux{env: env, routes: routes},
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	fmt.Fprintf(env.Log, "[INFO] Std.Http.Server: listening on http://127.0.0.1:%d\n", ln.Addr().(*net.TCPAddr).Port)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return task.Errorf(task.Io, "Server.listen %d: %w", port, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), env.ShutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	<-done
	if err != nil {
		return task.Errorf(task.Timeout, "Server.listen %d: requests were still running %s after the stop signal: %w", port, env.ShutdownGrace, err)
	}
	fmt.Fprintf(env.Log, "[INFO] Std.Http.Server: stopped (port %d)\n", port)
	return nil
}

// mux dispatches a request to the first matching route; a GET route also
// answers HEAD (net/http sends no body).
type mux struct {
	env    Env
	routes []*route
	logMu  sync.Mutex
}

func (m *mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	segments := splitPath(r.URL.Path)
	var allowed []string
	for _, rt := range m.routes {
		params, ok := rt.match(segments)
		if !ok {
			continue
		}
		if rt.method != "*" && rt.method != r.Method && (r.Method != http.MethodHead || rt.method != http.MethodGet) {
			allowed = append(allowed, rt.method)
			continue
		}
		if rt.files != nil {
			m.serveStatic(w, r, rt)
			return
		}
		m.run(w, r, rt, params)
		return
	}
	if len(allowed) > 0 {
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: this path takes %s", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
}

// run reads the body, runs the handler and writes its Response, in a
// server span when there is a TracerProvider.
func (m *mux) run(w http.ResponseWriter, r *http.Request, rt *route, params map[string]string) {
	if m.env.TracerProvider != nil {
		ctx := propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		ctx, span := m.env.TracerProvider.Tracer(tracerName).Start(ctx, r.Method+" "+rt.pattern,
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("http.route", rt.pattern),
				attribute.String("url.path", r.URL.Path)))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			span.SetAttributes(attribute.Int("http.response.status_code", rec.status))
			if rec.status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(rec.status))
			}
			span.End()
		}()
		w, r = rec, r.WithContext(ctx)
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, m.env.MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over %d bytes", m.env.MaxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "cannot read the request body: "+err.Error())
		return
	}
	what := "the handler of " + methodName(rt.method) + " " + rt.pattern
	v, err := task.Run(r.Context(), value.ApplyTask(what, rt.handler, requestRecord(r, string(data), params)))
	if err != nil {
		m.fail(w, r, what, err)
		return
	}
	resp, err := responseOf(v)
	if err != nil {
		m.fail(w, r, what, err)
		return
	}
	for k, val := range resp.headers {
		// A value of several lines is one header line each (Set-Cookie
		// from withCookie; a newline cannot be in a header value).
		for _, line := range strings.Split(val, "\n") {
			w.Header().Add(k, line)
		}
	}
	if resp.contentType != "" {
		w.Header().Set("Content-Type", resp.contentType)
	}
	w.WriteHeader(resp.status)
	io.WriteString(w, resp.body)
}

// fail answers a failed handler: a Sky Error by its kind (statusOf), with
// its message for a 4xx; anything else, and a 5xx's message, is logged and
// answered with a generic body.
func (m *mux) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	status := http.StatusInternalServerError
	var te *task.Error
	if errors.As(err, &te) && !value.IsRuntimeError(err) {
		status = statusOf(te.Kind)
	}
	if status < 500 {
		writeError(w, status, te.Error())
		return
	}
	m.logMu.Lock()
	fmt.Fprintf(m.env.Log, "[ERROR] Std.Http.Server: %s %s: %s failed: %v\n", r.Method, r.URL.Path, what, err)
	m.logMu.Unlock()
	writeError(w, status, http.StatusText(status)+" (the server log has the cause)")
}

// statusOf is the HTTP status of a handler failing with kind.
func statusOf(kind task.Kind) int {
	switch kind {
	case task.InvalidInput, task.Decode:
		return http.StatusBadRequest
	case task.PermissionDenied:
		return http.StatusForbidden
	case task.NotFound:
		return http.StatusNotFound
	case task.Conflict:
		return http.StatusConflict
	case task.Timeout:
		return http.StatusGatewayTimeout
	case task.Unavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// response is a Response record read from Sky.
type response struct {
	status      int
	body        string
	contentType string
	headers     map[string]string
}

// responseOf reads a handler's Response; a status out of range is a
// runtime error naming it.
func responseOf(v value.Value) (response, error) {
	rec, ok := v.(*value.Record)
	if !ok {
		return response{}, value.BadArg("a handler", "a Response record", v)
	}
	var resp response
	st, _ := rec.Get("status")
	code, ok := st.(int64)
	if !ok || code < 100 || code > 599 {
		return response{}, &value.RuntimeError{Message: fmt.Sprintf("a handler answered status %s; hint: a status is from 100 to 599, e.g. Server.withStatus 201", value.Show(st))}
	}
	resp.status = int(code)
	b, _ := rec.Get("body")
	resp.body, _ = b.(string)
	ct, _ := rec.Get("contentType")
	resp.contentType, _ = ct.(string)
	h, _ := rec.Get("headers")
	if d, ok := h.(*value.Dict); ok && d != nil {
		resp.headers = map[string]string{}
		for i := 0; i < d.Size(); i++ {
			k, val := d.Entry(i)
			ks, _ := k.(string)
			vs, _ := val.(string)
			resp.headers[ks] = vs
		}
	}
	return resp, nil
}

// tracerName names the server's spans' instrumentation scope.
const tracerName = "skydurable/stdlib/httpserver"

// serveStatic serves a static route's file. For a staticNotFound route the
// file server answers into a notFoundCatcher first: its 404 (and the
// headers it set for it) never reach the client, and the route's handler
// answers instead, so real files keep the file server's content types,
// ranges and path checks.
func (m *mux) serveStatic(w http.ResponseWriter, r *http.Request, rt *route) {
	if rt.handler == nil {
		rt.files.ServeHTTP(w, r)
		return
	}
	c := &notFoundCatcher{w: w, header: http.Header{}}
	rt.files.ServeHTTP(c, r)
	if c.caught {
		m.run(w, r, rt, nil)
	}
}

// notFoundCatcher passes a file server's answer through unless its status
// is 404, which it swallows (status, headers and body) and records.
type notFoundCatcher struct {
	w      http.ResponseWriter
	header http.Header
	caught bool
	sent   bool
}

func (c *notFoundCatcher) Header() http.Header { return c.header }

func (c *notFoundCatcher) WriteHeader(code int) {
	if c.sent || c.caught {
		return
	}
	if code == http.StatusNotFound {
		c.caught = true
		return
	}
	c.sent = true
	for k, v := range c.header {
		c.w.Header()[k] = v
	}
	c.w.WriteHeader(code)
}

func (c *notFoundCatcher) Write(b []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	if c.caught {
		return len(b), nil
	}
	return c.w.Write(b)
}

// statusRecorder remembers the status a handler answered, for its span.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
