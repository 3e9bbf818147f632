package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestUIServerTimeouts: the dashboard's server bounds every phase of a
// connection, and leaves a page time to report a query that hit the
// statement timeout.
func TestUIServerTimeouts(t *testing.T) {
	hs := uiServer(http.NotFoundHandler())
	if hs.ReadHeaderTimeout <= 0 || hs.ReadTimeout < hs.ReadHeaderTimeout || hs.IdleTimeout <= 0 {
		t.Errorf("read timeouts: header %s, whole request %s, idle %s; want all set, the header's within the request's",
			hs.ReadHeaderTimeout, hs.ReadTimeout, hs.IdleTimeout)
	}
	if hs.WriteTimeout <= durableStatementTimeout {
		t.Errorf("WriteTimeout %s is not above the statement timeout %s: a slow page's error would be cut", hs.WriteTimeout, durableStatementTimeout)
	}
}

// TestUITokenFromEnvironment: `sky durable ui` takes its token from
// SKY_DURABLE_UI_TOKEN, so it need not be on the command line (where ps
// shows it), and then refuses requests without it.
func TestUITokenFromEnvironment(t *testing.T) {
	t.Setenv(uiTokenEnv, "from-env")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dsn := dbtest.URL(t, "sqlite")
	d, err := db.Open(ctx, "sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	pr, pw := io.Pipe()
	var errOut bytes.Buffer
	exited := make(chan int, 1)
	go func() {
		exited <- runDurable(ctx, []string{"ui", "--addr", "127.0.0.1:0", "--db", dsn}, streams{stdin: strings.NewReader(""), stdout: pw, stderr: &errOut})
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no first line from sky durable ui: %v (%d) %s", err, <-exited, errOut.String())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := regexp.MustCompile(`serving (http://[^/]+)/.*token required`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("sky durable ui does not say it needs its token: %q", line)
	}
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer wrong", http.StatusUnauthorized}, {"Bearer from-env", http.StatusOK}} {
		req, _ := http.NewRequest(http.MethodGet, m[1]+"/runs", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET /runs with %q = %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	cancel()
	if code := <-exited; code != exitOK {
		t.Errorf("sky durable ui exited %d: %s", code, errOut.String())
	}
	if strings.Contains(errOut.String(), "--token is visible") {
		t.Errorf("a token from the environment drew the --token note: %s", errOut.String())
	}
}
