package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// otelProgram starts a one-step run and works it.
const otelProgram = `module Main exposing (main)

import Std.Codec as Codec
import Std.Db as Db
import Std.Durable as Durable exposing (Ctx, WorkflowDef)
import Std.Log exposing (println)


greet : WorkflowDef String String
greet =
    Durable.register "greet" Codec.string Codec.string (\ctx name ->
        Durable.step ctx Codec.string "hello" (Task.succeed ("hello " ++ name)))


main : Task Error ()
main =
    Db.connect ()
        |> Task.andThen (\db ->
            Durable.setup db
                |> Task.andThen (\_ -> Durable.start db greet "greet-ada" "Ada")
                |> Task.andThen (\_ -> Durable.poll db [ Durable.erase greet ])
                |> Task.andThen (\_ -> Durable.status db "greet-ada")
                |> Task.andThen println)
`

// TestOTLPExport runs a program under SKY_OTEL_EXPORTER=otlp against a real
// HTTP server standing in for the collector: at exit the spans arrive at
// /v1/traces and the metrics at /v1/metrics as OTLP protobuf, sent to
// OTEL_EXPORTER_OTLP_ENDPOINT with the OTEL_EXPORTER_OTLP_HEADERS.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if r.Header.Get("Content-Type") != "application/x-protobuf" || r.Header.Get("X-Tenant") != "sky-test" {
			t.Errorf("%s: content type %q, X-Tenant %q", r.URL.Path, r.Header.Get("Content-Type"), r.Header.Get("X-Tenant"))
		}
		got[r.URL.Path] = append(got[r.URL.Path], body...)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()

	t.Chdir(t.TempDir())
	if err := os.WriteFile("main.sky", []byte(otelProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DATABASE_URL", "")
	t.Setenv("SKY_OTEL_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "X-Tenant=sky-test")
	t.Setenv("OTEL_SERVICE_NAME", "otlp-demo")
	var stdout, stderr bytes.Buffer // the program's println goes to the process's stdout
	if code := runCLI([]string{"run", "main.sky"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("sky run: exit %d, stderr %s", code, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	// Protobuf keeps strings as they are, so the span names, attribute
	// values and metric names can be found in the bodies.
	for path, want := range map[string][]string{
		"/v1/traces":  {"durable start greet", "durable attempt greet", "durable step hello", "greet-ada", "otlp-demo"},
		"/v1/metrics": {"durable.runs", "durable.step.duration", "durable.claim.duration", "otlp-demo"},
	} {
		for _, w := range want {
			if !bytes.Contains(got[path], []byte(w)) {
				t.Errorf("%s (%d bytes) lacks %q", path, len(got[path]), w)
			}
		}
	}
}
