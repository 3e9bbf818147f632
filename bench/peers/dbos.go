package main

// DBOS Transact Go's side. "All at once" is its queue: the workflows are
// enqueued, then a worker whose queue runs Pollers workflows at a time
// (worker concurrency) drains them; "one at a time" is RunWorkflow, which
// runs the workflow in this process at once, and GetResult.
//
// So that the timed phase holds the drain only (as this engine's does),
// the timed workflows are enqueued by a DBOS client while no worker runs,
// and the timed worker is launched on the same connection pool as the
// warm-up worker (its connections, and their prepared statements, stay).

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS on SQLite
	"github.com/jackc/pgx/v5/pgxpool"
)

const (
	dbosApp   = "peers-bench"
	dbosQueue = "peers"
	// dbosPoolSize is the pool DBOS makes for itself when given a URL.
	dbosPoolSize = 20
	// dbosShutdown bounds a DBOS shutdown.
	dbosShutdown = 30 * time.Second
)

// dbosRun is one child's DBOS setup: the pool (PostgreSQL) or file
// (SQLite), the workflow, and the count of bodies that returned.
type dbosRun struct {
	sp     spec
	pool   *pgxpool.Pool // PostgreSQL
	probe  *sql.DB       // SQLite: reads the status table
	wf     dbos.Workflow[string, string]
	name   string
	bodies atomic.Int64
	logger *slog.Logger
	// level is the logger's: warnings, except while a context shuts down
	// (its goroutines then report their cancelled queries as errors).
	level slog.LevelVar
}

func runDBOS(ctx context.Context, sp spec) (result, error) {
	r := &dbosRun{sp: sp}
	r.level.Set(slog.LevelWarn)
	r.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: &r.level}))
	steps := workloadSteps(sp.Workload)
	r.name = "peers.steps" + strconv.Itoa(steps)
	r.wf = func(c dbos.Context, in string) (string, error) {
		acc := in
		for i := 1; i <= steps; i++ {
			v := "v" + strconv.Itoa(i)
			out, err := dbos.RunAsStep(c, func(context.Context) (string, error) { return v, nil }, dbos.WithStepName("s"+strconv.Itoa(i)))
			if err != nil {
				return "", err
			}
			acc += out
		}
		r.bodies.Add(1)
		return acc, nil
	}
	m, err := newMeter(ctx, sp)
	if err != nil {
		return result{}, err
	}
	defer m.close()
	if sp.Driver == "postgres" {
		cfg, err := pgxpool.ParseConfig(sp.DSN + "?sslmode=disable")
		if err != nil {
			return result{}, err
		}
		// DBOS's own pool settings for a URL (sysdb.newSystemDatabase).
		cfg.MaxConns = dbosPoolSize
		cfg.MinConns = 0
		cfg.MaxConnLifetime = time.Hour
		cfg.MaxConnIdleTime = 5 * time.Minute
		if r.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
			return result{}, err
		}
		defer r.pool.Close()
		m.flush = r.flushIdle
	} else {
		if r.probe, err = sql.Open("sqlite", sp.DSN+"?_pragma=busy_timeout(5000)"); err != nil {
			return result{}, err
		}
		defer r.probe.Close()
	}

	if sp.Workload == oneByOne {
		w, err := r.worker(ctx, true, false)
		if err != nil {
			return result{}, err
		}
		stopped := false
		defer func() {
			if !stopped {
				r.shutdown(w)
			}
		}()
		one := func(prefix string) func(i int) error {
			return func(i int) error {
				h, err := dbos.RunWorkflow(w, r.wf, "x", dbos.WithWorkflowID(prefix+"-"+strconv.Itoa(i)))
				if err != nil {
					return err
				}
				_, err = h.GetResult()
				return err
			}
		}
		warm := one("warm")
		for i := range serialWarm(sp) {
			if err := warm(i); err != nil {
				return result{}, err
			}
		}
		if err := r.analyze(ctx); err != nil {
			return result{}, err
		}
		stop := func() error { stopped = true; return r.shutdown(w) }
		return serially(ctx, m, sp.Driver, sp.Serial, one("run"), stop)
	}

	// Warm-up through the queue, with the launched worker enqueueing.
	w, err := r.worker(ctx, true, true)
	if err != nil {
		return result{}, err
	}
	q, err := dbos.RetrieveQueue(w, dbosQueue)
	if err != nil {
		return result{}, err
	}
	total := 0
	warm := func(prefix string, n int) error {
		if err := inParallel(n, 8, func(i int) error {
			_, err := dbos.RunWorkflow(w, r.wf, "x", dbos.WithQueue(q), dbos.WithWorkflowID(prefix+"-"+strconv.Itoa(i)))
			return err
		}); err != nil {
			return err
		}
		total += n
		_, err := r.awaitDone(ctx, total)
		return err
	}
	if err := warm("warm", sp.Warm*sp.Pollers); err != nil {
		return result{}, err
	}
	if sp.Driver == "postgres" {
		if err := r.analyze(ctx); err != nil {
			return result{}, err
		}
		if err := warm("rewarm", sp.Warm*sp.Pollers/4); err != nil {
			return result{}, err
		}
	}
	if err := r.shutdown(w); err != nil {
		return result{}, fmt.Errorf("shutdown of the warm-up worker: %w", err)
	}

	// The timed workflows, enqueued while no worker runs.
	client, err := dbos.NewClient(ctx, r.clientConfig())
	if err != nil {
		return result{}, fmt.Errorf("DBOS client: %w", err)
	}
	if err := inParallel(sp.Workflows, 8, func(i int) error {
		_, err := dbos.Enqueue[string](client, dbosQueue, r.name, "x", dbos.WithEnqueueWorkflowID("run-"+strconv.Itoa(i)))
		return err
	}); err != nil {
		return result{}, fmt.Errorf("enqueue: %w", err)
	}
	if err := r.shutdown(client); err != nil {
		return result{}, err
	}
	total += sp.Workflows

	timed, err := r.worker(ctx, false, true)
	if err != nil {
		return result{}, err
	}
	a, err := m.begin(ctx)
	if err != nil {
		return result{}, err
	}
	if err := dbos.Launch(timed); err != nil {
		return result{}, err
	}
	probes, err := r.awaitDone(ctx, total)
	if err != nil {
		return result{}, err
	}
	b, err := m.end(ctx, func() error { return r.shutdown(timed) })
	if err != nil {
		return result{}, err
	}
	res := measured(sp.Workflows, a, b, sp.Driver)
	res.Probes = probes
	if res.Commits >= 0 {
		res.Commits -= int64(probes)
	}
	return res, nil
}

