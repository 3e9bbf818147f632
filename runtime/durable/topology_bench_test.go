package durable_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// BenchmarkThroughPgBouncer drains 500 runs of a 3-step workflow with 4
// workers (each its own pool of 3), directly and through PgBouncer in
// transaction pooling mode (4 server connections, db.PoolerTransaction),
// and reports workflows/s of the drain (docs/scaling.md).
func BenchmarkThroughPgBouncer(b *testing.B) {
	const runs, workers = 500, 4
	bouncer := dbtest.StartPgBouncer(b)
	def := durable.Register("bench.three", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return task.AndThen(durable.Step(c, codec.String, "a", task.Succeed("a")), func(string) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "b", task.Succeed("b")), func(string) task.Task[string] {
				return durable.Step(c, codec.String, "c", task.Succeed(in))
			})
		})
	})
	for _, via := range []string{"direct", "pgbouncer"} {
		b.Run(via, func(b *testing.B) {
			var total time.Duration
			for range b.N {
				direct := dbtest.URL(b, "bench")
				url, opts := direct, db.Options{}
				if via == "pgbouncer" {
					url, opts = bouncer.Route(b, direct), db.Options{Pooler: db.PoolerTransaction}
				}
				admin := openPG(b, direct, 4)
				ae := durable.New(admin, durable.Options{WorkerID: "admin"})
				ctx := context.Background()
				if err := ae.Setup(ctx); err != nil {
					b.Fatal(err)
				}
				for i := range runs {
					if err := durable.Start(ctx, ae, def, fmt.Sprintf("run-%04d", i), "x"); err != nil {
						b.Fatal(err)
					}
				}
				engines := make([]*durable.Engine, workers)
				for w := range engines {
					d, err := db.OpenWith(ctx, "postgres", withParam(url, "pool_max_conns", "3"), opts)
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(func() { d.Close() })
					engines[w] = durable.New(d, durable.Options{WorkerID: fmt.Sprintf("w%d", w)})
				}
				began := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, workers)
				for _, e := range engines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							worked, err := e.Poll(ctx, []durable.Workflow{def.Erase()})
							if err != nil {
								errs <- err
								return
							}
							if !worked {
								return
							}
						}
					}()
				}
				wg.Wait()
				total += time.Since(began)
				close(errs)
				for err := range errs {
					b.Fatal(err)
				}
				var done int64
				if err := admin.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done'`).Scan(&done); err != nil || done != runs {
					b.Fatalf("%d of %d runs done (%v)", done, runs, err)
				}
			}
			b.ReportMetric(float64(runs*b.N)/total.Seconds(), "workflows/s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
