package durable_test

// Production topologies on PostgreSQL: workers through PgBouncer in
// transaction pooling mode (hints on a direct connection), a failover to a
// promoted streaming replica, and database restarts under load. Each test
// runs the same load: runs with a transactional step, a durable sleep, a
// plain step, a signal (half of them sent before the workers start, the rest
// while they run) and a second transactional step; at the end every run is
// done, each transactional step's row exists exactly once, and the plain
// step's re-executions (at-least-once) are counted and printed.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// topologyLease is the workers' lease: a run whose worker lost its
// connection is claimable again this long after its last renewal.
const topologyLease = 2 * time.Second

// topologyLoad is one database under the topology load.
type topologyLoad struct {
	t     *testing.T
	ids   []string
	admin *durable.Engine
	d     *db.DB

	plainMu sync.Mutex
	plain   map[string]int // plain step executions per run

	progressMu sync.Mutex
	progress   []time.Time // when a worker's poll did work without error

	stop    context.CancelFunc
	workers sync.WaitGroup
}

// workflow charges (a row in topo_effects, in the step's
// transaction), sleeps 20ms, notes a plain execution, awaits "go", then
// ships (another row, transactional).
func (l *topologyLoad) workflow() durable.Def[string, string] {
	row := func(c *durable.Ctx, step string) task.Task[string] {
		return durable.Step(c, codec.String, step, task.From(func(ctx context.Context) (string, error) {
			_, err := c.DB().Exec(ctx, `INSERT INTO topo_effects (run_id, step) VALUES (?, ?)`, c.RunID(), step)
			return step, err
		}))
	}
	plain := func(c *durable.Ctx) task.Task[string] {
		return durable.Step(c, codec.String, "note", task.From(func(context.Context) (string, error) {
			l.plainMu.Lock()
			l.plain[c.RunID()]++
			l.plainMu.Unlock()
			return "noted", nil
		}))
	}
	// Attempts are not the point here: an outage must not kill a run.
	policy := durable.RetryPolicy{MaxAttempts: 1000, InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second}
	return durable.RegisterWith(policy, "topology.order", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return task.AndThen(row(c, "charge"), func(string) task.Task[string] {
			return task.AndThen(durable.Sleep(c, 20), func(struct{}) task.Task[string] {
				return task.AndThen(plain(c), func(string) task.Task[string] {
					return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(p string) task.Task[string] {
						return task.Map(row(c, "ship"), func(string) string { return in + "|" + p })
					})
				})
			})
		})
	})
}

