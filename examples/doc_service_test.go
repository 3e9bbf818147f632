package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestDocServiceProgram runs the webhook service program of
// docs/language.md ("Additions from real Sky") as written, with the real
// sky binary: 20 webhooks sent at once are each accepted (202), a body of
// the wrong shape is 400 naming the bad value, and SIGTERM stops it with
// exit 0.
func TestDocServiceProgram(t *testing.T) {
	text, err := os.ReadFile("../docs/language.md")
	if err != nil {
		t.Fatal(err)
	}
	const open = "  ```elm module\n  module Main"
	start := strings.Index(string(text), open)
	if start < 0 {
		t.Fatal("docs/language.md has no indented service program")
	}
	body := string(text[start+len("  ```elm module\n"):])
	body = body[:strings.Index(body, "  ```\n")]
	var src strings.Builder
	for _, l := range strings.Split(body, "\n") {
		src.WriteString(strings.TrimPrefix(l, "  ") + "\n")
	}
	if !strings.Contains(src.String(), "Server.listen") {
		t.Fatalf("the indented program of docs/language.md is not the service:\n%s", src.String())
	}
	sky := buildSky(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "src", "Main.sky"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, sky, dir, "0")

	var wg sync.WaitGroup
	codes := make([]string, 20)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body, err := request("POST", srv.base+"/webhooks/payment", fmt.Sprintf(`{"orderId":"order-%d","reference":"stl-%d"}`, i, i))
			codes[i] = fmt.Sprintf("%d %s", code, strings.TrimSpace(body))
			if err != nil {
				codes[i] = err.Error()
			}
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != "202 accepted" {
			t.Errorf("webhook %d = %q, want 202 accepted", i, c)
		}
	}
	if code, body := mustRequest(t, "POST", srv.base+"/webhooks/payment", `{"orderId":1}`); code != 400 || !strings.Contains(body, "$.orderId: expected a string, found 1") {
		t.Errorf("a bad webhook = %d %s; want 400 naming $.orderId", code, body)
	}
	if err := srv.stop(); err != nil {
		t.Error(err)
	}
}
