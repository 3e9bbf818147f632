package loadtest

// Shared pieces of the load run: a fresh database per configuration
// with counters (statements from the engine's OnStatement hook and, on
// PostgreSQL, what crossed the wire), latency recording, the benchmark
// workflows, and draining with N concurrent pollers.

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// benchDB is one fresh database with its counters. On PostgreSQL it has
// two pools: d connects directly (timed passes: the proxy would add its own
// CPU and latency on a 2-core machine) and counted goes through the counting
// proxy (counting passes). On SQLite both are the same pool.
type benchDB struct {
	driver  string
	d       *db.DB
	counted *db.DB
	proxy   *pgProxy // nil on SQLite
	stmts   atomic.Int64

	// otel, when set, is where the engines report (the telemetry part).
	otel *otelSink

	mu       sync.Mutex
	trace    []hookEvent // only while tracing
	tracing  bool
	claimSQL string
}

// hookEvent is one statement the engine announced, with when.
type hookEvent struct {
	op string
	at time.Time
}

// openBenchDB makes a fresh database of driver whose pools (PostgreSQL)
// hold poolSize connections each; cl closes and drops it.
func (r *runner) openBenchDB(ctx context.Context, cl *cleanups, driver string, poolSize int) (*benchDB, error) {
	bd := &benchDB{driver: driver}
	switch driver {
	case "postgres":
		dsn, err := r.freshDatabase(ctx, cl, driver)
		if err != nil {
			return nil, err
		}
		proxy, proxied, err := startPGProxy(dsn)
		if err != nil {
			return nil, err
		}
		cl.add(proxy.close)
		bd.proxy = proxy
		if bd.d, err = openPG(ctx, cl, dsn, poolSize); err != nil {
			return nil, err
		}
		if bd.counted, err = openPG(ctx, cl, proxied, poolSize); err != nil {
			return nil, err
		}
	case "sqlite":
		path, err := sqlitePath(cl)
		if err != nil {
			return nil, err
		}
		if bd.d, err = open(ctx, cl, driver, path); err != nil {
			return nil, err
		}
		bd.counted = bd.d
	default:
		return nil, fmt.Errorf("unknown driver %q (postgres or sqlite)", driver)
	}
	if err := bd.engine("setup").Setup(ctx); err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	return bd, nil
}

// engine is a new Engine on the direct pool, counting its statements.
func (bd *benchDB) engine(worker string) *durable.Engine {
	return durable.New(bd.d, bd.options(worker))
}

// countingEngine is a new Engine on the pool behind the counting proxy.
func (bd *benchDB) countingEngine(worker string) *durable.Engine {
	return durable.New(bd.counted, bd.options(worker))
}

// options are the engines' options: counted statements, and the
// OpenTelemetry providers when the database has a sink.
func (bd *benchDB) options(worker string) durable.Options {
	o := durable.Options{WorkerID: worker, OnStatement: bd.onStatement}
	if bd.otel != nil {
		o.TracerProvider, o.MeterProvider = bd.otel.tp, bd.otel.mp
	}
	return o
}

func (bd *benchDB) onStatement(op, sql string) {
	bd.stmts.Add(1)
	bd.mu.Lock()
	if op == "claim" && bd.claimSQL == "" {
		bd.claimSQL = sql
	}
	if bd.tracing {
		bd.trace = append(bd.trace, hookEvent{op, time.Now()})
	}
	bd.mu.Unlock()
}

// Counts is a snapshot of every count: what crossed the wire (PostgreSQL)
// and the statements the engine announced to its OnStatement hook.
type Counts struct {
	Wire       WireCounts
	Statements int64
}

func (bd *benchDB) counters() Counts {
	c := Counts{Statements: bd.stmts.Load()}
	if bd.proxy != nil {
		c.Wire = bd.proxy.counts()
	}
	return c
}

func (c Counts) sub(o Counts) Counts {
	return Counts{Wire: c.Wire.sub(o.Wire), Statements: c.Statements - o.Statements}
}

// per divides every count by n.
func (c Counts) per(n int) Costs {
	f := float64(n)
	return Costs{
		RoundTrips:   float64(c.Wire.RoundTrips) / f,
		Transactions: float64(c.Wire.Transactions) / f,
		WriteCommits: float64(c.Wire.WriteCommits) / f,
		Statements:   float64(c.Statements) / f,
	}
}

// Costs are counts per unit (workflow, step, poll). On SQLite only
// Statements (the engine's) is measured.
type Costs struct {
	RoundTrips, Transactions, WriteCommits, Statements float64
}

func (c Costs) minus(o Costs) Costs {
	return Costs{c.RoundTrips - o.RoundTrips, c.Transactions - o.Transactions, c.WriteCommits - o.WriteCommits, c.Statements - o.Statements}
}

func (c Costs) scale(f float64) Costs {
	return Costs{c.RoundTrips * f, c.Transactions * f, c.WriteCommits * f, c.Statements * f}
}

