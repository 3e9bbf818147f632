package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
)

// bulkBenchRuns is how many dead runs BenchmarkBulkRetry retries.
const bulkBenchRuns = 10_000

// fillDeadRuns inserts n dead runs (10 workflows, each with a last error)
// among 4n done ones, in one statement, and deletes any run left.
func fillDeadRuns(b *testing.B, d *db.DB, driver string, n int) {
	ctx := context.Background()
	if _, err := d.Exec(ctx, `DELETE FROM _sky_durable_runs`); err != nil {
		b.Fatal(err)
	}
	sql := `INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at)
SELECT 'run-' || g, 'wf-' || (g % 10), CASE WHEN g % 5 = 0 THEN 'dead' ELSE 'done' END, '"x"', 3, 'infinity',
       CASE WHEN g % 5 = 0 THEN 'Unavailable: provider down' ELSE '' END,
       now() - g * INTERVAL '1 second', now() FROM generate_series(1, ?) g`
	args := []any{5 * n}
	if driver == "sqlite" {
		now := time.Now().UnixMilli()
		sql = `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at)
SELECT 'run-' || n, 'wf-' || (n % 10), CASE WHEN n % 5 = 0 THEN 'dead' ELSE 'done' END, '"x"', 3, ?,
       CASE WHEN n % 5 = 0 THEN 'Unavailable: provider down' ELSE '' END, ? - n * 1000, ? FROM g`
		args = []any{5 * n, store.InfinityMs, now, now}
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

// BenchmarkBulkRetry times `sky durable retry --status dead --yes`:
// Engine.Bulk retrying 10,000 dead runs (among 40,000 done ones) in batches
// of DefaultBulkBatch, on each store; it prints the figure of
// docs/benchmarks.md ("Bulk actions").
//
//	go test -run '^$' -bench BulkRetry -benchtime 1x ./runtime/durable
func BenchmarkBulkRetry(b *testing.B) {
	for _, driver := range dbtest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			ctx := context.Background()
			d := dbtest.Open(b, driver)
			e := New(d, Options{WorkerID: "bench"})
			if err := e.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			var took time.Duration
			var res BulkResult
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				fillDeadRuns(b, d, driver, bulkBenchRuns)
				b.StartTimer()
				began := time.Now()
				var err error
				res, err = e.Bulk(ctx, BulkRetry, BulkFilter{Statuses: []Status{StatusDead}}, BulkOptions{})
				took += time.Since(began)
				if err != nil || res.Changed != bulkBenchRuns {
					b.Fatalf("bulk retry = %+v, %v; want %d runs", res, err, bulkBenchRuns)
				}
			}
			per := took / time.Duration(b.N)
			b.ReportMetric(float64(per.Milliseconds()), "ms/10k-runs")
			fmt.Printf("bulk retry: %s, %d dead runs (among %d runs) retried in %s, %d statements of %d runs\n",
				driver, bulkBenchRuns, 5*bulkBenchRuns, per.Round(time.Millisecond), res.Batches, DefaultBulkBatch)
		})
	}
}
