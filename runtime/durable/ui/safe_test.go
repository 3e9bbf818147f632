package ui

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// request sends method path with the header pairs, Host host when not "".
func (f *fixture) request(method, path, host, body string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return f.do(req)
}

// TestHostWithoutToken: without a token the dashboard answers only a Host
// that names this machine, so a page whose DNS points its own name at
// 127.0.0.1 (DNS rebinding) gets nothing.
func TestHostWithoutToken(t *testing.T) {
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{})
	port := strings.TrimPrefix(f.srv.URL, "http://127.0.0.1")
	for _, host := range []string{"127.0.0.1" + port, "127.0.0.1", "localhost" + port, "LOCALHOST", "[::1]" + port, "[::1]", "127.0.0.2:80"} {
		if status, body := f.request(http.MethodGet, "/runs", host, ""); status != http.StatusOK {
			t.Errorf("GET /runs with Host %s = %d, want 200: %.200s", host, status, body)
		}
	}
	for _, host := range []string{"evil.example", "evil.example" + port, "localhost.evil.example", "192.168.1.5" + port, "0.0.0.0" + port} {
		status, body := f.request(http.MethodGet, "/runs/broken-1", host, "")
		if status != http.StatusMisdirectedRequest || !strings.Contains(body, `Host "`+host+`"`) || !strings.Contains(body, "SKY_DURABLE_UI_TOKEN") {
			t.Errorf("GET with Host %s = %d %q, want 421 naming the host and the token hint", host, status, body)
		}
		if strings.Contains(body, "payment provider") {
			t.Errorf("a foreign Host read a run: %s", body)
		}
	}
	// With a token, the token is the guard: any Host that carries it.
	g := newFixture(t, dbtest.Open(t, "sqlite"), Options{Token: "s3cret"})
	if status, body := g.request(http.MethodGet, "/runs", "dash.example.com", "", "Authorization", "Bearer s3cret"); status != http.StatusOK {
		t.Errorf("GET with a token and Host dash.example.com = %d: %.200s", status, body)
	}
}

// TestPostSameOrigin: an action needs an Origin (or, without one, a
// Referer) of the dashboard's own address, with or without a token; a
// refused POST changes nothing.
func TestPostSameOrigin(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Token: token})
		auth := []string{"Authorization", "Bearer " + token}
		if token == "" {
			auth = nil
		}
		form := url.Values{"csrf": {f.ui.opts.CSRF}}.Encode()
		for _, c := range []struct {
			name   string
			header []string
		}{
			{"no Origin nor Referer", nil},
			{"another site", []string{"Origin", "http://evil.example"}},
			{"another port", []string{"Origin", "http://127.0.0.1:1"}},
			{"an opaque origin", []string{"Origin", "null"}},
			{"a foreign Referer", []string{"Referer", "http://evil.example/runs/broken-1/retry"}},
		} {
			status, body := f.request(http.MethodPost, "/runs/broken-1/retry", "", form, append(c.header, auth...)...)
			if status != http.StatusForbidden || !strings.Contains(body, "origin is") {
				t.Errorf("token %q, %s: POST = %d %q, want 403 naming the origin", token, c.name, status, body)
			}
			if got := f.status("broken-1"); got != durable.StatusDead {
				t.Fatalf("token %q, %s: a refused POST retried the run: %s", token, c.name, got)
			}
		}
		status, body := f.request(http.MethodPost, "/runs/broken-1/retry", "", form, append([]string{"Referer", f.srv.URL + "/runs/broken-1/retry"}, auth...)...)
		if status != http.StatusSeeOther || f.status("broken-1") != durable.StatusWaiting {
			t.Errorf("token %q: a same-origin POST (by Referer) = %d %q, run %s", token, status, body, f.status("broken-1"))
		}
	}
}

// TestTokenRedirectStaysHere: trading ?token= for the cookie redirects to a
// path of this host, whatever the path looks like.
func TestTokenRedirectStaysHere(t *testing.T) {
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{Token: "s3cret"})
	for _, c := range []struct{ path, want string }{
		{"//evil.example/?token=s3cret", "/evil.example/"},
		{"///evil.example/x?token=s3cret&status=dead", "/evil.example/x?status=dead"},
		{`/\evil.example/?token=s3cret`, "/%5Cevil.example/"},
		{"/runs?status=dead&token=s3cret", "/runs?status=dead"},
	} {
		status, loc := f.request(http.MethodGet, c.path, "", "")
		u, err := url.Parse(loc)
		if status != http.StatusSeeOther || err != nil || u.Host != "" || strings.HasPrefix(loc, "//") || strings.HasPrefix(loc, `/\`) {
			t.Errorf("GET %s = %d, Location %q: it must stay on this host", c.path, status, loc)
		}
		if loc != c.want {
			t.Errorf("GET %s redirected to %q, want %q", c.path, loc, c.want)
		}
	}
}

// TestInvalidPaths: a path no page has, or that is not text, is 404 (never
// 500: the database never sees it); a query value that is not text is 400.
func TestInvalidPaths(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		for _, path := range []string{"/static/%ff", "/static/%ff.css", "/static/nope.css", "/static/", "/static/layout.html",
			"/runs/%ff", "/runs/%00", "/runs/a%ffb/retry", "/%ff", "/nope", "/runs/broken-1/explode"} {
			if status, body := f.get(path); status != http.StatusNotFound && status != http.StatusMovedPermanently {
				t.Errorf("GET %s = %d, want 404: %.200s", path, status, body)
			}
		}
		if status, body := f.request(http.MethodPost, "/runs/%ff/retry", "", url.Values{"csrf": {f.ui.opts.CSRF}}.Encode(), "Origin", f.srv.URL); status != http.StatusNotFound {
			t.Errorf("POST /runs/%%ff/retry = %d, want 404: %.200s", status, body)
		}
		for _, path := range []string{"/runs?workflow=%ff", "/runs?q=%00", "/runs?%ff=1"} {
			if status, body := f.get(path); status != http.StatusBadRequest || !strings.Contains(body, "not printable UTF-8") {
				t.Errorf("GET %s = %d %q, want 400", path, status, body)
			}
		}
		f.page("/static/style.css")
		f.page("/static/live.js")
	})
}
