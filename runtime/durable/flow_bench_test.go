package durable

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// The flow-control benchmarks (make bench; docs/benchmarks.md, "Flow
// control"): claim latency with limits on among many waiting runs, and
// throughput with and without limits. They print their figures.

// benchLimits are limits that are on but never bind in these benchmarks:
// every run has its own key, and the concurrency is above the pollers'.
var benchLimits = Limits{Concurrency: 1000, PerKey: 1}

func benchDef(name string, limited bool) Def[string, string] {
	body := func(c *Ctx, in string) task.Task[string] { return Step(c, str, "a", task.Succeed(in)) }
	if !limited {
		return Register(name, str, str, body)
	}
	return RegisterWithLimits(benchLimits, func(in string) (string, error) { return in, nil }, DefaultRetryPolicy, name, str, str, body)
}

// parkBenchRuns inserts n runs of workflow waiting for a day, in one
// statement, and analyzes the table.
func parkBenchRuns(b *testing.B, d *db.DB, workflow string, n int) {
	ctx := context.Background()
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at)
SELECT 'parked-' || g, ?, 'waiting', '"x"', 0, now() + INTERVAL '1 day', '', now(), now() FROM generate_series(1, ?) g`, workflow, n); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Exec(ctx, `ANALYZE _sky_durable_runs`); err != nil {
		b.Fatal(err)
	}
}

// queueBenchRuns inserts n fresh runs of workflow's perKey key "one-key",
// queued behind that key's head (as Start queues them: due 'infinity'), in
// one statement, and analyzes the table.
func queueBenchRuns(b *testing.B, d *db.DB, workflow string, n int) {
	ctx := context.Background()
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at, limit_key, key_queued)
SELECT 'queued-' || g, ?, 'waiting', '"one-key"', 0, 'infinity', '', now(), now(), 'one-key', TRUE FROM generate_series(1, ?) g`, workflow, n); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Exec(ctx, `ANALYZE _sky_durable_runs`); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkClaimLatencyWithLimits times 300 claims of due runs one by one
// (from the claim statement to the next statement, which follows the
// claim's answer), among 1,000 and 100,000 waiting runs, with and without
// limits, on PostgreSQL; and, with limits, among as many runs of one perKey
// key queued behind its head (fair across keys: the 300 runs of other keys,
// started after them, are claimed before them at the same cost).
func BenchmarkClaimLatencyWithLimits(b *testing.B) {
	type cell struct {
		limited, queued bool
	}
	for _, waiting := range []int{1000, 100_000} {
		for _, c := range []cell{{false, false}, {true, false}, {true, true}} {
			limited := c.limited
			b.Run(fmt.Sprintf("waiting=%d/limits=%v/queued=%v", waiting, limited, c.queued), func(b *testing.B) {
				d := dbtest.Open(b, "postgres")
				ctx := context.Background()
				var mu sync.Mutex
				var marks []time.Time
				var ops []string
				e := New(d, Options{WorkerID: "bench", OnStatement: func(op, _ string) {
					mu.Lock()
					marks, ops = append(marks, time.Now()), append(ops, op)
					mu.Unlock()
				}})
				if err := e.Setup(ctx); err != nil {
					b.Fatal(err)
				}
				def := benchDef("bench.claim", limited)
				if c.queued {
					if err := Start(ctx, e, def, "one-key-head", "one-key"); err != nil {
						b.Fatal(err)
					}
					queueBenchRuns(b, d, def.Name(), waiting)
				} else {
					parkBenchRuns(b, d, def.Name(), waiting)
				}
				for i := range 300 {
					if err := Start(ctx, e, def, fmt.Sprintf("due-%d", i), fmt.Sprintf("k%d", i)); err != nil {
						b.Fatal(err)
					}
				}
				defs := []Workflow{def.Erase()}
				b.ResetTimer()
				mu.Lock()
				marks, ops = nil, nil
				mu.Unlock()
				// The due runs: the 300 (and, queued, the key's head); not the
				// queue the head's claim starts to promote behind them.
				for polls := 0; !c.queued || polls < 301; polls++ {
					worked, err := e.Poll(ctx, defs)
					if err != nil {
						b.Fatal(err)
					}
					if !worked {
						break
					}
				}
				b.StopTimer()
				var claims []time.Duration
				for i := 0; i+1 < len(ops); i++ {
					if ops[i] == "claim" && ops[i+1] != "claim" {
						claims = append(claims, marks[i+1].Sub(marks[i]))
					}
				}
				slices.Sort(claims)
				if len(claims) < 300 {
					b.Fatalf("timed %d claims, want 300", len(claims))
				}
				p50, p99 := claims[len(claims)/2], claims[len(claims)*99/100]
				b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
				b.ReportMetric(float64(p99.Microseconds()), "p99-µs")
				fmt.Printf("flow: claim latency, %d waiting (queued behind one key: %v), limits %v: p50 %v p99 %v\n", waiting, c.queued, limited, p50, p99)
			})
		}
	}
}

