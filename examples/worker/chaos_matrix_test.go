package worker_test

// The fault matrix: the faults a 2026 sweep of PostgreSQL-backed queues found
// other engines failing, one cell each, on a private crash-safe PostgreSQL,
// against `sky durable worker` processes running examples/worker's
// Jobs.order (2 workers, concurrency 4, stop timeout 5 s, lease 2 s). Each
// cell gets its own database and keeps a backlog of runs (started and
// signalled at once) for its window while the fault strikes; at the window's
// end, with the fault still on, it SIGTERMs the workers and times their
// exit, then lets fresh workers drain every run. A cell prints its completion
// in the window against its yardstick's: the baseline cell's (the same
// workers and load, no fault) or, for a fault that takes capacity away or
// brings load of its own, a cell with that and not the fault (pool
// baseline, burst elsewhere), lost runs, duplicated effects, recovery time, dead tuples in the
// runs and journal tables, and how long the slowest worker took to stop.
//
// It asserts correctness only: every run done, each transactional effect
// exactly once, every worker gone within its stop timeout plus a margin. The
// rates are figures (docs/scaling.md, "The fault matrix").
//
// make test and make chaos run the short matrix (3 s windows, a burst of
// 500 starts); make chaos-matrix the full one (60 s windows, the horizon held
// for 5 minutes, a burst of 10,000 starts):
//
//	go test ./examples/worker -run '^TestChaosMatrix$' -v -timeout 60m -args -chaos-matrix

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

var (
	chaosMatrix = flag.Bool("chaos-matrix", false, "TestChaosMatrix runs the full matrix (60 s cells, the horizon held 5 minutes, a burst of 10,000 starts)")
	chaosCells  = flag.String("chaos-cells", "", "TestChaosMatrix runs only these cells (comma-separated names, as printed) besides the baseline")
)

const (
	matrixWorkers     = 2
	matrixConcurrency = 4
	matrixStopTimeout = 5 * time.Second
	// stopMargin is what a worker may take beyond its stop timeout to exit
	// (closing its pool, a loaded machine) before it counts as a hang.
	stopMargin = 10 * time.Second
	// matrixBacklog is how many unfinished runs the starter keeps waiting.
	matrixBacklog = 100
	// backlogWindow is how many of the latest starts keepBacklog counts:
	// a run older than those (a few seconds of starts) is done.
	backlogWindow = 5 * matrixBacklog
)

// matrixScale is one size of the matrix.
type matrixScale struct {
	window, horizon time.Duration // a cell's window; how long the horizon cell's is
	burst           int           // starts in the burst cell
}

var (
	shortMatrix = matrixScale{window: 3 * time.Second, horizon: 3 * time.Second, burst: 500}
	fullMatrix  = matrixScale{window: time.Minute, horizon: 5 * time.Minute, burst: 10000}
)

// cell is one run of the matrix.
type cell struct {
	*chaos
	srv     *dbtest.Server
	scale   matrixScale
	window  time.Duration
	workers []*process

	recovery time.Duration // the fault's own measure (see each fault)
	note     string

	base, dbName string // the server's URL (up to the database name) and the cell's database
}

// matrixFault strikes during the window (ctx ends with it) and returns what
// lifts it after the workers were told to stop; nil when nothing is left on.
type matrixFault struct {
	name     string
	recovers bool // the cell measures a recovery time (printMatrix says what)
	pool     int  // pool_max_conns for the workers (0: the default)
	// concurrency is the workers' --concurrency (0: matrixConcurrency).
	concurrency int
	// against names the cell whose rate this cell's is measured against,
	// the same load and capacity without the fault ("": the baseline).
	against string
	window  func(matrixScale) time.Duration
	strike  func(ctx context.Context, c *cell) (lift func())
}

// cellResult is what a cell measured.
type cellResult struct {
	name                  string
	window                time.Duration
	started, inWindow     int64
	lost, doubled         int64
	recovery              time.Duration
	deadRuns, deadJournal int64
	slowestStop           time.Duration
	hung                  int
	note                  string
}

