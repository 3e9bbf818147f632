package durable_test

// Many workers on one PostgreSQL: each worker has its own connection pool
// (its own *db.DB and Engine), as separate processes would. They drain 2,000
// runs of a workflow with three steps, a real (database-clock) sleep and a
// signal the test sends while they run.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// withParam adds key=value to the query of a PostgreSQL URL.
func withParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + value
}

// openPG opens its own pool of size n on dsn, closed when t ends.
func openPG(t testing.TB, dsn string, n int) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), "postgres", withParam(dsn, "pool_max_conns", strconv.Itoa(n)))
	if err != nil {
		t.Fatalf("open PostgreSQL pool: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// awaitCondition polls cond every 50ms until it holds or deadline passes.
func awaitCondition(t *testing.T, deadline time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(deadline)
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-tick.C:
		case <-timeout:
			t.Fatalf("%s: not reached within %s; last state: %s", what, deadline, state)
		}
	}
}

// flowWorkflow is the many-workers workflow, as worker `worker` runs it:
// step "a" (a row in worker_effects inside the step's transaction), a 20ms
// sleep, step "b" (a row written outside any transaction: at-least-once, so
// a duplicate would show), await signal "go", step "c" (in the step's
// transaction). Output: "<input>|<signal payload>".
func flowWorkflow(worker string) durable.Def[string, string] {
	effect := func(c *durable.Ctx, step string) task.Task[string] {
		return durable.Step(c, codec.String, step, task.From(func(ctx context.Context) (string, error) {
			if step == "b" {
				ctx = context.Background() // outside the step's transaction
			}
			_, err := c.DB().Exec(ctx, `INSERT INTO worker_effects (run_id, step, worker) VALUES (?, ?, ?)`, c.RunID(), step, worker)
			return step + "@" + worker, err
		}))
	}
	return durable.Register("workers.flow", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return task.AndThen(effect(c, "a"), func(string) task.Task[string] {
			return task.AndThen(durable.Sleep(c, 20), func(struct{}) task.Task[string] {
				return task.AndThen(effect(c, "b"), func(string) task.Task[string] {
					return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(payload string) task.Task[string] {
						return task.Map(effect(c, "c"), func(string) string { return in + "|" + payload })
					})
				})
			})
		})
	})
}

