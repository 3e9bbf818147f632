package worker_test

// The chaos run: three (-chaos-workers) examples/worker processes (real `sky run`) on a
// private crash-safe PostgreSQL, SIGKILLed at random and restarted, while
// runs of Jobs.order are started and signalled (half the signals before
// the run waits for them), and the database itself is restarted with
// pg_ctl restart -m immediate halfway through. At the end every run must be
// done and each transactional step's row must exist exactly once; it prints
// started / done / lost / duplicated effects / re-executed plain steps and
// how long a killed worker's runs waited to be picked up again (p50, p99).
//
// make test runs it for 15 s (the fault matrix, chaos_matrix_test.go, adds
// its own restart and SIGKILL cells); make chaos for 3 minutes:
//
//	go test ./examples/worker -run '^TestChaos$' -v -args -chaos 3m -chaos-workers 3

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

var (
	chaosFor     = flag.Duration("chaos", 15*time.Second, "how long TestChaos starts runs and kills workers")
	chaosWorkers = flag.Int("chaos-workers", 3, "how many sky worker processes TestChaos keeps running")
)

// chaosLease is the workers' lease (SKY_DURABLE_LEASE): a killed worker's
// runs are claimable again this long after its last renewal.
const chaosLease = 2 * time.Second

// chaosKeys is the keyring the chaos runs encrypt every payload with
// (SKY_DURABLE_KEYS): the workers and the admin engine share it.
const chaosKeys = "chaos1:Y2hhb3MtdGVzdC1rZXktMzItYnl0ZXMtbG9uZyEhISE="

// chaos is the state of one chaos run.
type chaos struct {
	t     *testing.T
	url   string
	d     *db.DB
	admin *durable.Engine
	order durable.Def[string, string]
	rng   *rand.Rand

	// argv is the worker's command line (sky's arguments); nil is `sky run`.
	argv []string

	mu      sync.Mutex
	started []string
	procs   []*process // every worker process ever started
}

func TestChaos(t *testing.T) {
	t.Parallel() // with TestChaosMatrix (make chaos runs them one after the other: -parallel 1)
	srv := dbtest.StartCrashSafe(t)
	c := &chaos{t: t, rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7)),
		url: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", srv.Port())}
	c.d = openURL(t, c.url)
	c.admin = durable.New(c.d, durable.Options{WorkerID: "chaos-admin", Keys: chaosKeys})
	ctx := context.Background()
	if err := c.admin.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.d.Exec(ctx, `CREATE TABLE chaos_effects (run_id TEXT NOT NULL, step TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	// Only started and signalled from here: the sky workers run the body.
	c.order = durable.Register("order", codec.String, codec.String, func(*durable.Ctx, string) task.Task[string] {
		return task.Fail[string](fmt.Errorf("the chaos test's admin engine never runs order"))
	})

	if *chaosWorkers < 1 {
		t.Fatalf("-chaos-workers %d: want at least 1", *chaosWorkers)
	}
	workers := make([]*process, *chaosWorkers)
	for i := range workers {
		workers[i] = c.worker()
	}
	startCtx, stopStarting := context.WithCancel(ctx)
	var starting sync.WaitGroup
	starting.Add(1)
	go func() {
		defer starting.Done()
		c.startRuns(startCtx)
	}()

	var recoveries []time.Duration
	var dbRecovery time.Duration
	kills := 0
	end := time.Now().Add(*chaosFor)
	restartAt := time.Now().Add(*chaosFor / 2)
	for time.Now().Before(end) {
		// The chaos schedule: the next kill comes 0.5 to 2 s after the last.
		time.Sleep(500*time.Millisecond + time.Duration(c.rng.Int64N(int64(1500*time.Millisecond))))
		if !restartAt.IsZero() && time.Now().After(restartAt) {
			restartAt = time.Time{}
			dbRecovery = c.restartDatabase(srv)
			continue
		}
		i := c.rng.IntN(len(workers))
		held := c.heldBy(workers[i].cmd.Process.Pid)
		killed := time.Now()
		if err := workers[i].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-workers[i].done
		kills++
		workers[i] = c.worker()
		recoveries = append(recoveries, c.awaitPickedUp(held, killed)...)
	}
	stopStarting()
	starting.Wait()

	c.mu.Lock()
	runs := len(c.started)
	c.mu.Unlock()
	// Workers keep running (no more kills) until every run is done.
	awaitCount(t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`, int64(runs), 3*time.Minute)
	for _, w := range workers {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range workers {
		w.wait(t, 30*time.Second)
	}
	c.report(runs, kills, recoveries, dbRecovery)
}

