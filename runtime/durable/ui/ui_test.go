package ui

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// get fetches path without following redirects and returns the status and
// body.
func (f *fixture) get(path string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return f.do(req)
}

func (f *fixture) post(path string, form url.Values) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", f.srv.URL) // the dashboard's own form
	return f.do(req)
}

func (f *fixture) do(req *http.Request) (int, string) {
	f.t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	if loc := resp.Header.Get("Location"); loc != "" {
		return resp.StatusCode, loc
	}
	return resp.StatusCode, string(b)
}

// page fetches path, wants 200 and every one of want in the body.
func (f *fixture) page(path string, want ...string) string {
	f.t.Helper()
	status, body := f.get(path)
	if status != http.StatusOK {
		f.t.Fatalf("GET %s = %d, want 200:\n%s", path, status, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			f.t.Errorf("GET %s lacks %q", path, w)
		}
	}
	return body
}

var runLink = regexp.MustCompile(`<a href="/runs/([^"?/]+)">`)

// listed is the run ids a runs page links to, in order.
func listed(body string) []string {
	var ids []string
	for _, m := range runLink.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

func TestPages(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		overview := f.page("/", "Overview", `<a href="/runs?workflow=checkout">checkout</a>`, `<a href="/runs?workflow=broken&amp;status=dead">1</a>`,
			`id="started-total">3<`, `id="finished-total">2<`, `id="stuck-count">0<`, "none due")
		if strings.Contains(overview, "<rect") == false {
			t.Error("the overview has no chart")
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			// Sorted: runs started in the same millisecond list by id
			// (the order itself is the store suite's to check).
			{"", []string{"broken-1", "order-1", "order-2"}},
			{"?status=dead", []string{"broken-1"}},
			{"?workflow=checkout", []string{"order-1", "order-2"}},
			{"?workflow=checkout&status=done", []string{"order-2"}},
			{"?q=order-", []string{"order-1", "order-2"}},
			{"?q=nothing", nil},
		} {
			body := f.page("/runs"+c.query, "Runs")
			if got := slices.Sorted(slices.Values(listed(body))); !slices.Equal(got, c.want) {
				t.Errorf("/runs%s lists %v, want %v", c.query, got, c.want)
			}
		}
		f.page("/runs?status=dead", `<option selected>dead</option>`)

		// The run page: timeline, mailbox, payloads, and no live markup.
		body := f.page("/runs/order-2", `id="run-status">done<`, "reserve", "finish", "signal:go", "consumed (its payload is in the journal)", `id="output"`)
		for _, b := range []string{body, f.page("/runs/order-1", "waiting for go"), f.page("/runs/broken-1", "payment provider down")} {
			if strings.Contains(b, "<script>document") || strings.Contains(b, "<b>card-9") {
				t.Errorf("a payload reached the page as markup:\n%s", b)
			}
		}
		f.page("/runs/order-1", html.EscapeString(`"`+xss+`"`))
		f.page("/runs/broken-1", "&lt;b&gt;card-9&lt;/b&gt;", `id="action-retry"`)

		for _, c := range []struct {
			path   string
			status int
			want   string
		}{
			{"/runs/nope", http.StatusNotFound, html.EscapeString(`durable: no run with id "nope"`)},
			{"/runs?status=bogus", http.StatusBadRequest, "unknown run status"},
			{"/runs?before=garbage", http.StatusBadRequest, "is not one this dashboard made"},
			{"/runs/order-1/explode", http.StatusNotFound, "404"},
		} {
			status, body := f.get(c.path)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Errorf("GET %s = %d %q, want %d with %q", c.path, status, body, c.status, c.want)
			}
		}
	})
}

// TestPagination walks the list by its "older" links: every run once, in
// order, fifty at a time.
func TestPagination(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		for i := range 2*PageSize + 7 {
			if err := f.e.StartJSON(f.ctx, f.defs[0], fmt.Sprintf("bulk-%03d", i), `"x"`); err != nil {
				t.Fatal(err)
			}
		}
		all, err := f.e.ListRuns(f.ctx, durable.ListFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		var walked []string
		path, pages := "/runs", 0
		for path != "" && pages < 10 {
			body := f.page(path)
			ids := listed(body)
			if len(ids) > PageSize {
				t.Fatalf("page %d has %d runs", pages, len(ids))
			}
			walked = append(walked, ids...)
			path = ""
			if m := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
			}
			pages++
		}
		var want []string
		for _, r := range all {
			want = append(want, r.ID)
		}
		if pages != 3 || strings.Join(walked, ",") != strings.Join(want, ",") {
			t.Errorf("walked %d pages: %v\nwant 3 pages: %v", pages, walked, want)
		}
		// A filter stays on through the pages.
		body := f.page("/runs?workflow=broken")
		if ids := listed(body); len(ids) != 1 || strings.Contains(body, `id="next"`) {
			t.Errorf("/runs?workflow=broken = %v, with a next link: %v", ids, strings.Contains(body, `id="next"`))
		}
	})
}
