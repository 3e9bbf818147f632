package durable

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

func TestRetriesWithBackoff(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		policy := RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, Multiplier: 2, MaxBackoff: time.Minute, Jitter: -1}
		cnt := newCounter()
		flaky := RegisterWith(policy, "flaky", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "call", task.From(func(context.Context) (string, error) {
				if n := cnt.hit(in); n <= 2 || in == "never" {
					return "", task.Errorf(task.Network, "%s: try %d failed", in, n)
				}
				return "ok", nil
			}))
		})
		wf := flaky.Erase()

		t.Run("fails twice then succeeds after backoff", func(t *testing.T) {
			h.start(flaky, "twice", "twice")
			for i, backoff := range []time.Duration{time.Second, 2 * time.Second} {
				if !h.poll(h.e, wf) {
					t.Fatalf("attempt %d: no work", i+1)
				}
				r := h.wantStatus("twice", StatusFailed)
				if !r.WakeAt.Equal(h.clock.Now().Add(backoff)) || r.Attempts != i+1 {
					t.Fatalf("attempt %d: wake_at %v attempts %d, want now+%v and %d", i+1, r.WakeAt, r.Attempts, backoff, i+1)
				}
				wantContains(t, r.LastError, fmt.Sprintf("try %d failed", i+1))
				h.clock.Advance(backoff - time.Millisecond)
				if h.poll(h.e, wf) {
					t.Fatalf("attempt %d: claimed before its backoff elapsed", i+1)
				}
				h.clock.Advance(time.Millisecond)
			}
			h.drain(h.e, wf)
			if r := h.wantStatus("twice", StatusDone); r.Output != `"ok"` || r.LastError != "" || r.Attempts != 3 {
				t.Errorf("output %s last_error %q attempts %d", r.Output, r.LastError, r.Attempts)
			}
		})

		t.Run("always fails: dead after the limit with the last error", func(t *testing.T) {
			h.start(flaky, "doomed", "never")
			for i := 0; i < 10; i++ {
				h.drain(h.e, wf)
				h.clock.Advance(time.Minute)
			}
			r := h.wantStatus("doomed", StatusDead)
			wantContains(t, r.LastError, "Network", "never: try 3 failed")
			if cnt.get("never") != 3 {
				t.Errorf("the step ran %d times, want 3", cnt.get("never"))
			}
		})

		t.Run("a panicking body is a failure, not a crash of the worker", func(t *testing.T) {
			boom := RegisterWith(RetryPolicy{MaxAttempts: 1}, "boom", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.From(func(context.Context) (string, error) { panic("kaboom") })
			})
			h.start(boom, "boom", "x")
			h.drain(h.e, boom.Erase())
			wantContains(t, h.wantStatus("boom", StatusDead).LastError, "panicked", "kaboom")
		})
	})
}

// TestRoundTrips counts the statements the engine sends: an empty poll is
// one, a fresh plain step one (the last one shares the completion's), a
// replayed step none; a worker's first poll in each second (its clock's)
// probes for due runs, runs past their deadline and due schedule ticks in
// one statement ("probe"), and claims only when a run is due.
func TestRoundTrips(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("trips", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", task.Succeed("A")), func(string) task.Task[string] {
				return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
					return task.AndThen(Step(c, str, "b", task.Succeed("B")), func(string) task.Task[string] {
						return Step(c, str, "c", task.Succeed("C"))
					})
				})
			})
		})
		wf := def.Erase()
		h.takeOps()
		if h.poll(h.e, wf) {
			t.Fatal("work before start")
		}
		if diff := cmp.Diff([]string{"probe"}, h.takeOps()); diff != "" {
			t.Errorf("empty poll (-want +got):\n%s", diff)
		}
		h.start(def, "r1", "x")
		if diff := cmp.Diff([]string{"start"}, h.takeOps()); diff != "" {
			t.Errorf("start (-want +got):\n%s", diff)
		}
		h.poll(h.e, wf)
		// claim (with the journal), step a, sleep's timer, suspend.
		if diff := cmp.Diff([]string{"claim", "append", "append", "suspend"}, h.takeOps()); diff != "" {
			t.Errorf("first poll (-want +got):\n%s", diff)
		}
		h.clock.Advance(time.Second)
		h.poll(h.e, wf)
		// Replaying a and the sleep costs nothing; b one statement; c's row
		// is written with the completion: in its statement on PostgreSQL,
		// in its transaction on SQLite.
		want := []string{"probe", "claim", "append", "complete"}
		if driver == "sqlite" {
			want = []string{"probe", "claim", "append", "append", "complete"}
		}
		if diff := cmp.Diff(want, h.takeOps()); diff != "" {
			t.Errorf("resuming poll (-want +got):\n%s", diff)
		}
		h.wantStatus("r1", StatusDone)
	})
}