func TestChaosMatrix(t *testing.T) {
	t.Parallel() // with TestChaos: each has a server of its own
	scale := shortMatrix
	if *chaosMatrix {
		scale = fullMatrix
	}
	each := func(s matrixScale) time.Duration { return s.window }
	faults := []matrixFault{
		{name: "baseline", window: each, strike: func(context.Context, *cell) func() { return nil }},
		{name: "postgres restart", recovers: true, window: each, strike: strikeRestart},
		{name: "pg_terminate_backend", recovers: true, window: each, strike: strikeTerminate},
		// An exhausted pool is measured against the capacity it leaves: the
		// workload's charge step holds a connection 40 ms, so 2 connections
		// a worker bound it whatever the pollers; the fault is the 2 extra
		// pollers waiting for connections (a queue that deadlocks or thrashes
		// there falls below its yardstick).
		{name: "pool baseline", pool: 2, concurrency: 2, window: each, strike: func(_ context.Context, c *cell) func() {
			c.note = "2 pollers on 2 connections each: pool exhausted's yardstick"
			return nil
		}},
		{name: "pool exhausted", pool: 2, against: "pool baseline", window: each, strike: func(_ context.Context, c *cell) func() {
			c.note = fmt.Sprintf("%d pollers on %d connections each", matrixConcurrency, 2)
			return nil
		}},
		{name: "held xmin horizon", window: func(s matrixScale) time.Duration { return s.horizon }, strike: strikeHorizon},
		// A burst is measured against the same burst sent to another
		// database of the server: on 2 cores its starters and their
		// transactions take CPU from the workers either way; the fault is
		// the workers taking the burst in while they drain.
		{name: "burst elsewhere", window: each, strike: strikeBurstElsewhere},
		{name: "event burst", recovers: true, against: "burst elsewhere", window: each, strike: strikeBurst},
		{name: "repeated SIGKILL", recovers: true, window: each, strike: strikeKills},
	}
	if *chaosCells != "" {
		want := strings.Split(*chaosCells, ",")
		var names []string
		for _, f := range faults {
			names = append(names, f.name)
		}
		for _, w := range want {
			if !slices.Contains(names, w) {
				t.Fatalf("-chaos-cells: %q is not a cell (the cells: %s)", w, strings.Join(names, ", "))
			}
		}
		for _, f := range faults {
			if slices.Contains(want, f.name) && f.against != "" {
				want = append(want, f.against) // its yardstick runs too
			}
		}
		faults = slices.DeleteFunc(faults, func(f matrixFault) bool { return f.name != "baseline" && !slices.Contains(want, f.name) })
	}
	srv := dbtest.StartCrashSafe(t)
	var results []cellResult
	for i, f := range faults {
		r := runCell(t, srv, i, f, scale)
		results = append(results, r)
	}
	printMatrix(results, faults)
}

