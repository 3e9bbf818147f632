package httpserver

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func kernel(t *testing.T, ks map[string]value.Kernel, name string, args ...value.Value) (value.Value, error) {
	t.Helper()
	return ks[name].Fn(args)
}

func echoHandler() value.Value {
	return value.NewFunc("echo", 1, func(a []value.Value) (value.Value, error) {
		body, _ := a[0].(*value.Record).Get("body")
		return value.Task{T: task.Succeed[value.Value](value.NewRecord(map[string]value.Value{
			"status": int64(200), "body": body, "headers": (*value.Dict)(nil), "contentType": "text/plain",
		}))}, nil
	})
}

// TestListenRefusesABusyPort: a port another listener holds fails with an
// Io error naming it, and a port out of range with InvalidInput.
func TestListenRefusesABusyPort(t *testing.T) {
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := int64(l.Addr().(*net.TCPAddr).Port)
	ks := KernelsWith(Env{Log: io.Discard})
	for _, c := range []struct {
		port int64
		kind task.Kind
		want string
	}{
		{port, task.Io, "Server.listen " + strconv.FormatInt(port, 10) + ": "},
		{70000, task.InvalidInput, "port 70000 is not from 0 to 65535"},
	} {
		tv, err := kernel(t, ks, "Server_listen", c.port, (*value.List)(nil))
		if err != nil {
			t.Fatal(err)
		}
		_, err = task.Run(context.Background(), tv.(value.Task).T)
		if te := task.As(err); te == nil || te.Kind != c.kind || !strings.Contains(te.Message, c.want) {
			t.Errorf("listen %d: got %v, want %v containing %q", c.port, err, c.kind, c.want)
		}
	}
}

// TestRouteRefusesABadPath: a path without a leading slash, or a `:` with
// no name, is a runtime error naming it.
func TestRouteRefusesABadPath(t *testing.T) {
	ks := KernelsWith(Env{})
	for path, want := range map[string]string{"orders": `"orders": a route's path starts with /; hint: "/orders"`, "/a/:": `"/a/:": a : segment needs a name`} {
		_, err := kernel(t, ks, "Server_route", "GET", path, echoHandler())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("route %q: got %v, want %q", path, err, want)
		}
	}
}

// TestBodyLimitAnd413: a body over MaxBody is refused with 413 before the
// handler runs; one within it reaches the handler.
func TestBodyLimitAnd413(t *testing.T) {
	ks := KernelsWith(Env{Log: io.Discard, MaxBody: 8})
	rt, err := kernel(t, ks, "Server_route", "POST", "/echo", echoHandler())
	if err != nil {
		t.Fatal(err)
	}
	m := &mux{env: Env{Log: io.Discard, MaxBody: 8}, routes: []*route{rt.(value.Opaque).V.(*route)}}
	srv := &http.Server{Handler: m}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Close()
	for body, want := range map[string]string{"12345678": "200 12345678", "123456789": `413 {"error":"the request body is over 8 bytes"}`} {
		resp, err := http.Post("http://"+l.Addr().String()+"/echo", "text/plain", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := strconv.Itoa(resp.StatusCode) + " " + strings.TrimSpace(string(data)); got != want {
			t.Errorf("POST %d bytes: got %q, want %q", len(body), got, want)
		}
	}
}

// TestStaticNotFoundHeaders: a file under a staticNotFound route is served
// with the file server's content type; a missing one is the handler's
// Response alone, with none of the headers the file server set for its 404.
func TestStaticNotFoundHeaders(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "site.css"), []byte("body {}"), 0o644); err != nil {
		t.Fatal(err)
	}
	ks := KernelsWith(Env{Log: io.Discard})
	rt, err := kernel(t, ks, "Server_staticNotFound", "/assets", dir, echoHandler())
	if err != nil {
		t.Fatal(err)
	}
	m := &mux{env: DefaultEnv(), routes: []*route{rt.(value.Opaque).V.(*route)}}
	for path, want := range map[string][2]string{
		"/assets/site.css":    {"200", "text/css; charset=utf-8"},
		"/assets/missing.css": {"200", "text/plain"},
	} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if got := strconv.Itoa(rec.Code); got != want[0] {
			t.Errorf("GET %s: status %s, want %s", path, got, want[0])
		}
		if got := rec.Header().Get("Content-Type"); got != want[1] {
			t.Errorf("GET %s: Content-Type %q, want %q", path, got, want[1])
		}
		if got := rec.Header().Get("X-Content-Type-Options"); got != "" {
			t.Errorf("GET %s: the file server's 404 header leaked: X-Content-Type-Options %q", path, got)
		}
	}
}

// TestStaticMissingFileIsPlainText pins what docs/stdlib.md says of
// Server.static: a missing file is the file server's plain-text 404, while
// the server's own 404 (no route) is JSON.
func TestStaticMissingFileIsPlainText(t *testing.T) {
	ks := KernelsWith(Env{Log: io.Discard})
	rt, err := kernel(t, ks, "Server_static", "/assets", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &mux{env: DefaultEnv(), routes: []*route{rt.(value.Opaque).V.(*route)}}
	for path, want := range map[string][2]string{
		"/assets/missing.css": {"text/plain; charset=utf-8", "404 page not found\n"},
		"/nowhere":            {"application/json", `{"error":"no route for GET /nowhere"}` + "\n"},
	} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != want[0] || rec.Body.String() != want[1] {
			t.Errorf("GET %s: %d %q %q, want 404 %q %q", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.String(), want[0], want[1])
		}
	}
}