// newTopologyLoad sets up the durable tables on adminURL, starts runs and
// sends the first half of the signals (early: before their run waits).
func newTopologyLoad(t *testing.T, adminURL string, runs int) *topologyLoad {
	t.Helper()
	ctx := context.Background()
	l := &topologyLoad{t: t, plain: map[string]int{}, d: openPG(t, adminURL, 4)}
	l.admin = durable.New(l.d, durable.Options{WorkerID: "admin"})
	if err := l.admin.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := l.d.Exec(ctx, `CREATE TABLE topo_effects (run_id TEXT NOT NULL, step TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	def := l.workflow()
	for i := 0; i < runs; i++ {
		id := fmt.Sprintf("order-%04d", i)
		l.ids = append(l.ids, id)
		if err := durable.Start(ctx, l.admin, def, id, id); err != nil {
			t.Fatalf("start %s: %v", id, err)
		}
	}
	for _, id := range l.ids[:runs/2] {
		l.signal(ctx, id)
	}
	return l
}

// signal sends "go" to id, retrying while the database is away.
func (l *topologyLoad) signal(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		err := l.admin.Signal(ctx, id, "go", `"go"`)
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			l.t.Errorf("signal %s: %v", id, err)
			return
		case <-time.After(50 * time.Millisecond): // retry interval while the database is down
		}
	}
}

// sendLateSignals sends the second half of the signals in the background.
func (l *topologyLoad) sendLateSignals() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, id := range l.ids[len(l.ids)/2:] {
			l.signal(context.Background(), id)
		}
	}()
	return done
}

// startWorkers starts n workers, each with its own pool of 3 on url (opened
// with opts) and its own Engine, polling until the test ends.
func (l *topologyLoad) startWorkers(url string, opts db.Options, n int) {
	l.t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	l.stop = stop
	l.t.Cleanup(l.stopWorkers)
	for w := 0; w < n; w++ {
		d, err := db.OpenWith(ctx, "postgres", withParam(url, "pool_max_conns", "3"), opts)
		if err != nil {
			l.t.Fatalf("worker pool: %v", err)
		}
		l.t.Cleanup(func() { d.Close() })
		e := durable.New(d, durable.Options{WorkerID: fmt.Sprintf("w%d", w), Lease: topologyLease})
		defs := []durable.Workflow{l.workflow().Erase()}
		l.workers.Add(1)
		go func() {
			defer l.workers.Done()
			for ctx.Err() == nil {
				worked, err := e.Poll(ctx, defs)
				if worked && err == nil {
					l.progressMu.Lock()
					l.progress = append(l.progress, time.Now())
					l.progressMu.Unlock()
				}
				if !worked || err != nil { // idle, or the database is away
					select {
					case <-ctx.Done():
					case <-time.After(5 * time.Millisecond):
					}
				}
			}
		}()
	}
}

func (l *topologyLoad) stopWorkers() {
	if l.stop != nil {
		l.stop()
		l.workers.Wait()
	}
}

// firstProgressAfter is when a worker first did work after t0 (zero: not
// yet).
func (l *topologyLoad) firstProgressAfter(t0 time.Time) time.Time {
	l.progressMu.Lock()
	defer l.progressMu.Unlock()
	i := sort.Search(len(l.progress), func(i int) bool { return l.progress[i].After(t0) })
	if i == len(l.progress) {
		return time.Time{}
	}
	return l.progress[i]
}

// awaitRecovery waits until a worker does work after t0 and returns how
// long after t0 that was.
func (l *topologyLoad) awaitRecovery(t0 time.Time) time.Duration {
	l.t.Helper()
	var first time.Time
	awaitCondition(l.t, 2*time.Minute, "a worker does work again", func() (bool, string) {
		first = l.firstProgressAfter(t0)
		return !first.IsZero(), "no poll has done work since " + t0.Format(time.StampMilli)
	})
	return first.Sub(t0)
}

// doneCount counts the runs done, through the admin pool (0 while the
// database is away).
func (l *topologyLoad) doneCount() int64 {
	var n int64
	err := l.d.QueryRow(context.Background(), `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done'`).Scan(&n)
	if err != nil {
		return 0
	}
	return n
}

// midRun returns how many runs are done, failing the test when all are
// (the event it is about to cause would come too late to test anything).
func (l *topologyLoad) midRun() int64 {
	l.t.Helper()
	n := l.doneCount()
	if n >= int64(len(l.ids)) {
		l.t.Fatalf("all %d runs were done before the event: the test tests nothing; give it more runs", n)
	}
	return n
}

// awaitDone waits until at least n runs are done.
func (l *topologyLoad) awaitDone(n int64) {
	l.t.Helper()
	awaitCondition(l.t, 3*time.Minute, fmt.Sprintf("%d runs done", n), func() (bool, string) {
		got := l.doneCount()
		return got >= n, fmt.Sprintf("%d done", got)
	})
}

// check waits for every run to be done, then asserts each transactional
// row exists exactly once per run, and reports the plain step's
// re-executions.
func (l *topologyLoad) check() {
	l.t.Helper()
	l.awaitDone(int64(len(l.ids)))
	l.stopWorkers()
	ctx := context.Background()
	rows, err := l.d.QueryMaps(ctx, `SELECT run_id, step, COUNT(*) AS n FROM topo_effects GROUP BY run_id, step HAVING COUNT(*) <> 1`)
	if err != nil {
		l.t.Fatal(err)
	}
	for _, r := range rows {
		l.t.Errorf("run %s: step %s's row exists %s times, want exactly once", r["run_id"], r["step"], r["n"])
	}
	if n := count(l.t, l.d, `SELECT COUNT(*) FROM topo_effects`); n != int64(2*len(l.ids)) {
		l.t.Errorf("%d transactional rows, want %d (2 per run)", n, 2*len(l.ids))
	}
	for _, id := range l.ids {
		run, _, err := l.admin.Describe(ctx, id)
		if err != nil {
			l.t.Fatal(err)
		}
		if run.Status != durable.StatusDone || run.Output != `"`+id+`|go"` {
			l.t.Errorf("run %s: %s %s, want done %q", id, run.Status, run.Output, id+"|go")
		}
	}
	l.plainMu.Lock()
	defer l.plainMu.Unlock()
	reexecuted := 0
	for _, id := range l.ids {
		if l.plain[id] == 0 {
			l.t.Errorf("run %s: the plain step never ran", id)
		}
		reexecuted += max(l.plain[id]-1, 0)
	}
	fmt.Printf("    %s: %d runs done, 0 lost, 0 transactional effects doubled, %d plain steps re-executed\n",
		l.t.Name(), len(l.ids), reexecuted)
}

// TestWorkersThroughPgBouncer runs the load with 3 workers whose pools go
// through PgBouncer in transaction pooling mode (db.PoolerTransaction) and
// a hint listener on a direct connection (SKY_DURABLE_LISTEN_URL's role),
// which must deliver hints of the runs' wake-ups.
func TestWorkersThroughPgBouncer(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	direct := dbtest.URL(t, "bouncer")
	l := newTopologyLoad(t, direct, 120)
	var hints atomic.Int64
	ctx, stopListening := context.WithCancel(context.Background())
	listened := make(chan error, 1)
	listening := make(chan struct{})
	var once sync.Once
	go func() {
		listened <- durable.ListenForHints(ctx, l.d, direct, func(id string) {
			if id == "" { // LISTEN is in place
				once.Do(func() { close(listening) })
				return
			}
			hints.Add(1)
		}, func(string) {})
	}()
	select {
	case <-listening:
	case err := <-listened:
		t.Fatalf("listener: %v", err)
	}
	l.startWorkers(bouncer.Route(t, direct), db.Options{Pooler: db.PoolerTransaction}, 3)
	<-l.sendLateSignals()
	l.check()
	stopListening()
	if err := <-listened; err != nil {
		t.Fatalf("listener: %v", err)
	}
	if hints.Load() == 0 {
		t.Errorf("the direct listener received no hint while runs slept and were signalled through the pooler")
	}
}

// TestWorkersSurviveFailoverToAPromotedReplica runs the load on a primary
// streaming synchronously to a replica; once a third of the runs are done
// the primary crashes (pg_ctl stop -m immediate) and the replica is
// promoted. The workers' multi-host URL (target_session_attrs=read-write)
// finds the new primary; nothing is lost or doubled.
func TestWorkersSurviveFailoverToAPromotedReplica(t *testing.T) {
	t.Parallel()
	primary := dbtest.StartPrimary(t)
	replica := primary.StartReplica(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.Port(), replica.Port())
	const runs = 150
	l := newTopologyLoad(t, url, runs)
	l.startWorkers(url, db.Options{}, 3)
	signalled := l.sendLateSignals()
	l.awaitDone(runs / 3)
	ctx := context.Background()
	doneBefore := l.midRun()
	crashed := time.Now()
	if err := primary.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	if err := replica.Promote(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := time.Now()
	recovery := l.awaitRecovery(promoted)
	fmt.Printf("    failover with %d of %d runs done: promotion took %v; workers did work again %v after it (%v after the crash)\n",
		doneBefore, runs, promoted.Sub(crashed).Round(time.Millisecond), recovery.Round(time.Millisecond), (promoted.Sub(crashed) + recovery).Round(time.Millisecond))
	<-signalled
	l.check()
	if err := l.d.QueryRow(ctx, `SELECT 1 WHERE NOT pg_is_in_recovery()`).Scan(new(int64)); err != nil {
		t.Fatalf("the admin pool is not on the promoted primary: %v", err)
	}
}

// TestWorkersSurviveDatabaseRestart restarts a crash-safe server under the
// load, with pg_ctl restart -m fast and -m immediate (a crash and WAL
// recovery), and prints how long the workers took to do work again.
func TestWorkersSurviveDatabaseRestart(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"fast", "immediate"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel() // a server of its own
			srv := dbtest.StartCrashSafe(t)
			url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", srv.Port())
			const runs = 150
			l := newTopologyLoad(t, url, runs)
			l.startWorkers(url, db.Options{}, 3)
			signalled := l.sendLateSignals()
			l.awaitDone(runs / 3)
			doneBefore := l.midRun()
			began := time.Now()
			if err := srv.Restart(context.Background(), mode); err != nil {
				t.Fatal(err)
			}
			up := time.Now()
			recovery := l.awaitRecovery(up)
			fmt.Printf("    restart -m %s with %d of %d runs done: the server was back after %v; workers did work again %v after that\n",
				mode, doneBefore, runs, up.Sub(began).Round(time.Millisecond), recovery.Round(time.Millisecond))
			<-signalled
			l.check()
		})
	}
}