// runCell runs one cell on a database of its own.
func runCell(t *testing.T, srv *dbtest.Server, i int, f matrixFault, scale matrixScale) cellResult {
	ctx := context.Background()
	base := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/", srv.Port())
	admin := openURL(t, base+"postgres?sslmode=disable")
	dbName := fmt.Sprintf("cell%d", i)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+dbName); err != nil {
		t.Fatal(err)
	}
	admin.Close()
	workerURL := base + dbName + "?sslmode=disable&connect_timeout=2&application_name=skychaos-worker"
	if f.pool > 0 {
		workerURL += fmt.Sprintf("&pool_max_conns=%d", f.pool)
	}
	c := &cell{srv: srv, scale: scale, window: f.window(scale), chaos: &chaos{
		t: t, url: workerURL, d: openURL(t, base+dbName+"?sslmode=disable&connect_timeout=2"),
		rng:  rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11)),
		argv: []string{"durable", "worker", "--concurrency", fmt.Sprint(cmp.Or(f.concurrency, matrixConcurrency)), "--stop-timeout", matrixStopTimeout.String(), "src/Jobs.sky"},
	}}
	c.base, c.dbName = base, dbName
	c.admin = durable.New(c.d, durable.Options{WorkerID: "chaos-admin", Keys: chaosKeys})
	if err := c.admin.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.d.Exec(ctx, `CREATE TABLE chaos_effects (run_id TEXT NOT NULL, step TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	c.order = durable.Register("order", codec.String, codec.String, func(*durable.Ctx, string) task.Task[string] {
		return task.Fail[string](fmt.Errorf("the fault matrix's admin engine never runs order"))
	})
	c.workers = c.startWorkers()

	windowCtx, endWindow := context.WithTimeout(ctx, c.window)
	defer endWindow()
	var starting sync.WaitGroup
	starting.Add(1)
	go func() {
		defer starting.Done()
		c.keepBacklog(windowCtx)
	}()
	lift := f.strike(windowCtx, c)
	<-windowCtx.Done()
	starting.Wait()

	r := cellResult{name: f.name, window: c.window, note: c.note}
	r.inWindow = count(t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`)
	r.deadRuns, r.deadJournal = c.deadTuples()
	// Drain with fresh workers while the old ones stop, the fault still on.
	old := c.workers
	c.workers = c.startWorkers()
	c.stop(old, &r)
	if lift != nil {
		lift()
	}
	r.recovery = c.recovery
	c.mu.Lock()
	r.started = int64(len(c.started))
	c.mu.Unlock()
	c.awaitDone(r.started, 10*time.Minute)
	r.lost = r.started - count(t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`)
	r.doubled = count(t, c.d, `SELECT count(*) FROM (SELECT run_id, step FROM chaos_effects GROUP BY run_id, step HAVING count(*) > 1) d`)
	rows := count(t, c.d, `SELECT count(*) FROM chaos_effects`)
	c.stop(c.workers, &r)
	if r.lost != 0 {
		t.Errorf("%s: %d of %d runs not done", f.name, r.lost, r.started)
	}
	if r.inWindow == 0 {
		t.Errorf("%s: no run was done in the window (%d started)", f.name, r.started)
	}
	if r.doubled != 0 || rows != 2*r.started {
		t.Errorf("%s: %d effect rows for %d runs (want exactly 2 each), %d duplicated", f.name, rows, r.started, r.doubled)
	}
	if r.hung != 0 {
		t.Errorf("%s: %d workers did not exit within %v of SIGTERM", f.name, r.hung, matrixStopTimeout+stopMargin)
	}
	c.d.Close()
	// The next cell starts on a server with nothing left to do for this
	// one: the held horizon's 370,000 dead row versions kept autovacuum
	// busy through the event burst after it (79% of the baseline there,
	// 94% alone).
	admin = openURL(t, base+"postgres?sslmode=disable")
	defer admin.Close()
	if _, err := admin.Exec(ctx, "DROP DATABASE "+dbName+" WITH (FORCE)"); err != nil {
		t.Fatal(err)
	}
	return r
}

func (c *cell) startWorkers() []*process {
	ws := make([]*process, matrixWorkers)
	for i := range ws {
		ws[i] = c.worker()
	}
	for _, w := range ws {
		w.await(c.t, "running ", time.Minute)
	}
	return ws
}

// stop SIGTERMs ws and waits for each to exit; a worker still running its
// stop timeout plus stopMargin later is a hang (and is killed).
func (c *cell) stop(ws []*process, r *cellResult) {
	sent := time.Now()
	for _, w := range ws {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range ws {
		select {
		case err := <-w.done:
			r.slowestStop = max(r.slowestStop, time.Since(sent))
			if err != nil {
				out, errOut := w.output()
				c.t.Errorf("%s: a worker exited with %v on SIGTERM\nstdout:\n%s\nstderr:\n%s", r.name, err, out, errOut)
			}
		case <-time.After(time.Until(sent.Add(matrixStopTimeout + stopMargin))):
			r.hung++
			r.slowestStop = max(r.slowestStop, time.Since(sent))
			out, errOut := w.output()
			c.t.Logf("%s: worker %d still running %v after SIGTERM\nstdout:\n%s\nstderr:\n%s", r.name, w.cmd.Process.Pid, time.Since(sent), out, errOut)
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	}
}

// keepBacklog starts (and at once signals) runs so that matrixBacklog are
// unfinished, until ctx ends. It counts the unfinished among the last
// backlogWindow runs the cell started (by key: a few index probes), not
// among all runs: a count of every run with status <> 'done' is a
// sequential scan of the runs table, which under the held horizon reads
// every row version the workers ever wrote, 50 times a second, on the cores
// the workers measure (a third of the claims' server time in that cell).
func (c *cell) keepBacklog(ctx context.Context) {
	for n := 0; ctx.Err() == nil; {
		c.mu.Lock()
		recent, _ := json.Marshal(append([]string{}, c.started[max(0, len(c.started)-backlogWindow):]...))
		c.mu.Unlock()
		var waiting int64
		if err := c.d.QueryRow(ctx, `SELECT count(*) FROM _sky_durable_runs
  WHERE id IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB))) AND status <> 'done'`, string(recent)).Scan(&waiting); err != nil {
			time.Sleep(50 * time.Millisecond) // the database may be away
			continue
		}
		for ; waiting < matrixBacklog; waiting++ {
			if !c.startAndSignal(ctx, fmt.Sprintf("run-%06d", n)) {
				return
			}
			n++
		}
		time.Sleep(20 * time.Millisecond) // topping up the backlog
	}
}

// startAndSignal starts run id and sends its signal (it waits in the
// mailbox); false when ctx ended before the start.
func (c *cell) startAndSignal(ctx context.Context, id string) bool {
	if !c.retry(ctx, "start "+id, func() error { return durable.Start(context.Background(), c.admin, c.order, id, "book") }) {
		return false
	}
	c.mu.Lock()
	c.started = append(c.started, id)
	c.mu.Unlock()
	c.retry(context.Background(), "signal "+id, func() error { return c.signal(id) })
	return true
}

func (c *cell) awaitDone(want int64, within time.Duration) {
	deadline := time.Now().Add(within)
	for count(c.t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`) < want && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // polling the done count
	}
}

