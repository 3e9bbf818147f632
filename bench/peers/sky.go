package main

// This engine's side, set up as the engine's own load run (skybench load,
// cmd/skybench/internal/loadtest) sets up its throughput configurations:
// a pool of pollers+2 connections, the pollers goroutines of one process
// sharing one Engine, 200 warm-up workflows per poller, ANALYZE and a
// second, shorter warm-up on PostgreSQL, then the timed drain.

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// skyWorkflow has k steps s1..sk, each yielding a constant (its cost is
// the engine's own); each body that returns adds one to bodies.
func skyWorkflow(k int, bodies *atomic.Int64) durable.Def[string, string] {
	return durable.Register("peers.steps"+strconv.Itoa(k), codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		t := task.Succeed(in)
		for i := 1; i <= k; i++ {
			v := "v" + strconv.Itoa(i)
			t = task.AndThen(t, func(acc string) task.Task[string] {
				return task.Map(durable.Step(c, codec.String, "s"+strconv.Itoa(i), task.Succeed(v)), func(s string) string { return acc + s })
			})
		}
		return task.Map(t, func(out string) string {
			bodies.Add(1)
			return out
		})
	})
}

// workerMaxRuns is the MaxRuns of the "sky Work" variant: the timed drain
// is the worker's (Engine.Work), its warm-ups PollWith(100), as the
// worker's pollers chain their runs.
const workerMaxRuns = 0

func runSky(ctx context.Context, sp spec) (result, error) {
	poolSize := sp.Pollers + 2
	dsn := sp.DSN
	if sp.Driver == "postgres" {
		dsn += "?sslmode=disable&pool_max_conns=" + strconv.Itoa(poolSize)
	}
	d, err := db.Open(ctx, sp.Driver, dsn)
	if err != nil {
		return result{}, err
	}
	defer d.Close()
	m, err := newMeter(ctx, sp)
	if err != nil {
		return result{}, err
	}
	defer m.close()
	if sp.Driver == "postgres" {
		m.flush = func(ctx context.Context) (int, int, error) {
			n, err := flushPool(ctx, d, poolSize)
			return n, n, err
		}
	}
	worker := durable.New(d, durable.Options{WorkerID: "worker"})
	starter := durable.New(d, durable.Options{WorkerID: "starter"})
	if err := worker.Setup(ctx); err != nil {
		return result{}, fmt.Errorf("setup: %w", err)
	}
	if sp.SkySQL != "" && sp.Driver == "postgres" {
		if _, err := d.Exec(ctx, sp.SkySQL); err != nil {
			return result{}, fmt.Errorf("-sky-sql: %w", err)
		}
	}
	var bodies atomic.Int64
	def := skyWorkflow(workloadSteps(sp.Workload), &bodies)
	defs := []durable.Workflow{def.Erase()}
	start := func(prefix string, n int) error {
		return inParallel(n, 8, func(i int) error {
			return durable.Start(ctx, starter, def, prefix+"-"+strconv.Itoa(i), "x")
		})
	}
	drain := func() error { return drainSky(ctx, worker, defs, sp.Pollers, warmMaxRuns(sp.MaxRuns)) }
	analyze := func() error {
		if sp.Driver != "postgres" {
			return nil
		}
		_, err := d.Exec(ctx, "ANALYZE")
		return err
	}

	if sp.Workload == oneByOne {
		// RunNow runs the workflow in this process at once, its start
		// being its claim, and returns its output: what DBOS's RunWorkflow
		// and GetResult do on its side (dbos.go), so both sides pay for the
		// same thing, a caller's workflow run to its result. Start, a
		// worker's Poll and Result would add a claim and a read DBOS does
		// not make.
		one := func(prefix string) func(i int) error {
			return func(i int) error {
				id := prefix + "-" + strconv.Itoa(i)
				out, err := durable.RunNow(ctx, worker, def, id, "x")
				if err != nil || out == nil {
					return fmt.Errorf("run now %s: %v, %v; want its output", id, out, err)
				}
				return nil
			}
		}
		warm := one("warm")
		for i := range serialWarm(sp) {
			if err := warm(i); err != nil {
				return result{}, err
			}
		}
		if err := analyze(); err != nil {
			return result{}, err
		}
		return serially(ctx, m, sp.Driver, sp.Serial, one("run"), nil)
	}

	if err := start("warm", sp.Warm*sp.Pollers); err != nil {
		return result{}, err
	}
	if err := drain(); err != nil {
		return result{}, err
	}
	if sp.Driver == "postgres" {
		if err := analyze(); err != nil {
			return result{}, err
		}
		if err := start("rewarm", sp.Warm*sp.Pollers/4); err != nil {
			return result{}, err
		}
		if err := drain(); err != nil {
			return result{}, err
		}
	}
	if err := start("run", sp.Workflows); err != nil {
		return result{}, err
	}
	before := bodies.Load()
	a, err := m.begin(ctx)
	if err != nil {
		return result{}, err
	}
	var b reading
	probes := 0
	if sp.MaxRuns == workerMaxRuns {
		// The worker as sky durable worker runs it, launched once the timed
		// runs are in (as DBOS's is); timed until every run is recorded
		// done, then stopped.
		wctx, stopWorker := context.WithCancel(ctx)
		defer stopWorker()
		worked := make(chan error, 1)
		go func() {
			_, err := worker.Work(wctx, defs, durable.WorkerOptions{Concurrency: sp.Pollers, Hints: skyHints(sp)})
			worked <- err
		}()
		if probes, err = awaitSky(ctx, d, &bodies, before+int64(sp.Workflows), sp.Workflows, worked); err != nil {
			return result{}, err
		}
		b, err = m.end(ctx, func() error { stopWorker(); return <-worked })
	} else {
		if err := drain(); err != nil {
			return result{}, err
		}
		b, err = m.end(ctx, nil)
	}
	if err != nil {
		return result{}, err
	}
	var done int
	if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done' AND id LIKE 'run-%'`).Scan(&done); err != nil {
		return result{}, err
	}
	if done != sp.Workflows {
		return result{}, fmt.Errorf("%d of the %d timed runs are done", done, sp.Workflows)
	}
	res := measured(sp.Workflows, a, b, sp.Driver)
	res.Probes = probes
	if res.Commits >= 0 {
		res.Commits -= int64(probes)
	}
	return res, nil
}