// BenchmarkThroughputWithLimits runs 2,000 one-step runs with 4 pollers on
// PostgreSQL, with and without limits, and prints runs a second.
func BenchmarkThroughputWithLimits(b *testing.B) {
	const runs, pollers = 2000, 4
	rate := map[bool]float64{}
	for _, limited := range []bool{false, true} {
		b.Run(fmt.Sprintf("limits=%v", limited), func(b *testing.B) {
			d := dbtest.Open(b, "postgres")
			ctx := context.Background()
			e := New(d, Options{WorkerID: "starter"})
			if err := e.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			def := benchDef("bench.throughput", limited)
			for i := range runs {
				if err := Start(ctx, e, def, fmt.Sprintf("r-%d", i), fmt.Sprintf("k%d", i)); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			began := time.Now()
			var wg sync.WaitGroup
			for i := range pollers {
				w := New(d, Options{WorkerID: fmt.Sprintf("poller-%d", i)})
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						worked, err := w.Poll(ctx, []Workflow{def.Erase()})
						if err != nil {
							b.Error(err)
							return
						}
						if !worked {
							return
						}
					}
				}()
			}
			wg.Wait()
			took := time.Since(began)
			b.StopTimer()
			var left int
			if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status <> 'done'`).Scan(&left); err != nil || left != 0 {
				b.Fatalf("%d runs not done (%v)", left, err)
			}
			rate[limited] = float64(runs) / took.Seconds()
			b.ReportMetric(rate[limited], "runs/s")
			fmt.Printf("flow: throughput, limits %v: %.0f runs/s (%d runs, %d pollers, %v)\n", limited, rate[limited], runs, pollers, took.Round(time.Millisecond))
		})
	}
	if rate[false] > 0 && rate[true] > 0 {
		fmt.Printf("flow: limits cost %.1f%% of throughput\n", 100*(1-rate[true]/rate[false]))
	}
}

// BenchmarkRateLimitDelivers measures, on the real clock, the rate a limit
// of 20 a second delivers with 210 runs waiting and 3 workers (Work, the
// default options) on each store: runs a second from the first claim to
// the last, as a share of the limit, and the most claims in any 1 s window
// (never more than 20: the tests assert that on a virtual clock).
func BenchmarkRateLimitDelivers(b *testing.B) {
	const runs, workers, rate = 210, 3, 20
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) {
			d := dbtest.Open(b, driver)
			ctx := context.Background()
			e := New(d, Options{WorkerID: "starter"})
			if err := e.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			def := spanned("bench.rated", Limits{RatePerSecond: rate}, false, 0)
			for i := range runs {
				id := fmt.Sprintf("r-%03d", i)
				if err := Start(ctx, e, def, id, id); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			wctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			for i := range workers {
				w := New(d, Options{WorkerID: fmt.Sprintf("worker-%d", i)})
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := w.Work(wctx, []Workflow{def.Erase()}, WorkerOptions{}); err != nil {
						b.Error(err)
					}
				}()
			}
			for left := runs; left > 0; time.Sleep(100 * time.Millisecond) {
				if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status <> 'done'`).Scan(&left); err != nil {
					b.Fatal(err)
				}
			}
			stop()
			wg.Wait()
			b.StopTimer()
			var claims []time.Time
			for i := range runs {
				_, journal, err := e.Describe(ctx, fmt.Sprintf("r-%03d", i))
				if err != nil || len(journal) != 1 {
					b.Fatalf("run %d: journal %v, %v", i, journal, err)
				}
				s, err := spanCodec.Decode(journal[0].Result)
				if err != nil {
					b.Fatal(err)
				}
				if driver == "sqlite" {
					// SQLite keeps times in whole milliseconds: the
					// rule holds on the claim times it stores.
					s.Claimed = s.Claimed.Truncate(time.Millisecond)
				}
				claims = append(claims, s.Claimed)
			}
			slices.SortFunc(claims, func(a, b time.Time) int { return a.Compare(b) })
			delivered := float64(runs-1) / claims[runs-1].Sub(claims[0]).Seconds()
			most := 0
			for k := range claims {
				in := 0
				for _, c := range claims[k:] {
					if c.Sub(claims[k]) < time.Second {
						in++
					}
				}
				most = max(most, in)
			}
			b.ReportMetric(delivered, "runs/s")
			b.ReportMetric(100*delivered/rate, "%-of-limit")
			fmt.Printf("flow: rate limit %d/s, %d runs, %d workers, %s: delivered %.2f/s (%.1f%%), at most %d claims in a 1 s window\n",
				rate, runs, workers, driver, delivered, 100*delivered/rate, most)
		})
	}
}
