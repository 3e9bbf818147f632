package ui

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// csrf reads the CSRF token from an action's confirmation page.
func (f *fixture) csrf(path string) string {
	f.t.Helper()
	body := f.page(path, `id="confirm"`)
	_, rest, ok := strings.Cut(body, `name="csrf" value="`)
	token, _, _ := strings.Cut(rest, `"`)
	if !ok || token == "" {
		f.t.Fatalf("%s has no CSRF token:\n%s", path, body)
	}
	return token
}

// TestActions runs each action through its confirmation page, and checks
// the refusals carry the engine's (the CLI's) words and change nothing.
func TestActions(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		token := f.csrf("/runs/broken-1/retry")

		// Without the CSRF token, or with another, nothing happens.
		for _, form := range []url.Values{{}, {"csrf": {"forged"}}} {
			if status, _ := f.post("/runs/broken-1/retry", form); status != http.StatusForbidden {
				t.Errorf("POST retry with csrf %q = %d, want 403", form.Get("csrf"), status)
			}
		}
		if got := f.status("broken-1"); got != durable.StatusDead {
			t.Fatalf("a refused retry changed the run: %s", got)
		}
		if status, body := f.get("/runs/broken-1/retry?csrf=" + token); status != http.StatusOK || f.status("broken-1") != durable.StatusDead {
			t.Fatalf("a GET acted: %d %s", status, body)
		}

		for _, c := range []struct {
			path   string
			form   url.Values
			status int
			want   string // in the redirect or the page
			run    string
			after  durable.Status
		}{
			{"/runs/broken-1/retry", nil, http.StatusSeeOther, "is+due+again", "broken-1", durable.StatusWaiting},
			{"/runs/broken-1/retry", nil, http.StatusConflict, `cannot retry run "broken-1": it is waiting and only failed or dead runs can be retried`, "broken-1", durable.StatusWaiting},
			{"/runs/order-2/cancel", nil, http.StatusConflict, `cannot cancel run "order-2": it is done and it has already finished`, "order-2", durable.StatusDone},
			{"/runs/order-2/signal", url.Values{"name": {"go"}, "payload": {`"late"`}}, http.StatusSeeOther, "ignored%3A+the+run+is+done", "order-2", durable.StatusDone},
			{"/runs/order-1/signal", url.Values{"name": {"go"}, "payload": {`not json`}}, http.StatusBadRequest, "is not valid JSON", "order-1", durable.StatusWaiting},
			{"/runs/order-1/signal", url.Values{"name": {""}, "payload": {`1`}}, http.StatusBadRequest, "a signal needs a name", "order-1", durable.StatusWaiting},
			{"/runs/nope/retry", nil, http.StatusNotFound, `no run with id "nope"`, "order-1", durable.StatusWaiting},
			{"/runs/order-1/signal", url.Values{"name": {"go"}, "payload": {`"` + xss + `"`}}, http.StatusSeeOther, "signal+go+to+run+order-1+stored", "order-1", durable.StatusWaiting},
			{"/runs/order-1/signal", url.Values{"name": {"go"}, "payload": {`"again"`}}, http.StatusSeeOther, "the+first+one+wins", "order-1", durable.StatusWaiting},
			{"/runs/ghost-1/signal", url.Values{"name": {"go"}, "payload": {`1`}}, http.StatusSeeOther, "/orphans?done=signal+go+to+run+ghost-1", "order-1", durable.StatusWaiting},
			{"/runs/order-1/cancel", nil, http.StatusSeeOther, "cancelled", "order-1", durable.StatusCancelled},
			{"/runs/order-1/signal", url.Values{"name": {"go"}, "payload": {`"late"`}}, http.StatusSeeOther, "ignored%3A+the+run+is+cancelled", "order-1", durable.StatusCancelled},
		} {
			form := url.Values{"csrf": {token}}
			for k, v := range c.form {
				form[k] = v
			}
			status, body := f.post(c.path, form)
			want := c.want
			if status != http.StatusSeeOther {
				want = html.EscapeString(want)
			}
			if status != c.status || !strings.Contains(body, want) {
				t.Errorf("POST %s %v = %d %q\nwant %d with %q", c.path, c.form, status, body, c.status, want)
			}
			if got := f.status(c.run); got != c.after {
				t.Errorf("after POST %s, run %s is %s, want %s", c.path, c.run, got, c.after)
			}
		}
		// The signal stays in the mailbox (escaped on the page), an orphan
		// now that its run is cancelled, and the retried run was advanced
		// no further by the dashboard itself.
		signals, err := f.e.Signals(f.ctx, "order-1")
		if err != nil || len(signals) != 1 || signals[0].Payload != `"`+xss+`"` {
			t.Errorf("order-1's mailbox = %+v, %v", signals, err)
		}
		f.page("/runs/order-1", "orphan (the run finished without consuming it)", html.EscapeString(xss))
		f.page("/runs/broken-1?done=run+broken-1+is+due+again", `id="notice">run broken-1 is due again`)
	})
}

