package durable

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// awaitApp is the application_name of TestThousandAwaitsShareOneListener's
// pool; its listener session is "<awaitApp> listener".
const awaitApp = "sky_await_test"

// openAwaitDB opens a fresh database of driver; on PostgreSQL with a pool
// of 10 whose sessions are named awaitApp, so they can be counted.
func openAwaitDB(t *testing.T, driver string) (*db.DB, string) {
	t.Helper()
	url := dbtest.URL(t, driver)
	if driver == "postgres" {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + "pool_max_conns=10&application_name=" + awaitApp
	}
	d, err := db.Open(context.Background(), driver, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, url
}

// sessionsByApp counts the sessions on d's database by application_name.
func sessionsByApp(t *testing.T, d *db.DB) map[string]int64 {
	t.Helper()
	rows, err := d.QueryMaps(context.Background(), `SELECT application_name AS app, count(*) AS n FROM pg_stat_activity WHERE datname = current_database() GROUP BY application_name`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range rows {
		var n int64
		fmt.Sscan(r["n"], &n)
		got[r["app"]] = n
	}
	return got
}

// waitUntil polls cond until it holds (a minute at most).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestThousandAwaitsShareOneListener: 1,000 concurrent AwaitResult calls
// on distinct unfinished runs, plus a worker's hint watch, hold exactly one
// listening session beside a pool of 10 on PostgreSQL (pg_stat_activity);
// a listener session killed by the server (pg_terminate_backend) is
// reopened, and all 1,000 calls return their run's output once the runs,
// claimed and parked on a signal, are signalled and finished by the worker. On SQLite, where the listener is in-process, the same
// 1,000 calls return too.
func TestThousandAwaitsShareOneListener(t *testing.T) {
	t.Parallel()
	const n = 1000
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			d, url := openAwaitDB(t, driver)
			e := New(d, Options{})
			if err := e.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			echo := Register("echo", codec.String, codec.String, func(c *Ctx, in string) task.Task[string] {
				return task.Map(AwaitSignal(c, codec.String, "go"), func(s string) string { return in + s })
			})
			for i := range n {
				if err := Start(ctx, e, echo, fmt.Sprint("r", i), fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
			}
			l, err := d.Listener("")
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := AwaitResult(ctx, e, echo, fmt.Sprint("r", i), 5*time.Minute)
					if err == nil && (out == nil || *out != fmt.Sprint(i, "!")) {
						err = fmt.Errorf("run r%d: output %v, want %q", i, out, fmt.Sprint(i, "!"))
					}
					errs <- err
				}()
			}
			waitUntil(t, "1,000 watches", func() bool { return l.Stats().Subscribers == n })
			workCtx, stopWork := context.WithCancel(ctx)
			worked := make(chan error, 1)
			go func() {
				_, err := e.Work(workCtx, []Workflow{echo.Erase()}, WorkerOptions{Tick: 50 * time.Millisecond, Hints: HintSettings{URL: url}})
				worked <- err
			}()
			if driver == "postgres" {
				// The worker's hint watch joins the same session.
				waitUntil(t, "the worker's hint watch", func() bool { return l.Stats().Subscribers == n+1 })
				got := sessionsByApp(t, d)
				if got[awaitApp+" listener"] != 1 || got[awaitApp] < 1 || got[awaitApp] > 10 || len(got) != 2 {
					t.Errorf("sessions by application_name: %v; want exactly 1 %q and 1 to 10 %q (the pool), nothing else", got, awaitApp+" listener", awaitApp)
				}
				if s := l.Stats(); s.Sessions != 1 {
					t.Errorf("listener sessions opened: %d, want 1", s.Sessions)
				}
				var killed int64
				if err := d.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?) k`, awaitApp+" listener").Scan(&killed); err != nil || killed != 1 {
					t.Fatalf("terminated %d listener sessions (%v); want 1", killed, err)
				}
				waitUntil(t, "the listener's second session", func() bool { s := l.Stats(); return s.Sessions == 2 && s.Open })
			}
			// The runs wait for their signal; once it comes, the hints (or
			// the tick) wake the worker, which finishes them.
			for i := range n {
				if err := SignalValue(ctx, e, fmt.Sprint("r", i), "go", codec.String, "!"); err != nil {
					t.Fatal(err)
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			stopWork()
			if err := <-worked; err != nil {
				t.Fatal(err)
			}
			if s := l.Stats(); s.Subscribers != 0 {
				t.Errorf("%d watches left after every call returned and the worker stopped", s.Subscribers)
			}
		})
	}
}

// finishAfterRead is a store whose first ReadRun of run id finishes the
// run (cancels it) right after reading it: the finish falls between
// AwaitResult's read and its wait.
type finishAfterRead struct {
	store.Store
	id   string
	now  func() time.Time
	once sync.Once
}

func (s *finishAfterRead) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := s.Store.ReadRun(ctx, runID)
	if runID == s.id {
		s.once.Do(func() {
			if _, cerr := s.Store.CancelRun(ctx, runID, s.now()); cerr != nil {
				err = cerr
			}
		})
	}
	return r, err
}

// TestAwaitResultWatchesBeforeItReads: AwaitResult watches the run before
// it reads it, so a finish committed right after the read (and before the
// wait) is heard; were it to read first, the notice would be lost and the
// call would wait out its timeout (on PostgreSQL nothing polls; on SQLite
// the poll would find it anyway).
func TestAwaitResultWatchesBeforeItReads(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		e := New(d, Options{})
		if err := e.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		wf := Register("parked", codec.String, codec.String, func(c *Ctx, in string) task.Task[string] {
			return AwaitSignal(c, codec.String, "go")
		})
		if err := Start(ctx, e, wf, "r1", "x"); err != nil {
			t.Fatal(err)
		}
		e.store = &finishAfterRead{Store: e.store, id: "r1", now: e.now}
		// A lost notice would leave the call waiting: the context ends it
		// (with an error this test reports) long before its timeout.
		bounded, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := AwaitResult(bounded, e, wf, "r1", 10*time.Minute)
		wantErrContains(t, err, task.Unavailable, `"r1"`, "cancelled")
	})
}