// format prints the costs that were measured on driver.
func (c Costs) format(driver string) string {
	c = c.scale(1) // -0 prints as 0 below
	for _, f := range []*float64{&c.RoundTrips, &c.Transactions, &c.WriteCommits, &c.Statements} {
		if *f > -0.005 && *f < 0.005 {
			*f = 0
		}
	}
	if driver == "postgres" {
		return fmt.Sprintf("%.2f round trips, %.2f write commits (%.2f transactions), %.2f engine statements",
			c.RoundTrips, c.WriteCommits, c.Transactions, c.Statements)
	}
	return fmt.Sprintf("%.2f engine statements", c.Statements)
}

// latencies records durations from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

func (l *latencies) reset() {
	l.mu.Lock()
	l.d = nil
	l.mu.Unlock()
}

// quantile is the q-quantile (0..1) of the recorded durations.
func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return quantileOf(l.d, q)
}

func quantileOf(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return s[i]
}

// timed records how long t takes each time it runs.
func timed[A any](l *latencies, t task.Task[A]) task.Task[A] {
	return task.From(func(ctx context.Context) (A, error) {
		t0 := time.Now()
		a, err := task.Run(ctx, t)
		l.add(time.Since(t0))
		return a, err
	})
}

// stepsWorkflow has k steps s1..sk, each yielding a constant (its cost is
// the engine's own), then, when await is set, waits for signal "go".
// Fresh steps' latencies go to lat.
func stepsWorkflow(name string, k int, await bool, lat *latencies) durable.Def[string, string] {
	return durable.Register(name, codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		var chain func(i int, acc string) task.Task[string]
		chain = func(i int, acc string) task.Task[string] {
			if i > k {
				if await {
					return task.Map(durable.AwaitSignal(c, codec.String, "go"), func(s string) string { return acc + s })
				}
				return task.Succeed(acc)
			}
			st := timed(lat, durable.Step(c, codec.String, "s"+strconv.Itoa(i), task.Succeed("v"+strconv.Itoa(i))))
			return task.AndThen(st, func(v string) task.Task[string] { return chain(i+1, acc+v) })
		}
		return chain(1, in)
	})
}

// startRuns starts n runs of def named prefix-0..n-1, 8 at a time.
func startRuns(ctx context.Context, e *durable.Engine, def durable.Def[string, string], prefix string, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				if err := durable.Start(ctx, e, def, fmt.Sprintf("%s-%d", prefix, i), "x"); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return fmt.Errorf("start: %w", err)
	}
	return nil
}

// drain polls with pollers goroutines, each with its own Engine made by
// newEngine (all on one pool), until none finds a due run; it returns the
// elapsed time.
func drain(ctx context.Context, newEngine func(worker string) *durable.Engine, defs []durable.Workflow, pollers int) (time.Duration, error) {
	return drainWith(ctx, newEngine, defs, pollers, 1)
}

// drainWith is drain with pollers calling PollWith with MaxRuns maxRuns.
func drainWith(ctx context.Context, newEngine func(worker string) *durable.Engine, defs []durable.Workflow, pollers, maxRuns int) (time.Duration, error) {
	engines := make([]*durable.Engine, pollers)
	for i := range engines {
		engines[i] = newEngine(fmt.Sprintf("p%d", i))
	}
	var wg sync.WaitGroup
	errs := make(chan error, pollers)
	t0 := time.Now()
	for _, e := range engines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				worked, err := e.PollWith(ctx, defs, durable.PollOptions{MaxRuns: maxRuns})
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
	elapsed := time.Since(t0)
	close(errs)
	for err := range errs {
		return elapsed, fmt.Errorf("poll: %w", err)
	}
	return elapsed, nil
}

// shared is a newEngine for drain that gives every poller the same Engine.
func shared(e *durable.Engine) func(worker string) *durable.Engine {
	return func(string) *durable.Engine { return e }
}

// countStatus counts the runs in status.
func (bd *benchDB) countStatus(ctx context.Context, status durable.Status) (int64, error) {
	var n int64
	err := bd.d.QueryRow(ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = ?`, string(status)).Scan(&n)
	return n, err
}

// checkAllDone fails unless exactly want runs are done, naming where the
// others are.
func (bd *benchDB) checkAllDone(ctx context.Context, want int64) (int64, error) {
	done, err := bd.countStatus(ctx, durable.StatusDone)
	if err != nil || done == want {
		return done, err
	}
	var where []string
	for _, st := range []durable.Status{durable.StatusWaiting, durable.StatusRunning, durable.StatusFailed, durable.StatusDead} {
		n, err := bd.countStatus(ctx, st)
		if err != nil {
			return done, err
		}
		where = append(where, fmt.Sprintf("%s %d", st, n))
	}
	return done, fmt.Errorf("%d runs done, want %d (%s)", done, want, strings.Join(where, ", "))
}