// worker starts one examples/worker process.
func (c *chaos) worker() *process {
	env := []string{"DATABASE_URL=" + c.url, "SKY_DURABLE_LEASE=" + chaosLease.String(), durable.KeysEnv + "=" + chaosKeys}
	var p *process
	if c.argv == nil {
		p = startSky(c.t, "", env)
	} else {
		p = startSkyCommand(c.t, "", env, c.argv...)
	}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// startRuns starts two runs every 100ms until ctx ends; half of them get
// their signal at once (it waits in the mailbox), the rest 0.5 to 2 s
// later (it wakes the waiting run).
func (c *chaos) startRuns(ctx context.Context) {
	var late sync.WaitGroup
	defer late.Wait()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for range 2 {
			id := fmt.Sprintf("chaos-%05d", n)
			n++
			if !c.retry(ctx, "start "+id, func() error { return durable.Start(context.Background(), c.admin, c.order, id, "book") }) {
				return
			}
			c.mu.Lock()
			c.started = append(c.started, id)
			early := c.rng.IntN(2) == 0
			delay := 500*time.Millisecond + time.Duration(c.rng.Int64N(int64(1500*time.Millisecond)))
			c.mu.Unlock()
			if early {
				c.retry(context.Background(), "signal "+id, func() error { return c.signal(id) })
				continue
			}
			late.Add(1)
			time.AfterFunc(delay, func() {
				defer late.Done()
				c.retry(context.Background(), "signal "+id, func() error { return c.signal(id) })
			})
		}
	}
}

func (c *chaos) signal(id string) error {
	return c.admin.Signal(context.Background(), id, "paid", `"card"`)
}

// retry calls fn until it succeeds (the database may be restarting), for
// up to a minute; false when ctx ended first.
func (c *chaos) retry(ctx context.Context, what string, fn func() error) bool {
	deadline := time.Now().Add(time.Minute)
	for {
		err := fn()
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if time.Now().After(deadline) {
			c.t.Errorf("%s: %v", what, err)
			return false
		}
		time.Sleep(50 * time.Millisecond) // retry interval while the database is away
	}
}