// deadTuples is n_dead_tup of the runs and journal tables (the statistics
// lag up to a second behind).
func (c *cell) deadTuples() (runs, journal int64) {
	rows, err := c.d.QueryMaps(context.Background(),
		`SELECT relname, n_dead_tup FROM pg_stat_user_tables WHERE relname IN ('_sky_durable_runs', '_sky_durable_journal')`)
	if err != nil {
		c.t.Fatal(err)
	}
	for _, r := range rows {
		var n int64
		fmt.Sscan(r["n_dead_tup"], &n)
		if r["relname"] == "_sky_durable_runs" {
			runs = n
		} else {
			journal = n
		}
	}
	return runs, journal
}

// firstDoneAfter is how long after from the done count passed before.
func (c *cell) firstDoneAfter(before int64, from time.Time) time.Duration {
	deadline := from.Add(time.Minute)
	for time.Now().Before(deadline) {
		var n int64
		if err := c.d.QueryRow(context.Background(), `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`).Scan(&n); err == nil && n > before {
			return time.Since(from)
		}
		time.Sleep(20 * time.Millisecond) // polling the done count
	}
	c.t.Errorf("no run was done within a minute after the fault (%d done before it)", before)
	return time.Since(from)
}

// atHalf waits until half the window passed; false when it ended first.
func atHalf(ctx context.Context, c *cell) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(c.window / 2):
		return true
	}
}

// strikeRestart restarts PostgreSQL (-m immediate) halfway through the window.
func strikeRestart(ctx context.Context, c *cell) func() {
	if atHalf(ctx, c) {
		c.recovery = c.restartDatabase(c.srv)
	}
	return nil
}

// strikeTerminate ends every worker connection (pg_terminate_backend)
// halfway through the window.
func strikeTerminate(ctx context.Context, c *cell) func() {
	if !atHalf(ctx, c) {
		return nil
	}
	before := count(c.t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`)
	ended := count(c.t, c.d, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'skychaos-worker'`)
	c.note = fmt.Sprintf("%d connections ended", ended)
	c.recovery = c.firstDoneAfter(before, time.Now())
	return nil
}

