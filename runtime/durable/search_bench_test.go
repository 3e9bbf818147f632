package durable

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
)

// searchBenchRuns is how many runs BenchmarkSearch searches, and
// searchRepeats how many times it times each search.
const (
	searchBenchRuns = 100_000
	searchRepeats   = 5
)

// fillSearchRuns inserts n runs in one statement, one a second back from
// now: 90% done (input {"order":N,"email":"user-N@example.com"}, output
// {"receipt":"r-N"}), 5% waiting on a signal, 4% failed and 1% dead (their
// last error "Unavailable: provider down for order N"), over 10 workflows.
// The done and dead runs enter the search index as a run does when it ends
// (the PostgreSQL index, the SQLite triggers).
func fillSearchRuns(b *testing.B, d *db.DB, driver string, n int) {
	ctx := context.Background()
	const cols = `(id, workflow, status, input, output, attempts, wake_at, waiting_signal, last_error, created_at, updated_at)`
	sql := `INSERT INTO _sky_durable_runs ` + cols + `
SELECT 'run-' || g, 'wf-' || (g % 10),
       CASE WHEN g % 100 = 0 THEN 'dead' WHEN g % 100 < 5 THEN 'failed' WHEN g % 100 < 10 THEN 'waiting' ELSE 'done' END,
       '{"order":' || g || ',"email":"user-' || g || '@example.com"}',
       CASE WHEN g % 100 >= 10 THEN '{"receipt":"r-' || g || '"}' END, 1,
       CASE WHEN g % 100 >= 10 OR g % 100 = 0 THEN 'infinity'::timestamptz ELSE now() + INTERVAL '1 hour' END,
       CASE WHEN g % 100 BETWEEN 5 AND 9 THEN 'approved' END,
       CASE WHEN g % 100 < 5 THEN 'Unavailable: provider down for order ' || g ELSE '' END,
       now() - g * INTERVAL '1 second', now() - g * INTERVAL '1 second' FROM generate_series(1, ?) g`
	args := []any{n}
	if driver == "sqlite" {
		now := time.Now().UnixMilli()
		sql = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
INSERT INTO _sky_durable_runs ` + cols + `
SELECT 'run-' || n, 'wf-' || (n % 10),
       CASE WHEN n % 100 = 0 THEN 'dead' WHEN n % 100 < 5 THEN 'failed' WHEN n % 100 < 10 THEN 'waiting' ELSE 'done' END,
       '{"order":' || n || ',"email":"user-' || n || '@example.com"}',
       CASE WHEN n % 100 >= 10 THEN '{"receipt":"r-' || n || '"}' END, 1,
       CASE WHEN n % 100 >= 10 OR n % 100 = 0 THEN ? ELSE ? + 3600000 END,
       CASE WHEN n % 100 BETWEEN 5 AND 9 THEN 'approved' END,
       CASE WHEN n % 100 < 5 THEN 'Unavailable: provider down for order ' || n ELSE '' END,
       ? - n * 1000, ? - n * 1000 FROM g`
		args = []any{n, store.InfinityMs, now, now, now}
	}
	if _, err := d.Exec(ctx, sql, args...); err != nil {
		b.Fatal(err)
	}
	if driver == "postgres" {
		if _, err := d.Exec(ctx, `ANALYZE _sky_durable_runs`); err != nil {
			b.Fatal(err)
		}
	}
}

// searchBenchCases are the searches BenchmarkSearch times, a page of 50
// each: one run by a text only it holds (an order's e-mail), the runs whose
// error names an order (the 4,000 failed ones: unfinished, read row by row),
// and a text every run holds (the worst case: every finished run matches).
var searchBenchCases = []struct {
	name, text string
	want       int
}{
	{"one run by its input", "user-77777@example", 1},
	{"one run by its output", `"r-45678"`, 1},
	{"4,000 failed runs by their error", "provider down", 50},
	{"every run", "@example.com", 50},
}

// BenchmarkSearch times `sky durable ls --search TEXT` (Engine.ListRuns with
// ListFilter.Search, a page of 50) on 100,000 runs, on each store; it
// prints the figures of docs/benchmarks.md ("Search"): the median of
// searchRepeats searches after a first one.
//
//	go test -run '^$' -bench Search -benchtime 1x ./runtime/durable
func BenchmarkSearch(b *testing.B) {
	for _, driver := range dbtest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			ctx := context.Background()
			d := dbtest.Open(b, driver)
			e := New(d, Options{WorkerID: "bench"})
			if err := e.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			fillSearchRuns(b, d, driver, searchBenchRuns)
			b.ResetTimer()
			for range b.N {
				if driver == "sqlite" {
					// The fill's finished runs wait in the search backlog,
					// as if no worker had run since they finished: searched
					// row by row, then indexed a batch at a time.
					timeSearches(b, e, driver, ", all in the backlog")
					indexBacklog(b, e)
				}
				timeSearches(b, e, driver, "")
			}
		})
	}
}

// timeSearches times each of searchBenchCases: the median of searchRepeats
// searches after a first one, which warms the caches.
func timeSearches(b *testing.B, e *Engine, driver, label string) {
	ctx := context.Background()
	for _, c := range searchBenchCases {
		took := make([]time.Duration, searchRepeats+1)
		for i := range took {
			began := time.Now()
			runs, err := e.ListRuns(ctx, ListFilter{Search: c.text, Limit: 50})
			took[i] = time.Since(began)
			if err != nil || len(runs) != c.want {
				b.Fatalf("search %q = %d runs, %v; want %d", c.text, len(runs), err, c.want)
			}
		}
		slices.Sort(took[1:])
		fmt.Printf("search: %s, %d runs%s, %s (%q): %.1f ms (first %.1f ms)\n", driver, searchBenchRuns, label, c.name, c.text,
			float64(took[1+searchRepeats/2].Microseconds())/1000, float64(took[0].Microseconds())/1000)
	}
}

// indexBacklog moves SQLite's search backlog into the index a batch of
// searchIndexBatch at a time, as the workers' background pass does, and
// prints the median time of a batch.
func indexBacklog(b *testing.B, e *Engine) {
	ctx := context.Background()
	var took []time.Duration
	total := 0
	for {
		began := time.Now()
		n, err := e.store.IndexSearch(ctx, searchIndexBatch)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
		took, total = append(took, time.Since(began)), total+n
	}
	if total != searchBenchRuns*91/100 {
		b.Fatalf("IndexSearch moved %d runs, want the %d finished ones", total, searchBenchRuns*91/100)
	}
	slices.Sort(took)
	fmt.Printf("search: sqlite, %d finished runs indexed in %d batches of %d: %.1f ms a batch (median; %.1f–%.1f ms)\n",
		total, len(took), searchIndexBatch, float64(took[len(took)/2].Microseconds())/1000,
		float64(took[0].Microseconds())/1000, float64(took[len(took)-1].Microseconds())/1000)
}
