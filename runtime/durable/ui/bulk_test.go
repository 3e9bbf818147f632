package ui

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// TestBulkActions: a filtered runs list offers the bulk actions its status
// allows; each leads to a confirmation page with the count, whose form
// POSTs the filters; refusals change nothing.
func TestBulkActions(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		for _, c := range []struct {
			query      string
			want, lack []string
		}{
			{"", nil, []string{`id="bulk"`}},
			{"?q=order", nil, []string{`id="bulk"`}},
			{"?status=dead", []string{`id="bulk-retry" href="/bulk/retry?status=dead"`}, []string{`id="bulk-cancel"`, `id="bulk-release"`}},
			{"?workflow=checkout", []string{`id="bulk-retry" href="/bulk/retry?workflow=checkout"`, `id="bulk-cancel"`, `id="bulk-release"`}, nil},
		} {
			body := f.page("/runs" + c.query)
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("/runs%s lacks %s", c.query, w)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(body, l) {
					t.Errorf("/runs%s offers %s", c.query, l)
				}
			}
		}
		f.page("/bulk/retry?status=dead", `<span id="bulk-count">1</span>`, `name="status" value="dead"`, "journal is kept", `id="confirm-button">Retry 1 run<`)
		for _, c := range []struct {
			path   string
			status int
			want   string
		}{
			{"/bulk/retry?status=waiting", http.StatusBadRequest, `retry applies to failed and dead runs, not &#34;waiting&#34;`},
			{"/bulk/retry", http.StatusBadRequest, "a bulk action needs a filter"},
			{"/bulk/explode?status=dead", http.StatusNotFound, "404"},
		} {
			if status, body := f.get(c.path); status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("GET %s = %d, want %d with %q:\n%.300s", c.path, status, c.status, c.want, body)
			}
		}

		form := url.Values{"status": {"dead"}}
		if status, _ := f.post("/bulk/retry", form); status != http.StatusForbidden {
			t.Errorf("POST /bulk/retry without the CSRF token = %d, want 403", status)
		}
		form.Set("csrf", f.ui.opts.CSRF)
		if status, _ := f.request(http.MethodPost, "/bulk/retry", "", form.Encode(), "Origin", "http://evil.example"); status != http.StatusForbidden {
			t.Errorf("POST /bulk/retry from another origin = %d, want 403", status)
		}
		if got := f.status("broken-1"); got != durable.StatusDead {
			t.Fatalf("a refused bulk retry changed broken-1: %s", got)
		}
		status, loc := f.post("/bulk/retry", form)
		if status != http.StatusSeeOther || loc != "/runs?done=retry%3A+1+run+changed&status=dead" {
			t.Errorf("POST /bulk/retry = %d %q", status, loc)
		}
		if got := f.status("broken-1"); got != durable.StatusWaiting {
			t.Errorf("after the bulk retry broken-1 is %s, want waiting", got)
		}
		f.page(loc, `id="notice">retry: 1 run changed`)
		// The run's history names the dashboard's client, as a single retry's does.
		if body := f.page("/runs/broken-1"); !regexp.MustCompile(`retried by dashboard 127\.0\.0\.1:\d+ \(attempt 1\)`).MatchString(body) {
			t.Errorf("the bulk retry is not recorded as the dashboard's:\n%s", body)
		}
		f.page("/bulk/retry?status=dead", `<span id="bulk-count">0</span>`, `id="none"`)

		status, loc = f.post("/bulk/cancel", url.Values{"csrf": {f.ui.opts.CSRF}, "workflow": {"checkout"}})
		if status != http.StatusSeeOther || !strings.Contains(loc, "cancel%3A+1+run+changed") {
			t.Errorf("POST /bulk/cancel workflow=checkout = %d %q", status, loc)
		}
		if a, b := f.status("order-1"), f.status("order-2"); a != durable.StatusCancelled || b != durable.StatusDone {
			t.Errorf("after the bulk cancel order-1 is %s and order-2 %s, want cancelled and done", a, b)
		}
	})
}

// TestBulkReadOnly: a read-only dashboard offers no bulk action and
// refuses its pages.
func TestBulkReadOnly(t *testing.T) {
	f := newFixture(t, dbtest.Open(t, "sqlite"), Options{ReadOnly: true})
	if body := f.page("/runs?status=dead"); strings.Contains(body, `id="bulk"`) {
		t.Error("a read-only runs list offers bulk actions")
	}
	if status, _ := f.get("/bulk/retry?status=dead"); status != http.StatusForbidden {
		t.Errorf("read-only GET /bulk/retry = %d, want 403", status)
	}
	if status, _ := f.post("/bulk/retry", url.Values{"csrf": {f.ui.opts.CSRF}, "status": {"dead"}}); status != http.StatusForbidden || f.status("broken-1") != durable.StatusDead {
		t.Errorf("read-only POST /bulk/retry = %d, run %s", status, f.status("broken-1"))
	}
}
