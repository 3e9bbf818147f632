package ui

import (
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestSearch: the runs list's search box finds runs by input, output and
// last error, finished or not, with the other filters, pages through its
// matches, and refuses a text too short to search; on both stores.
func TestSearch(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		f.page("/runs", `name="search"`, `id="nav-search"`)
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"?search=PROVIDER+down", []string{"broken-1"}},                // a dead run's last error
			{"?search=card-9", []string{"broken-1"}},                       // its input
			{"?search=%22R:TWO", []string{"order-2"}},                      // a done run's output
			{"?search=document.title", []string{"order-1", "order-2"}},     // a waiting run's input, a done run's output
			{"?search=document.title&status=waiting", []string{"order-1"}}, // with a filter
			{"?search=nowhere+to+be+found", nil},
		} {
			body := f.page("/runs"+c.query, "Runs")
			if got := slices.Sorted(slices.Values(listed(body))); !slices.Equal(got, c.want) {
				t.Errorf("/runs%s lists %v, want %v", c.query, got, c.want)
			}
			if strings.Contains(body, `id="bulk"`) {
				t.Errorf("/runs%s offers bulk actions, which cannot filter by a search", c.query)
			}
		}
		f.page("/runs?search=card-9", `value="card-9"`)
		status, body := f.get("/runs?search=ab")
		if status != http.StatusBadRequest || !strings.Contains(body, html.EscapeString(`the search text "ab" is shorter than 3 characters`)) {
			t.Errorf("GET /runs?search=ab = %d %q, want 400 naming the text", status, body)
		}

		// Pages: the search stays on through the "older" links.
		for i := range PageSize + 7 {
			if err := f.e.StartJSON(f.ctx, f.defs[0], fmt.Sprintf("paged-%03d", i), `"needle"`); err != nil {
				t.Fatal(err)
			}
		}
		var walked []string
		path, pages := "/runs?search=NEEDLE", 0
		for path != "" && pages < 5 {
			body := f.page(path)
			walked = append(walked, listed(body)...)
			path = ""
			if m := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(body); m != nil {
				path = html.UnescapeString(m[1])
				if !strings.Contains(path, "search=NEEDLE") {
					t.Errorf("the next page's link %s drops the search", path)
				}
			}
			pages++
		}
		if pages != 2 || len(walked) != PageSize+7 || walked[0] != fmt.Sprintf("paged-%03d", PageSize+6) || walked[len(walked)-1] != "paged-000" {
			t.Errorf("walked %d pages of %d runs: %v", pages, len(walked), walked)
		}
	})
}
