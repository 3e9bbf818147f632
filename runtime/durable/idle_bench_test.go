package durable

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// BenchmarkIdleWorker prints what one idle worker (Work, the defaults: 4
// pollers, a 1s tick, listening for hints as `sky durable worker` does
// with DATABASE_URL) costs PostgreSQL per second of CPU, on a database of
// 100,000 finished runs (1,000 parents of 99 children each, the shape that
// made the deadline sweep JIT-compile every second) and 100,000 runs
// waiting for tomorrow, and how long a cancel takes there (docs/benchmarks.md,
// "Background work"). The server is a private one (dbtest.StartPrivateServer)
// and its CPU is read from /proc: the backends of the benchmark's database.
//
//	go test -run '^$' -bench BenchmarkIdleWorker -benchtime 1x ./runtime/durable
func BenchmarkIdleWorker(b *testing.B) {
	ctx := context.Background()
	// A private server: on a shared one, other databases' schema changes
	// make every idle backend process invalidation messages, which would
	// count here.
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
	var opsMu sync.Mutex
	ops := map[string]int{}
	e := New(d, Options{OnStatement: func(op, _ string) { opsMu.Lock(); ops[op]++; opsMu.Unlock() }})
	if err := e.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, output, wake_at, created_at, updated_at, parent_id, child_group)
  SELECT 'p' || (g / 100) || CASE WHEN g % 100 = 0 THEN '' ELSE '/' || g END, 'idle', 'done', '""', '""', 'infinity', now(), now(),
         CASE WHEN g % 100 <> 0 THEN 'p' || (g / 100) END, CASE WHEN g % 100 <> 0 THEN 'g' END
    FROM generate_series(0, 99999) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'later' || g, 'idle', 'waiting', '""', now() + interval '1 day', now(), now() FROM generate_series(1, 100000) g;
`); err != nil {
		b.Fatal(err)
	}
	// Vacuumed now, so autovacuum has nothing to do during the measurement.
	if _, err := d.ExecRaw(ctx, `VACUUM ANALYZE _sky_durable_runs`); err != nil {
		b.Fatal(err)
	}
	w := Register("idle", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
	for i := 0; i < b.N; i++ {
		// A minute: the worker probes once per quietMax.
		const seconds = 60
		// The server's own background (checkpointer, WAL writer...) with no
		// client, the baseline the worker's figure is above.
		before := serverCPU(b, srv)
		time.Sleep(seconds * time.Second)
		baseline := serverCPU(b, srv) - before
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			_, err := e.Work(wctx, []Workflow{w.Erase()}, WorkerOptions{Hints: HintSettings{URL: srv.URL()}})
			done <- err
		}()
		time.Sleep(2 * time.Second) // the pool's connections are made and warm
		opsMu.Lock()
		clear(ops)
		opsMu.Unlock()
		before = serverCPU(b, srv)
		time.Sleep(seconds * time.Second)
		used := serverCPU(b, srv) - before
		opsMu.Lock()
		statements := ops["probe"] + ops["claim"] + ops["timeout"] + ops["schedule"]
		opsMu.Unlock()
		stop()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		perSecond := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / seconds }
		fmt.Printf("idle worker, 100,000 finished and 100,000 waiting runs: %d statements in %d s; PostgreSQL CPU %.2f ms per second above the idle server's %.2f (%d s each)\n",
			statements, seconds, perSecond(used-baseline), perSecond(baseline), seconds)
		b.ReportMetric(perSecond(used-baseline), "server-cpu-ms/s")
		cancelLatency(b, ctx, e)
	}
}

// cancelLatency prints the median and worst of 20 cancels of finished runs
// (refused: the statement finds nothing to cancel) and of 20 waiting ones.
func cancelLatency(b *testing.B, ctx context.Context, e *Engine) {
	for _, c := range []struct{ what, prefix string }{{"a finished parent of 99 children", "p"}, {"a waiting run", "later"}} {
		var took []time.Duration
		for i := 1; i <= 20; i++ {
			began := time.Now()
			var refused *task.Error
			if err := e.Cancel(ctx, c.prefix+strconv.Itoa(i)); err != nil && !(errors.As(err, &refused) && refused.Kind == task.Conflict) {
				b.Fatal(err)
			}
			took = append(took, time.Since(began))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		fmt.Printf("cancel of %s among 200,000 runs: median %.2f ms  max %.2f ms\n", c.what,
			float64(took[len(took)/2].Microseconds())/1000, float64(took[len(took)-1].Microseconds())/1000)
	}
}

// serverCPU sums the CPU time of the processes of the private server srv
// (the children of its postmaster, from /proc; schedstat's first field is
// the time on a CPU in nanoseconds, finer than stat's 10ms ticks), less
// autovacuum's.
func serverCPU(b *testing.B, srv *dbtest.Server) time.Duration {
	b.Helper()
	pidFile, err := os.ReadFile(filepath.Join(srv.Dir(), "data", "postmaster.pid"))
	if err != nil {
		b.Fatal(err)
	}
	postmaster := strings.SplitN(string(pidFile), "\n", 2)[0]
	procs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for _, p := range procs {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// The fields after the command's closing parenthesis: the parent
		// process is the second.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 2 || f[1] != postmaster {
			continue
		}
		if title, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline")); strings.Contains(string(title), "autovacuum") {
			continue
		}
		sched, err := os.ReadFile(filepath.Join(filepath.Dir(p), "schedstat"))
		if err != nil {
			continue
		}
		ns, err := strconv.ParseInt(strings.Fields(string(sched))[0], 10, 64)
		if err != nil {
			b.Fatalf("%s: %v", p, err)
		}
		total += time.Duration(ns)
	}
	return total
}