func TestSetupIsIdempotentAndConcurrent(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = h.engine(fmt.Sprint("setup-", i)).Setup(h.ctx)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("concurrent setup %d: %v", i, err)
			}
		}
		_, err := d.Exec(h.ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at) VALUES ('x', 'w', 'sleeping', '1', 0, 0, 0)`)
		if err == nil {
			t.Error("the status CHECK constraint accepted 'sleeping'")
		}
	})
}

// TestSetupMigratesTheSpecSchema creates the tables exactly as the spec
// lists them, with a run and a journal row, and checks Setup upgrades them in
// place and the run then resumes from its journal.
func TestSetupMigratesTheSpecSchema(t *testing.T) {
	dbtest.ForEachDriverEmpty(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		ts := "TIMESTAMPTZ"
		if driver == "sqlite" {
			ts = "INTEGER"
		}
		old := fmt.Sprintf(`
CREATE TABLE _sky_durable_runs (id TEXT PRIMARY KEY, workflow TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL,
  output TEXT, attempts INT NOT NULL DEFAULT 0, wake_at %[1]s NOT NULL, waiting_signal TEXT, last_error TEXT NOT NULL DEFAULT '',
  claimed_at %[1]s, created_at %[1]s NOT NULL, updated_at %[1]s NOT NULL);
CREATE TABLE _sky_durable_journal (run_id TEXT NOT NULL, step_id TEXT NOT NULL, result TEXT NOT NULL, created_at %[1]s NOT NULL,
  PRIMARY KEY (run_id, step_id));