// TestHintsResumeAfterADatabaseRestart: the hint listener reconnects after
// pg_ctl restart -m fast (the server's identity changed: a new start time)
// and delivers the hint of a run started afterwards.
func TestHintsResumeAfterADatabaseRestart(t *testing.T) {
	t.Parallel()
	srv := dbtest.StartCrashSafe(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=2", srv.Port())
	d := openPG(t, url, 2)
	e := durable.New(d, durable.Options{WorkerID: "admin"})
	ctx, stop := context.WithCancel(context.Background())
	var listenErr error
	stopped := make(chan struct{})
	hints := make(chan string, 16)
	go func() {
		defer close(stopped)
		listenErr = durable.ListenForHints(ctx, d, url, func(id string) { hints <- id }, func(string) {})
	}()
	t.Cleanup(func() {
		stop()
		<-stopped
	})
	awaitHint := func(want string) {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case id := <-hints:
				if id == want {
					return
				}
			case <-stopped:
				t.Fatalf("the listener stopped: %v", listenErr)
			case <-timeout:
				t.Fatalf("no hint %q within a minute", want)
			}
		}
	}
	awaitHint("") // LISTEN in place
	if err := srv.Restart(context.Background(), "fast"); err != nil {
		t.Fatal(err)
	}
	awaitHint("") // LISTEN in place again, on the restarted server
	def := flowWorkflow("admin")
	if err := durable.Start(context.Background(), e, def, "after-restart", "x"); err != nil {
		t.Fatal(err)
	}
	awaitHint("after-restart")
	stop()
	<-stopped
	if listenErr != nil {
		t.Fatalf("listener: %v", listenErr)
	}
}