// worker makes a DBOS context with the workflow registered, and the queue
// when queue is set (a queue is polled even when empty: one at a time,
// which needs none, does without), launched when launch is set.
func (r *dbosRun) worker(ctx context.Context, launch, queue bool) (dbos.Context, error) {
	cfg := dbos.Config{AppName: dbosApp, Logger: r.logger, SystemDBPool: r.pool}
	if r.pool == nil {
		cfg.DatabaseURL = "sqlite:" + r.sp.DSN
	}
	w, err := dbos.NewContext(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("DBOS context: %w", err)
	}
	dbos.RegisterWorkflow(w, r.wf, dbos.WithWorkflowName(r.name))
	if queue {
		if _, err := dbos.RegisterQueue(w, dbosQueue, dbos.WithWorkerConcurrency(r.sp.Pollers), dbos.WithQueueBasePollingInterval(r.sp.DBOSPoll)); err != nil {
			return nil, fmt.Errorf("DBOS queue: %w", err)
		}
	}
	if launch {
		if err := dbos.Launch(w); err != nil {
			return nil, fmt.Errorf("DBOS launch: %w", err)
		}
	}
	return w, nil
}

// shutdown shuts c down, quietly.
func (r *dbosRun) shutdown(c dbos.Client) error {
	r.level.Set(slog.LevelError + 1)
	defer r.level.Set(slog.LevelWarn)
	return dbos.Shutdown(c, dbosShutdown)
}

func (r *dbosRun) clientConfig() dbos.ClientConfig {
	cfg := dbos.ClientConfig{AppName: dbosApp, Logger: r.logger, SystemDBPool: r.pool}
	if r.pool == nil {
		cfg.DatabaseURL = "sqlite:" + r.sp.DSN
	}
	return cfg
}

// awaitDone waits until the workflow bodies have returned total times,
// then until total workflows are recorded SUCCESS (the status is written
// after the body returns). It returns how many times it read the status
// table after the bodies had returned: on PostgreSQL, each read is a
// transaction of the database.
func (r *dbosRun) awaitDone(ctx context.Context, total int) (int, error) {
	deadline := time.Now().Add(10 * time.Minute)
	for r.bodies.Load() < int64(total) {
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("DBOS ran %d of %d workflow bodies in 10 minutes", r.bodies.Load(), total)
		}
		time.Sleep(200 * time.Microsecond) // polls a counter in memory
	}
	for probes := 1; ; probes++ {
		var n int
		var err error
		if r.pool != nil {
			err = r.pool.QueryRow(ctx, `SELECT COUNT(*) FROM dbos.workflow_status WHERE status = 'SUCCESS'`).Scan(&n)
		} else {
			err = r.probe.QueryRowContext(ctx, `SELECT COUNT(*) FROM workflow_status WHERE status = 'SUCCESS'`).Scan(&n)
		}
		if err != nil {
			return probes, fmt.Errorf("read DBOS statuses: %w", err)
		}
		if n >= total {
			return probes, nil
		}
		if time.Now().After(deadline) {
			return probes, fmt.Errorf("DBOS recorded %d of %d workflows SUCCESS in 10 minutes", n, total)
		}
		time.Sleep(time.Millisecond)
	}
}

func (r *dbosRun) analyze(ctx context.Context) error {
	if r.pool == nil {
		return nil
	}
	_, err := r.pool.Exec(ctx, "ANALYZE")
	return err
}

// flushIdle makes every idle connection of the pool publish its
// statistics (pg_stat_force_next_flush, one transaction each) and returns
// how many it flushed and how many connections the pool holds. It runs
// while no DBOS worker runs, so every connection is idle.
func (r *dbosRun) flushIdle(ctx context.Context) (int, int, error) {
	conns := r.pool.AcquireAllIdle(ctx)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for _, c := range conns {
		if _, err := c.Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
			return 0, 0, fmt.Errorf("flush statistics: %w", err)
		}
	}
	return len(conns), int(r.pool.Stat().TotalConns()), nil
}