CREATE TABLE _sky_durable_signals (run_id TEXT NOT NULL, name TEXT NOT NULL, payload TEXT NOT NULL,
  delivered BOOLEAN NOT NULL DEFAULT FALSE, created_at %[1]s NOT NULL, PRIMARY KEY (run_id, name));`, ts)
		if _, err := d.ExecRaw(ctx, old); err != nil {
			t.Fatal(err)
		}
		clock := newVirtualClock()
		var t0, t1 any = clock.Now(), clock.Now().Add(time.Second)
		if driver == "sqlite" {
			t0, t1 = clock.Now().UnixMilli(), clock.Now().Add(time.Second).UnixMilli()
		}
		mustExec := func(sql string, args ...any) {
			if _, err := d.Exec(ctx, sql, args...); err != nil {
				t.Fatalf("%s: %v", sql, err)
			}
		}
		mustExec(`INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at) VALUES ('old', 'legacy', 'waiting', '"in"', ?, ?, ?)`, t0, t0, t0)
		mustExec(`INSERT INTO _sky_durable_journal (run_id, step_id, result, created_at) VALUES ('old', 'first', '"1"', ?)`, t0)
		mustExec(`INSERT INTO _sky_durable_journal (run_id, step_id, result, created_at) VALUES ('old', 'second', '"2"', ?)`, t1)

		h := newHarness(t, d) // runs Setup over the old tables
		if err := h.e.Setup(ctx); err != nil {
			t.Fatalf("second setup: %v", err)
		}
		cnt := newCounter()
		legacy := Register("legacy", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "first", cnt.effect("first", "x")), func(a string) task.Task[string] {
				return task.AndThen(Step(c, str, "second", cnt.effect("second", "y")), func(b string) task.Task[string] {
					return Step(c, str, "third", cnt.effect("third", a+b))
				})
			})
		})
		h.drain(h.e, legacy.Erase())
		r, j := h.describe("old")
		if r.Status != StatusDone || r.Output != `"12"` || r.Version != 1 {
			t.Errorf("migrated run: status %s output %s version %d", r.Status, r.Output, r.Version)
		}
		want := []JournalEntry{{Seq: 1, StepID: "first", Kind: KindStep, Result: `"1"`}, {Seq: 2, StepID: "second", Kind: KindStep, Result: `"2"`}, {Seq: 3, StepID: "third", Kind: KindStep, Result: `"12"`}}
		if diff := cmp.Diff(want, j, cmpEntries); diff != "" {
			t.Errorf("journal (-want +got):\n%s", diff)
		}
		if cnt.get("first")+cnt.get("second") != 0 {
			t.Error("a step journalled before the migration ran again")
		}
	})
}

func TestCancelRetryAndWakeRefuseWhatTheyCannotDo(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := approval()
		h.start(def, "r1", "x")
		h.drain(h.e, def.Erase())
		wantErrContains(t, h.e.Retry(h.ctx, "r1"), task.Conflict, `"r1"`, "waiting", "only failed or dead")
		if err := h.e.Cancel(h.ctx, "r1"); err != nil {
			t.Fatal(err)
		}
		h.wantStatus("r1", StatusCancelled)
		h.signal("r1", "approve", `"late"`)
		if h.poll(h.e, def.Erase()) {
			t.Error("a cancelled run was claimed")
		}
		wantErrContains(t, h.e.Cancel(h.ctx, "r1"), task.Conflict, "cancelled", "already finished")
		wantErrContains(t, h.e.Wake(h.ctx, "r1"), task.Conflict, "only waiting runs")
		wantErrContains(t, h.e.Retry(h.ctx, "nope"), task.NotFound, `"nope"`)
		_, _, err := h.e.Describe(h.ctx, "nope")
		wantErrContains(t, err, task.NotFound, `"nope"`)
	})
}

func TestCompactKeepsTheRunAndDropsItsJournal(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := approval()
		h.start(def, "r1", "x")
		h.drain(h.e, def.Erase())
		wantErrContains(t, func() error { _, err := h.e.Compact(h.ctx, "r1"); return err }(), task.Conflict, "only done or cancelled")
		h.signal("r1", "approve", `"ann"`)
		h.drain(h.e, def.Erase())
		h.clock.Advance(time.Second)
		h.drain(h.e, def.Erase())
		n, err := h.e.Compact(h.ctx, "r1")
		if err != nil || n != 3 { // two journal rows, one signal
			t.Fatalf("compact: %d rows, %v; want 3", n, err)
		}
		r, j := h.describe("r1")
		if r.Status != StatusDone || r.Output != `"approved by ann"` || len(j) != 0 {
			t.Errorf("after compact: %s %s journal %d", r.Status, r.Output, len(j))
		}
	})
}

func TestSnapshotsAreWriteIfNewer(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, _, found, err := h.e.LoadSnapshot(h.ctx, "app"); found || err != nil {
			t.Fatalf("load before save: found=%v err=%v", found, err)
		}
		steps := []struct {
			seq   int64
			data  string
			wrote bool
		}{{1, `{"n":1}`, true}, {1, `{"n":99}`, false}, {3, `{"n":3}`, true}, {2, `{"n":2}`, false}}
		for _, s := range steps {
			wrote, err := h.e.SaveSnapshot(h.ctx, "app", s.seq, s.data)
			if err != nil || wrote != s.wrote {
				t.Errorf("save seq %d: wrote=%v err=%v, want wrote=%v", s.seq, wrote, err, s.wrote)
			}
		}
		seq, data, found, err := h.e.LoadSnapshot(h.ctx, "app")
		if !found || err != nil || seq != 3 || data != `{"n":3}` {
			t.Errorf("load: %d %s %v %v", seq, data, found, err)
		}
	})
}

func TestPollWithMaxRunsAndLifecycleLogs(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := RegisterWith(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second}, "logged", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "work", task.From(func(context.Context) (string, error) {
				if in == "flaky" && cnt.hit(in) == 1 {
					return "", task.New(task.Network, "first try fails")
				}
				return in, nil
			}))
		})
		for _, id := range []string{"one", "two", "flaky"} {
			h.start(def, id, id)
		}
		worked, err := h.e.PollWith(h.ctx, []Workflow{def.Erase(), def.Erase()}, PollOptions{MaxRuns: 2})
		if err != nil || !worked {
			t.Fatalf("PollWith = %v, %v", worked, err)
		}
		runs, err := h.e.List(h.ctx, StatusDone, 10)
		if err != nil || len(runs) != 2 {
			t.Fatalf("done runs after PollWith(MaxRuns 2): %d, %v; want 2", len(runs), err)
		}
		h.drain(h.e, def.Erase())
		h.clock.Advance(time.Second)
		h.drain(h.e, def.Erase())
		h.wantStatus("flaky", StatusDone)
		wantContains(t, h.logText(),
			`msg="durable run started" run=one workflow=logged`,
			`msg="durable run claimed" run=one workflow=logged attempt=1 worker=A`,
			`msg="durable step journalled" run=one workflow=logged step=work kind=step seq=1 attempt=1`,
			`msg="durable attempt failed" run=flaky workflow=logged attempt=1 worker=A error="Network: first try fails" backoff=`,
			`msg="durable run done" run=flaky workflow=logged attempt=2`,
		)
	})
}

// A run whose attempt failed, then suspended cleanly on the next attempt,
// shows no stale error: last_error is the last attempt's, and a clean
// suspension clears it as completion does.
func TestCleanSuspendClearsTheLastError(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		e := h.engine("A")
		policy := RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Second, Jitter: -1}
		cnt := newCounter()
		def := RegisterWith(policy, "w", str, str, func(c *Ctx, in string) task.Task[string] {
			first := Step(c, str, "call", task.From(func(context.Context) (string, error) {
				if cnt.hit("call") == 1 {
					return "", task.New(task.Network, "flaky once")
				}
				return "ok", nil
			}))
			return task.AndThen(first, func(string) task.Task[string] { return AwaitSignal(c, str, "go") })
		})
		h.start(def, "r1", "x")
		h.poll(e, def.Erase())
		if r := h.wantStatus("r1", StatusFailed); !strings.Contains(r.LastError, "flaky once") {
			t.Fatalf("after the failed attempt last_error = %q", r.LastError)
		}
		h.clock.Advance(2 * time.Second)
		h.poll(e, def.Erase())
		if r := h.wantStatus("r1", StatusWaiting); r.LastError != "" {
			t.Fatalf("after a clean suspension last_error = %q, want empty", r.LastError)
		}
	})
}