// heldBy lists the runs whose lease the worker process pid holds.
func (c *chaos) heldBy(pid int) []string {
	rows, err := c.d.QueryMaps(context.Background(),
		`SELECT id FROM _sky_durable_runs WHERE status = 'running' AND claimed_at IS NOT NULL AND claimed_by LIKE ?`,
		"%-"+strconv.Itoa(pid)+"-%")
	if err != nil {
		c.t.Fatalf("runs held by %d: %v", pid, err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r["id"]
	}
	return ids
}

// awaitPickedUp waits until each of the runs the killed worker held is
// claimed by another worker or no longer running, and returns how long
// each took after the kill.
func (c *chaos) awaitPickedUp(held []string, killed time.Time) []time.Duration {
	var waits []time.Duration
	for _, id := range held {
		deadline := killed.Add(time.Minute)
		for {
			var status, by string
			err := c.d.QueryRow(context.Background(), `SELECT status, claimed_by FROM _sky_durable_runs WHERE id = ?`, id).Scan(&status, &by)
			if err != nil {
				c.t.Fatalf("run %s: %v", id, err)
			}
			if status != "running" || !heldByDeadProcess(by) {
				waits = append(waits, time.Since(killed))
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("run %s: still held by the killed worker %s a minute after the kill", id, by)
			}
			time.Sleep(20 * time.Millisecond) // polling the run's row
		}
	}
	return waits
}

// heldByDeadProcess reports whether claimed_by (host-pid-suffix) names a
// process that no longer runs.
func heldByDeadProcess(claimedBy string) bool {
	parts := strings.Split(claimedBy, "-")
	if len(parts) < 3 {
		return false
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil {
		return false
	}
	return syscall.Kill(pid, 0) != nil
}

// restartDatabase restarts the server as a crash would (-m immediate) and
// returns how long after it was back the first run was done.
func (c *chaos) restartDatabase(srv *dbtest.Server) time.Duration {
	c.t.Helper()
	before := count(c.t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`)
	if err := srv.Restart(context.Background(), "immediate"); err != nil {
		c.t.Fatal(err)
	}
	up := time.Now()
	deadline := up.Add(time.Minute)
	for {
		var n int64
		err := c.d.QueryRow(context.Background(), `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`).Scan(&n)
		if err == nil && n > before {
			return time.Since(up)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no run was done within a minute of the database restart (%d done before it; last error %v)", before, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the done count
	}
}

var notifiedLine = regexp.MustCompile(`(?m)^notified (\S+)$`)

// report checks the end state and prints the figures.
func (c *chaos) report(runs, kills int, recoveries []time.Duration, dbRecovery time.Duration) {
	t := c.t
	done := count(t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`)
	doubled := count(t, c.d, `SELECT count(*) FROM (SELECT run_id, step FROM chaos_effects GROUP BY run_id, step HAVING count(*) > 1) d`)
	rows := count(t, c.d, `SELECT count(*) FROM chaos_effects`)
	// Every payload is sealed; read with the key, every output is right.
	plain := count(t, c.d, `SELECT count(*) FROM _sky_durable_runs WHERE input NOT LIKE 'skyenc1:%' OR output NOT LIKE 'skyenc1:%'`)
	wrong := int64(0)
	err := c.admin.EachRun(context.Background(), []durable.Status{durable.StatusDone}, "", func(r durable.Run, _ []durable.JournalEntry) error {
		if r.Output != `"book paid by card"` {
			wrong++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	notified := map[string]int{}
	for _, p := range c.procs {
		out, _ := p.output()
		for _, m := range notifiedLine.FindAllStringSubmatch(out, -1) {
			notified[m[1]]++
		}
	}
	reexecuted := 0
	for _, n := range notified {
		reexecuted += n - 1
	}
	sort.Slice(recoveries, func(i, j int) bool { return recoveries[i] < recoveries[j] })
	pct := func(p float64) time.Duration {
		if len(recoveries) == 0 {
			return 0
		}
		return recoveries[min(len(recoveries)-1, int(p*float64(len(recoveries))))].Round(time.Millisecond)
	}
	fmt.Fprintf(os.Stdout, "chaos %v, %d workers: %d SIGKILLed (%d held a run), 1 database restart (-m immediate)\n"+
		"  runs started %d, done %d, lost %d, transactional effects duplicated %d, plain steps re-executed %d\n"+
		"  a killed worker's runs picked up again after: p50 %v, p99 %v (%d runs; lease %v)\n"+
		"  first run done after the database was back: %v\n",
		*chaosFor, *chaosWorkers, kills, len(recoveries), runs, done, int64(runs)-done, doubled, reexecuted,
		pct(0.50), pct(0.99), len(recoveries), chaosLease, dbRecovery.Round(time.Millisecond))
	if done != int64(runs) {
		t.Errorf("%d of %d runs done: %d lost", done, runs, int64(runs)-done)
	}
	if doubled != 0 || rows != int64(2*runs) {
		t.Errorf("transactional effects: %d rows for %d runs (want exactly 2 each), %d duplicated", rows, runs, doubled)
	}
	if wrong != 0 {
		t.Errorf("%d runs ended with another output than \"book paid by card\"", wrong)
	}
	if plain != 0 {
		t.Errorf("%d runs have an input or output not encrypted (SKY_DURABLE_KEYS is set for every worker)", plain)
	}
	if len(notified) != runs {
		t.Errorf("the plain step printed for %d runs, want %d", len(notified), runs)
	}
	if kills == 0 {
		t.Errorf("no worker was killed: the run tested nothing")
	}
}
