package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// BenchmarkHistoryCost measures what the run history costs a workflow on
// PostgreSQL: one poller drains 1,000 runs of a 1-step workflow (its
// history: done) and of one that sleeps once (suspended, claimed, done),
// and reports, per run, the CPU time of the server (a private one,
// dbtest.StartPrivateServer, read from /proc: the load of other processes
// changes it little), the WAL it wrote, and the wall time. Run it on a tree
// without the history to compare (docs/durable.md, "Run history").
func BenchmarkHistoryCost(b *testing.B) {
	const runs = 1000
	for _, sleeps := range []bool{false, true} {
		b.Run(fmt.Sprintf("sleep=%v", sleeps), func(b *testing.B) {
			ctx := context.Background()
			srv, err := dbtest.StartPrivateServer(ctx)
			if err != nil {
				b.Fatal(err)
			}
			defer srv.Stop()
			d, err := db.Open(ctx, "postgres", srv.URL())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			clock := newVirtualClock()
			e := New(d, Options{WorkerID: "bench", Clock: clock.Now})
			if err := e.Setup(ctx); err != nil {
				b.Fatal(err)
			}
			w := Register("bench.history", str, str, func(c *Ctx, in string) task.Task[string] {
				if !sleeps {
					return Step(c, str, "a", task.Succeed(in))
				}
				return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] { return Step(c, str, "a", task.Succeed(in)) })
			})
			for i := range runs {
				if err := Start(ctx, e, w, fmt.Sprintf("r-%d", i), "x"); err != nil {
					b.Fatal(err)
				}
			}
			drain := func() {
				for {
					worked, err := e.Poll(ctx, []Workflow{w.Erase()})
					if err != nil {
						b.Fatal(err)
					}
					if !worked {
						return
					}
				}
			}
			var before, after int64
			lsn := `SELECT CAST(pg_current_wal_lsn() - '0/0' AS BIGINT)`
			b.ResetTimer()
			if err := d.QueryRow(ctx, lsn).Scan(&before); err != nil {
				b.Fatal(err)
			}
			cpuBefore := serverCPU(b, srv)
			began := time.Now()
			drain()
			if sleeps {
				clock.Advance(time.Minute)
				drain()
			}
			took := time.Since(began)
			cpu := serverCPU(b, srv) - cpuBefore
			if err := d.QueryRow(ctx, lsn).Scan(&after); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			b.ReportMetric(float64(took.Microseconds())/runs, "µs/run")
			b.ReportMetric(float64(after-before)/runs, "WAL-B/run")
			b.ReportMetric(float64(cpu.Microseconds())/runs, "server-cpu-µs/run")
		})
	}
}