// TestAwaitResultThroughPgBouncerPolls: through a transaction pooler LISTEN
// cannot work (the pooler hands the session on after each statement), so
// DB.Listener refuses with a hint and AwaitResult polls instead; it still sees
// the run finish.
func TestAwaitResultThroughPgBouncerPolls(t *testing.T) {
	t.Parallel()
	bouncer := dbtest.StartPgBouncer(t)
	direct := dbtest.URL(t, "await")
	ctx := context.Background()
	d, err := db.OpenWith(ctx, "postgres", bouncer.Route(t, direct), db.Options{Pooler: db.PoolerTransaction})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if d.CanListen() {
		t.Fatal("CanListen is true through a transaction pooler")
	}
	if _, err := d.Listener(""); err == nil {
		t.Fatal("Listener through a transaction pooler succeeded; want a refusal naming SKY_DURABLE_LISTEN_URL")
	} else if !strings.Contains(err.Error(), "SKY_DURABLE_LISTEN_URL") {
		t.Fatalf("Listener through a transaction pooler: %v; want a hint naming SKY_DURABLE_LISTEN_URL", err)
	}
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	echo := durable.Register("echo", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "shout", task.Succeed(in+"!"))
	})
	if err := durable.Start(ctx, e, echo, "r1", "hi"); err != nil {
		t.Fatal(err)
	}
	worked := make(chan error, 1)
	go func() {
		_, err := e.Poll(ctx, []durable.Workflow{echo.Erase()})
		worked <- err
	}()
	out, err := durable.AwaitResult(ctx, e, echo, "r1", time.Minute)
	if err != nil || out == nil || *out != "hi!" {
		t.Fatalf("AwaitResult through the pooler = %v, %v; want \"hi!\"", out, err)
	}
	if err := <-worked; err != nil {
		t.Fatalf("poll: %v", err)
	}
}
