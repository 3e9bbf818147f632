package ui

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestRunPageShowsHistory: the run page lists the run's history, escaped,
// and an action taken on the dashboard is recorded with the client's address.
func TestRunPageShowsHistory(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		f.page("/runs/order-2", `id="history"`, `done by ui-test (attempt 1)`)
		// A dead run's page leads with the step it failed at and the error.
		f.page("/runs/broken-1", `<p class="failure" id="failure">failed at step <b>charge</b>: <span class="error">Unavailable: payment provider down &lt;b&gt;`)
		if status, _ := f.post("/runs/broken-1/retry", url.Values{"csrf": {f.csrf("/runs/broken-1/retry")}}); status != http.StatusSeeOther {
			t.Fatalf("POST retry = %d, want 303", status)
		}
		body := f.page("/runs/broken-1", `id="history"`,
			`dead by ui-test at step &#34;charge&#34; (attempt 1): Unavailable: payment provider down &lt;b&gt;`)
		if !regexp.MustCompile(`retried by dashboard 127\.0\.0\.1:\d+ \(attempt 1\)`).MatchString(body) {
			t.Errorf("the run page does not show the dashboard's retry with the client's address:\n%s", body)
		}
	})
}
