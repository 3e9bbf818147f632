package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/postgres"
	"skydurable/runtime/task"
)

// The operations benchmarks print figures for docs/benchmarks.md
// ("Operations"): `sky durable ls` at 1,000,000 runs with its plans, and
// compaction of 100,000 finished runs with its longest batch transaction.
// Both run on PostgreSQL, filled by one generate_series statement each.
//
//	go test -run '^$' -bench 'BenchmarkOps' -benchtime 1x ./runtime/durable/store/postgres

const (
	lsRuns      = 1_000_000
	lsRepeats   = 7
	compactRuns = 100_000
)

// fillRuns inserts n runs in one statement: 90% done, 9% waiting on a
// signal, 0.9% failed, 0.1% dead, over 10 workflows and 2 versions, created
// one every 2 s back from a day ago (about 23 days for 1M runs), each
// updated a minute after it was created.
const fillRuns = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, attempts, wake_at, waiting_signal,
                               last_error, created_at, updated_at)
SELECT 'run-' || g, 'wf-' || (g % 10), 1 + (g % 2),
       CASE WHEN g % 1000 = 0 THEN 'dead' WHEN g % 100 = 0 THEN 'failed' WHEN g % 10 = 0 THEN 'waiting' ELSE 'done' END,
       '{"order":' || g || '}',
       CASE WHEN g % 10 <> 0 THEN '"ok"' END,
       CASE WHEN g % 100 = 0 THEN 3 ELSE 1 END,
       CASE WHEN g % 10 = 0 AND g % 100 <> 0 THEN 'infinity'::timestamptz ELSE now() + INTERVAL '1 hour' END,
       CASE WHEN g % 10 = 0 AND g % 100 <> 0 THEN 'payment.settled' END,
       CASE WHEN g % 100 = 0 THEN 'Unavailable: payment provider down' ELSE '' END,
       now() - INTERVAL '1 day' - g * INTERVAL '2 seconds',
       now() - INTERVAL '1 day' - g * INTERVAL '2 seconds' + INTERVAL '1 minute'
  FROM generate_series(1, ?) g`

// BenchmarkOpsList times `sky durable ls` (ListRuns with its filters, and the
// CLI's whole path: open, Setup, list) on 1,000,000 runs and prints the plans.
func BenchmarkOpsList(b *testing.B) {
	ctx := context.Background()
	url := dbtest.URL(b, "opsls")
	d := openPG(b, url)
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	if _, err := d.Exec(ctx, fillRuns, lsRuns); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Exec(ctx, `ANALYZE _sky_durable_runs`); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("ops ls: %d runs inserted and analysed in %s\n", lsRuns, time.Since(began).Round(time.Millisecond))

	filters := []durable.ListFilter{
		{Limit: 50},
		{Status: durable.StatusDead, Limit: 50},
		{Workflow: "wf-3", Limit: 50},
		{Status: durable.StatusWaiting, Workflow: "wf-7", Limit: 50},
		{Status: durable.StatusRunning, Limit: 50}, // no such run: the index answers empty
		// The dashboard's keyset page half way down the table, and its id
		// prefix search (a common prefix, then one matching a single run).
		{Limit: 50, Before: &store.Cursor{CreatedAt: time.Now().Add(-24*time.Hour - lsRuns*time.Second), ID: "run-500000"}},
		{Status: durable.StatusDead, Limit: 50, Before: &store.Cursor{CreatedAt: time.Now().Add(-24*time.Hour - lsRuns*time.Second), ID: "run-500000"}},
		{IDPrefix: "run-12", Limit: 50},
		{IDPrefix: "run-999999", Limit: 50},
	}
	b.ResetTimer()
	for range b.N {
		var worst time.Duration
		for _, f := range filters {
			var took []time.Duration
			var n int
			for range lsRepeats {
				t0 := time.Now()
				runs, err := e.ListRuns(ctx, f)
				took = append(took, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				n = len(runs)
			}
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			worst = max(worst, took[len(took)-1])
			fmt.Printf("ops ls %-40s %2d runs  median %6.2f ms  max %6.2f ms\n", lsArgs(f), n, ms64(took[len(took)/2]), ms64(took[len(took)-1]))
		}
		// The CLI's path: a new pool, Setup (a no-op on a current schema), list.
		var cli []time.Duration
		for range lsRepeats {
			t0 := time.Now()
			c := openPG(b, url)
			ce := durable.New(c, durable.Options{})
			if err := ce.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			if _, err := ce.ListRuns(ctx, durable.ListFilter{Status: durable.StatusDead, Limit: 50}); err != nil {
				b.Fatal(err)
			}
			cli = append(cli, time.Since(t0))
			c.Close()
		}
		sort.Slice(cli, func(i, j int) bool { return cli[i] < cli[j] })
		fmt.Printf("ops ls cold (open + Setup + ls --status dead): median %.2f ms  max %.2f ms\n", ms64(cli[len(cli)/2]), ms64(cli[len(cli)-1]))
		b.ReportMetric(ms64(worst), "ls-max-ms")
		b.ReportMetric(ms64(cli[len(cli)/2]), "ls-cold-median-ms")
	}
	b.StopTimer()
	fmt.Printf("ops claim plan (PinToStart) on the same table:\n%s\n",
		explain(b, d, postgres.ClaimPinnedSQL, nil, durable.DefaultLease.Milliseconds(), nil, `[{"w":"wf-0","v":1},{"w":"wf-0","v":2}]`, "explain-token", "explain"))
	for _, f := range filters {
		sql, args := store.ListSQL(postgres.RunColumns, f, postgres.ListDialect)
		fmt.Printf("ops ls plan, %s:\n%s\n", lsArgs(f), explain(b, d, sql, args...))
	}
}

// BenchmarkOpsCompact compacts 100,000 finished runs (3 journal rows and 1
// signal each) among 10,000 live ones, in batches of DefaultCompactBatch,
// and reports the longest batch transaction: the longest any row lock was
// held. Meanwhile a worker keeps starting, claiming and finishing runs; its
// slowest poll shows whether compaction holds it up.
func BenchmarkOpsCompact(b *testing.B) {
	ctx := context.Background()
	d := openPG(b, dbtest.URL(b, "opscompact"))
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	for range b.N {
		b.StopTimer()
		for _, sql := range []string{
			`TRUNCATE _sky_durable_runs, _sky_durable_journal, _sky_durable_signals`,
			fillRuns,
			`INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
			 SELECT r.id, s, 'step-' || s, 'step', '{"receipt":"abcdefghijklmnopqrstuvwxyz"}', r.created_at
			   FROM _sky_durable_runs r, generate_series(1, 3) s`,
			`INSERT INTO _sky_durable_signals (run_id, name, payload, delivered, created_at)
			 SELECT id, 'payment.settled', '{"reference":"stl"}', TRUE, created_at FROM _sky_durable_runs`,
			`ANALYZE`,
		} {
			args := []any{}
			if sql == fillRuns {
				args = append(args, compactRuns*10/9) // 90% of them done: 100,000
			}
			if _, err := d.Exec(ctx, sql, args...); err != nil {
				b.Fatal(err)
			}
		}
		var live int64
		if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_journal j JOIN _sky_durable_runs r ON r.id = j.run_id WHERE r.status <> 'done'`).Scan(&live); err != nil {
			b.Fatal(err)
		}
		fmt.Printf("ops compact plan (the first batch, rolled back):\n%s\n", explain(b, d, postgres.CompactBatchSQL,
			append(append([]any{nil, time.Hour.Milliseconds(), nil}, store.Scope{}.Args()...), durable.DefaultCompactBatch)...))
		stop, figures := liveWorker(b, d)
		stopOnce := sync.OnceFunc(func() { close(stop) })
		b.Cleanup(stopOnce)
		b.StartTimer()
		t0 := time.Now()
		res, err := e.CompactOlderThan(ctx, time.Hour, durable.CompactOptions{})
		took := time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		stopOnce()
		wf := <-figures
		fmt.Printf("ops compact: meanwhile a worker finished %d runs, slowest poll %.1f ms\n", wf.runs, ms64(wf.slowest))
		var liveAfter int64
		if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_journal j JOIN _sky_durable_runs r ON r.id = j.run_id WHERE r.status <> 'done'`).Scan(&liveAfter); err != nil {
			b.Fatal(err)
		}
		if res.Runs < compactRuns || liveAfter != live {
			b.Fatalf("compacted %d runs (want %d); live journal rows %d → %d", res.Runs, compactRuns, live, liveAfter)
		}
		fmt.Printf("ops compact: %d runs, %d rows deleted in %d batches of %d in %s (%.0f runs/s); longest batch transaction %.1f ms; live runs' %d journal rows untouched\n",
			res.Runs, res.Rows, res.Batches, durable.DefaultCompactBatch, took.Round(time.Millisecond), float64(res.Runs)/took.Seconds(), ms64(res.LongestBatch), live)
		b.ReportMetric(ms64(res.LongestBatch), "longest-batch-ms")
		b.ReportMetric(float64(res.Runs)/took.Seconds(), "runs/s")
	}
}

type workerFigures struct {
	runs    int
	slowest time.Duration
}

// liveWorker starts and advances one-step runs until stop is closed, then
// sends how many it finished and its slowest poll.
func liveWorker(b *testing.B, d *db.DB) (chan struct{}, chan workerFigures) {
	live := durable.Register("bench.live", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "s", task.Succeed(in))
	})
	w := durable.New(d, durable.Options{WorkerID: "live-worker"})
	stop, out := make(chan struct{}), make(chan workerFigures, 1)
	go func() {
		ctx := context.Background()
		var f workerFigures
		defer func() { out <- f }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := durable.Start(ctx, w, live, fmt.Sprintf("live-%d", i), "x"); err != nil {
				b.Error(err)
				return
			}
			t0 := time.Now()
			worked, err := w.Poll(ctx, []durable.Workflow{live.Erase()})
			f.slowest = max(f.slowest, time.Since(t0))
			if err != nil || !worked {
				b.Errorf("live worker poll: %v %v", worked, err)
				return
			}
			f.runs++
		}
	}()
	return stop, out
}

func openPG(b *testing.B, url string) *db.DB {
	b.Helper()
	d, err := db.Open(context.Background(), "postgres", url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	return d
}

func lsArgs(f durable.ListFilter) string {
	s := "sky durable ls"
	if f.Status != "" {
		s += " --status " + string(f.Status)
	}
	if f.Workflow != "" {
		s += " --workflow " + f.Workflow
	}
	if f.Before != nil {
		s += " (page after " + f.Before.ID + ")"
	}
	if f.IDPrefix != "" {
		s += " (id prefix " + f.IDPrefix + ")"
	}
	return s
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

var errExplainRollback = errors.New("rollback")

// explain runs EXPLAIN ANALYZE of sql in a transaction that is rolled back.
func explain(b *testing.B, d *db.DB, sql string, args ...any) string {
	var lines []string
	err := d.WithTransaction(context.Background(), func(ctx context.Context, tx *db.DB) error {
		rows, err := tx.QueryMaps(ctx, "EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) "+sql, args...)
		if err != nil {
			return err
		}
		for _, r := range rows {
			lines = append(lines, "    "+r["QUERY PLAN"])
		}
		return errExplainRollback
	})
	if err != nil && !errors.Is(err, errExplainRollback) {
		b.Fatalf("explain: %v", err)
	}
	return strings.Join(lines, "\n")
}