// pollLoop polls until ctx ends, idling 5ms whenever no run is due (a
// worker's polling interval, as Sub.every would give it). Engine errors go
// to errs.
func pollLoop(ctx context.Context, e *durable.Engine, defs []durable.Workflow, errs chan<- error) {
	for ctx.Err() == nil {
		worked, err := e.Poll(ctx, defs)
		if err != nil && ctx.Err() == nil {
			select {
			case errs <- fmt.Errorf("worker %s: %w", e.WorkerID(), err):
			default:
			}
		}
		if !worked {
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
}

// count runs a COUNT-like query returning one integer.
func count(t testing.TB, d *db.DB, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := d.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func TestManyWorkersDrainRuns(t *testing.T) {
	t.Parallel()
	const (
		workers = 4
		runs    = 2000
	)
	ctx := context.Background()
	// synchronous_commit=off: this test is about concurrency, not about
	// surviving a server crash, and it keeps the test off the disk's fsync rate.
	dsn := withParam(dbtest.URL(t, "workers"), "synchronous_commit", "off")
	admin := openPG(t, dsn, 4)
	ae := durable.New(admin, durable.Options{WorkerID: "admin"})
	if err := ae.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `CREATE TABLE worker_effects (run_id TEXT NOT NULL, step TEXT NOT NULL, worker TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, runs)
	for i := range ids {
		ids[i] = fmt.Sprintf("run-%04d", i)
	}
	// Start every run, four at a time.
	began := time.Now()
	var wg sync.WaitGroup
	startErrs := make(chan error, runs)
	def := flowWorkflow("admin")
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < runs; i += 4 {
				if err := durable.Start(ctx, ae, def, ids[i], ids[i]); err != nil {
					startErrs <- err
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("started %d runs in %s", runs, time.Since(began))
	close(startErrs)
	for err := range startErrs {
		t.Fatalf("start: %v", err)
	}

	// The workers, each with its own pool and Engine.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 16)
	var workersDone sync.WaitGroup
	for w := 0; w < workers; w++ {
		name := fmt.Sprintf("w%d", w)
		e := durable.New(openPG(t, dsn, 3), durable.Options{WorkerID: name})
		defs := []durable.Workflow{flowWorkflow(name).Erase()}
		workersDone.Add(1)
		go func() {
			defer workersDone.Done()
			pollLoop(runCtx, e, defs, errs)
		}()
	}
	// The signals, sent while the workers run: some arrive before their run
	// waits (the mailbox keeps them), some after (they wake the run).
	signalErr := make(chan error, 1)
	go func() {
		for _, id := range ids {
			if err := ae.Signal(ctx, id, "go", `"go-`+id+`"`); err != nil {
				signalErr <- err
				return
			}
		}
		signalErr <- nil
	}()
	if err := <-signalErr; err != nil {
		t.Fatalf("signal: %v", err)
	}
	t.Logf("signals sent after %s", time.Since(began))
	awaitCondition(t, 90*time.Second, "all runs done", func() (bool, string) {
		rows, err := admin.QueryMaps(ctx, `SELECT status, COUNT(*) AS n FROM _sky_durable_runs GROUP BY status ORDER BY status`)
		if err != nil {
			return false, err.Error()
		}
		state := fmt.Sprint(rows)
		for _, r := range rows {
			if r["status"] == "dead" || r["status"] == "failed" {
				return true, state // stop waiting; the checks below report it
			}
		}
		return len(rows) == 1 && rows[0]["status"] == "done", state
	})
	t.Logf("all done after %s", time.Since(began))
	stop()
	workersDone.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("engine error: %v", err)
	}

	if n := count(t, admin, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done'`); n != runs {
		rows, _ := admin.QueryMaps(ctx, `SELECT id, status, last_error FROM _sky_durable_runs WHERE status <> 'done' LIMIT 5`)
		t.Fatalf("%d of %d runs done; some others: %v", n, runs, rows)
	}
	if n := count(t, admin, `SELECT COUNT(*) FROM _sky_durable_runs WHERE output <> '"' || id || '|go-' || id || '"'`); n != 0 {
		t.Errorf("%d runs have a wrong output", n)
	}
	// Every durable operation journalled exactly once: a, sleep:1, b, signal:go, c.
	if n := count(t, admin, `SELECT COUNT(*) FROM _sky_durable_journal`); n != runs*5 {
		t.Errorf("%d journal rows, want %d (5 per run)", n, runs*5)
	}
	if n := count(t, admin, `SELECT COUNT(*) FROM (SELECT run_id FROM _sky_durable_journal GROUP BY run_id
		HAVING string_agg(step_id, ',' ORDER BY seq) <> 'a,sleep:1,b,signal:go,c') bad`); n != 0 {
		t.Errorf("%d runs have another journal than a,sleep:1,b,signal:go,c", n)
	}
	// Every step's effect ran exactly once, including the plain step b.
	if n := count(t, admin, `SELECT COUNT(*) FROM worker_effects`); n != runs*3 {
		t.Errorf("%d step effects, want %d (3 per run)", n, runs*3)
	}
	if n := count(t, admin, `SELECT COUNT(*) FROM (SELECT run_id, step FROM worker_effects GROUP BY run_id, step HAVING COUNT(*) > 1) dup`); n != 0 {
		t.Errorf("%d steps ran more than once", n)
	}
	// The work was shared: every worker ran steps.
	shares, err := admin.QueryMaps(ctx, `SELECT worker, COUNT(*) AS n FROM worker_effects GROUP BY worker ORDER BY worker`)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("steps run per worker: %v", shares)
	if len(shares) != workers {
		t.Errorf("only %d of %d workers ran steps: %v", len(shares), workers, shares)
	}
}