// strikeHorizon opens a REPEATABLE READ transaction that holds the xmin
// horizon from the window's start until after the workers stopped.
func strikeHorizon(ctx context.Context, c *cell) func() {
	u := strings.Replace(c.url, "application_name=skychaos-worker", "application_name=skychaos-horizon", 1)
	holder := exec.Command("psql", "-X", "-q", u, "-c",
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM _sky_durable_runs; SELECT pg_sleep(3600); COMMIT")
	if err := holder.Start(); err != nil {
		c.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for count(c.t, c.d, `SELECT count(*) FROM pg_stat_activity WHERE application_name = 'skychaos-horizon' AND backend_xmin IS NOT NULL`) == 0 {
		if time.Now().After(deadline) {
			c.t.Fatal("the horizon-holding transaction did not start within 30 s")
		}
		time.Sleep(20 * time.Millisecond) // awaiting the holder's snapshot
	}
	c.note = fmt.Sprintf("horizon held %v", c.window)
	return func() {
		count(c.t, c.d, `SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity WHERE application_name = 'skychaos-horizon'`)
		_ = holder.Wait()
	}
}

// strikeBurst starts scale.burst runs at once (16 starters) a third into
// the window; the recovery is how long after the burst was in the last of
// its runs was done.
func strikeBurst(ctx context.Context, c *cell) func() {
	in, ok := c.burst(ctx, func(id string) { c.startAndSignal(context.Background(), id) })
	if !ok {
		return nil
	}
	return func() {
		deadline := time.Now().Add(10 * time.Minute)
		for count(c.t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE id LIKE 'burst-%' AND status = 'done'`) < int64(c.scale.burst) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond) // polling the burst's done count
		}
		c.recovery = time.Since(in)
	}
}

// strikeBurstElsewhere sends the burst of strikeBurst, at the same time,
// to another database of the server that no worker reads: event burst's
// yardstick, the burst's cost to the machine without its runs to take in.
func strikeBurstElsewhere(ctx context.Context, c *cell) func() {
	name := c.dbName + "_elsewhere"
	admin := openURL(c.t, c.base+"postgres?sslmode=disable")
	if _, err := admin.Exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		c.t.Fatal(err)
	}
	d := openURL(c.t, c.base+name+"?sslmode=disable&connect_timeout=2")
	e := durable.New(d, durable.Options{WorkerID: "chaos-elsewhere", Keys: chaosKeys})
	if err := e.Setup(context.Background()); err != nil {
		c.t.Fatal(err)
	}
	c.burst(ctx, func(id string) {
		c.retry(context.Background(), "start "+id, func() error { return durable.Start(context.Background(), e, c.order, id, "book") })
		c.retry(context.Background(), "signal "+id, func() error { return e.Signal(context.Background(), id, "paid", `"card"`) })
	})
	return func() {
		d.Close()
		if _, err := admin.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			c.t.Error(err)
		}
		admin.Close()
	}
}

// burst waits a third of the window, then sends scale.burst runs (ids
// burst-000001...) to send with 16 starters; it returns when they were all
// in (false when the window ended first) and notes how long they took.
func (c *cell) burst(ctx context.Context, send func(id string)) (in time.Time, ok bool) {
	select {
	case <-ctx.Done():
		return time.Time{}, false
	case <-time.After(c.window / 3):
	}
	began := time.Now()
	var next atomic.Int64
	var starters sync.WaitGroup
	for range 16 {
		starters.Add(1)
		go func() {
			defer starters.Done()
			for n := next.Add(1); n <= int64(c.scale.burst); n = next.Add(1) {
				send(fmt.Sprintf("burst-%06d", n))
			}
		}()
	}
	starters.Wait()
	in = time.Now()
	c.note = fmt.Sprintf("%d starts in %v", c.scale.burst, in.Sub(began).Round(time.Millisecond))
	return in, true
}

// strikeKills SIGKILLs a random worker every 0.5 to 2 s and starts another;
// the recovery is the longest wait of a killed worker's runs.
func strikeKills(ctx context.Context, c *cell) func() {
	kills := 0
	for {
		select {
		case <-ctx.Done():
			c.note = fmt.Sprintf("%d SIGKILLs", kills)
			return nil
		case <-time.After(500*time.Millisecond + time.Duration(c.rng.Int64N(int64(1500*time.Millisecond)))):
		}
		i := c.rng.IntN(len(c.workers))
		held := c.heldBy(c.workers[i].cmd.Process.Pid)
		killed := time.Now()
		if err := c.workers[i].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			c.t.Fatal(err)
		}
		<-c.workers[i].done
		kills++
		c.workers[i] = c.worker()
		for _, w := range c.awaitPickedUp(held, killed) {
			c.recovery = max(c.recovery, w)
		}
	}
}

// printMatrix prints one line per cell.
func printMatrix(rs []cellResult, faults []matrixFault) {
	rate := func(r cellResult) float64 { return float64(r.inWindow) / r.window.Seconds() }
	rates := map[string]float64{}
	for _, r := range rs {
		rates[r.name] = rate(r)
	}
	fmt.Fprintf(os.Stdout, "fault matrix (%d workers × concurrency %d, stop timeout %v, backlog %d):\n", matrixWorkers, matrixConcurrency, matrixStopTimeout, matrixBacklog)
	fmt.Fprintf(os.Stdout, "  %-22s %7s %9s %8s %5s %5s %10s %9s %12s %8s  %s\n",
		"cell", "window", "done/s", "vs base", "lost", "dup", "recovery", "dead runs", "dead journal", "stop max", "note")
	for i, r := range rs {
		rec := "-"
		if faults[i].recovers {
			rec = r.recovery.Round(time.Millisecond).String()
		}
		stop := r.slowestStop.Round(time.Millisecond).String()
		if r.hung > 0 {
			stop = fmt.Sprintf("HUNG(%d)", r.hung)
		}
		note := r.note
		against := cmp.Or(faults[i].against, "baseline")
		if against != "baseline" {
			note += fmt.Sprintf(" (against %s; %.0f%% of the baseline)", against, 100*rate(r)/rates["baseline"])
		}
		fmt.Fprintf(os.Stdout, "  %-22s %7v %9.1f %7.0f%% %5d %5d %10s %9d %12d %8s  %s\n",
			r.name, r.window, rate(r), 100*rate(r)/rates[against], r.lost, r.doubled, rec, r.deadRuns, r.deadJournal, stop, note)
	}
	fmt.Fprintln(os.Stdout, "  vs base: the cell's rate against its yardstick's, the baseline unless its note names another")
	fmt.Fprintln(os.Stdout, "  recovery: postgres restart and pg_terminate_backend, the first run done after; event burst, its last run done after it was in; repeated SIGKILL, the longest a killed worker's runs waited")
}