// TestSignalToNoRunYet: a signal sent from the dashboard to an id no run
// has lands on the orphan signals page, which lists it and says so; the run
// page it used to land on is a 404 for an id with no run.
func TestSignalToNoRunYet(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		form := url.Values{"csrf": {f.csrf("/runs/ghost-1/signal")}, "name": {"go"}, "payload": {`"` + xss + `"`}}
		status, loc := f.post("/runs/ghost-1/signal", form)
		if status != http.StatusSeeOther || !strings.HasPrefix(loc, "/orphans?done=") {
			t.Fatalf("POST signal to ghost-1 = %d %q, want 303 to /orphans?done=", status, loc)
		}
		f.page(loc, `id="notice">signal go to run ghost-1 stored`, "no run with id &#34;ghost-1&#34; exists yet", "<td>ghost-1</td>")
	})
}

// TestSecurity: the token on every request, read-only mode, the headers.
func TestSecurity(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	f := newFixture(t, d, Options{Token: "s3cret", ReadOnly: true})
	for _, c := range []struct {
		path   string
		header []string
		status int
	}{
		{"/", nil, http.StatusUnauthorized},
		{"/runs/order-1", nil, http.StatusUnauthorized},
		{"/static/style.css", nil, http.StatusUnauthorized},
		{"/", []string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{"/?token=wrong", nil, http.StatusUnauthorized},
		{"/", []string{"Authorization", "Bearer s3cret"}, http.StatusOK},
		{"/", []string{"Authorization", "bearer s3cret"}, http.StatusOK}, // the scheme in any case
		{"/", []string{"Authorization", "Basic s3cret"}, http.StatusUnauthorized},
		{"/runs", []string{"Cookie", tokenCookie + "=s3cret"}, http.StatusOK},
		{"/runs?status=dead&token=s3cret", nil, http.StatusSeeOther},
	} {
		status, body := f.get(c.path, c.header...)
		if status != c.status {
			t.Errorf("GET %s %v = %d, want %d: %s", c.path, c.header, status, c.status, body)
		}
	}
	// The token in the URL becomes a cookie and leaves the address.
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/runs?status=dead&token=s3cret", nil)
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if loc := resp.Header.Get("Location"); loc != "/runs?status=dead" || len(resp.Cookies()) != 1 || !resp.Cookies()[0].HttpOnly {
		t.Errorf("?token= redirected to %q with cookies %v", loc, resp.Cookies())
	}

	auth := []string{"Authorization", "Bearer s3cret"}
	status, body := f.get("/runs/broken-1", auth...)
	if status != http.StatusOK || strings.Contains(body, `id="action-`) || !strings.Contains(body, "read-only") {
		t.Errorf("a read-only run page offers actions (%d):\n%s", status, body)
	}
	if status, _ := f.get("/runs/broken-1/retry", auth...); status != http.StatusForbidden {
		t.Errorf("read-only confirmation page = %d, want 403", status)
	}
	req, _ = http.NewRequest(http.MethodPost, f.srv.URL+"/runs/broken-1/retry", strings.NewReader("csrf="+f.ui.opts.CSRF))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Origin", f.srv.URL)
	if status, body := f.do(req); status != http.StatusForbidden || !strings.Contains(body, "read-only") {
		t.Errorf("read-only POST retry = %d %s, want 403", status, body)
	}
	if got := f.status("broken-1"); got != durable.StatusDead {
		t.Errorf("read-only mode let a retry through: %s", got)
	}

	req, _ = http.NewRequest(http.MethodGet, f.srv.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("security headers: %v", resp.Header)
	}
}