// warmMaxRuns is the MaxRuns of a variant's warm-up drains: its own, or
// for the worker PollWith(100), as its pollers chain runs.
func warmMaxRuns(maxRuns int) int {
	if maxRuns == workerMaxRuns {
		return 100
	}
	return maxRuns
}

// skyHints are the worker's wake-up hints: on PostgreSQL it listens on the
// database's URL, as sky durable worker does with DATABASE_URL; SQLite has
// none.
func skyHints(sp spec) durable.HintSettings {
	if sp.Driver != "postgres" {
		return durable.HintSettings{}
	}
	return durable.HintSettings{URL: sp.DSN + "?sslmode=disable"}
}

// awaitSky waits until the workflow bodies have returned until times,
// then until n timed runs are recorded done (the completion is written
// after the body returns), reading the runs table each millisecond. It
// returns how many times it read the table: on PostgreSQL, each read is a
// transaction of the database. worked ends early if the worker stops.
func awaitSky(ctx context.Context, d *db.DB, bodies *atomic.Int64, until int64, n int, worked <-chan error) (int, error) {
	deadline := time.Now().Add(10 * time.Minute)
	probes := 0
	for {
		if bodies.Load() >= until {
			var done int
			if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done' AND id LIKE 'run-%'`).Scan(&done); err != nil {
				return probes, err
			}
			probes++
			if done == n {
				return probes, nil
			}
		}
		select {
		case err := <-worked:
			return probes, fmt.Errorf("the worker stopped before the runs were done: %v", err)
		case <-ctx.Done():
			return probes, ctx.Err()
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return probes, fmt.Errorf("%d bodies of %d returned, the runs not all done, after 10 minutes", bodies.Load(), until)
		}
	}
}

// serialWarm is the number of one-at-a-time warm-up workflows.
func serialWarm(sp spec) int { return min(50, sp.Serial) }

// drainSky polls with pollers goroutines sharing e until none finds a due
// run.
func drainSky(ctx context.Context, e *durable.Engine, defs []durable.Workflow, pollers, maxRuns int) error {
	return inParallel(pollers, pollers, func(int) error {
		for {
			worked, err := e.PollWith(ctx, defs, durable.PollOptions{MaxRuns: maxRuns})
			if err != nil {
				return fmt.Errorf("poll: %w", err)
			}
			if !worked {
				return nil
			}
		}
	})
}

// flushPool makes every one of the n connections of d's pool publish its
// statistics: n transactions, held open together so each has a connection
// of its own, each calling pg_stat_force_next_flush (the backend publishes
// when the transaction ends). It returns n, the transactions it committed
// (and the connections the pool holds after it).
func flushPool(ctx context.Context, d *db.DB, n int) (int, error) {
	var all, arrived sync.WaitGroup
	arrived.Add(n)
	release := make(chan struct{})
	errs := make(chan error, n)
	for range n {
		all.Add(1)
		go func() {
			defer all.Done()
			var once sync.Once
			defer once.Do(arrived.Done)
			errs <- d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
				_, err := tx.Exec(ctx, "SELECT pg_stat_force_next_flush()")
				once.Do(arrived.Done)
				<-release
				return err
			})
		}()
	}
	arrived.Wait()
	close(release)
	all.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return 0, fmt.Errorf("flush statistics: %w", err)
		}
	}
	return n, nil
}
