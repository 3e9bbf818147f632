package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// exitRequest stands in for Sky's System.exit (runtime/value.Exit).
type exitRequest struct{ code int }

func (e *exitRequest) Error() string { return fmt.Sprintf("exit %d", e.code) }
func (e *exitRequest) HaltsProgram() {}

func TestHaltStopsThePollAndLeavesTheRunAsItsLastCommit(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		fx := newCounter()
		// Where the exit is asked for: in a plain step's task, in a
		// transaction after its effect (rolled back), or in the body
		// between steps.
		places := map[string]func(c *Ctx) task.Task[string]{
			"step": func(c *Ctx) task.Task[string] {
				return Step(c, str, "quit", task.From(func(context.Context) (string, error) {
					fx.hit("step")
					return "", &exitRequest{3}
				}))
			},
			"transaction": func(c *Ctx) task.Task[string] {
				return Transaction(c, str, "quit", func(ctx context.Context, tx *db.DB) (string, error) {
					fx.hit("transaction")
					if _, err := tx.Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, c.RunID(), 1); err != nil {
						return "", err
					}
					return "", &exitRequest{3}
				})
			},
			"body": func(c *Ctx) task.Task[string] {
				fx.hit("body")
				return task.Fail[string](fmt.Errorf("wrapped: %w", &exitRequest{3}))
			},
		}
		for _, place := range []string{"step", "transaction", "body"} {
			def := Register("halt-"+place, str, str, func(c *Ctx, in string) task.Task[string] {
				return task.AndThen(Step(c, str, "first", fx.effect("first-"+place, "1")), func(string) task.Task[string] {
					return places[place](c)
				})
			})
			h.start(def, place, place)
			worked, err := h.e.Poll(h.ctx, []Workflow{def.Erase()})
			var exit *exitRequest
			if !worked || !errors.As(err, &exit) || exit.code != 3 || !IsHalt(err) {
				t.Fatalf("%s: poll = %v, %v; want true and the exit request", place, worked, err)
			}
			r, j := h.describe(place)
			// Released as by a stopping worker: due at once, in the
			// status before the claim, the attempt not counted; the
			// first step's pending entry written.
			if r.Status != StatusWaiting || r.Attempts != 0 || r.LastError != "" {
				t.Errorf("%s: run %s, %d attempts, last error %q; want waiting, 0, none", place, r.Status, r.Attempts, r.LastError)
			}
			if diff := cmp.Diff([]string{"first"}, stepIDs(j)); diff != "" {
				t.Errorf("%s: journal (-want +got):\n%s", place, diff)
			}
			if n := fx.get(place); n != 1 {
				t.Errorf("%s: the exiting code ran %d times, want 1", place, n)
			}
		}
		if ids := ledgerIDs(t, h); len(ids) != 0 {
			t.Errorf("ledger %v: the transaction that asked to exit committed", ids)
		}
	})
}

func TestHaltStopsTheWorker(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("halt-worker", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "quit", task.Fail[string](&exitRequest{7}))
		})
		h.start(def, "w", "w")
		_, err := h.e.Work(h.ctx, []Workflow{def.Erase()}, WorkerOptions{Concurrency: 2, Hints: HintSettings{Off: true}})
		var exit *exitRequest
		if !errors.As(err, &exit) || exit.code != 7 {
			t.Fatalf("Work = %v; want the exit request", err)
		}
		h.wantStatus("w", StatusWaiting)
	})
}

// A poll, a worker or a durable operation reached inside a step's task
// fails the run with a permanent error naming it (never a hang or a lost
// lease), even when the step's task or the body catches that error.
func TestEngineCallsInsideAStepFailTheRun(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		other := Register("other", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		write := func(ctx context.Context, c *Ctx) error {
			// The step's transaction is open when the call comes: on
			// SQLite a poll would wait for its lock forever.
			_, err := c.DB().Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, c.RunID(), 1)
			return err
		}
		swallow := func(t task.Task[string]) task.Task[string] {
			return task.OnError(t, func(error) task.Task[string] { return task.Succeed("caught") })
		}
		cases := []struct {
			name string
			body func(c *Ctx) task.Task[string]
			want string
		}{
			{"poll", func(c *Ctx) task.Task[string] {
				return Step(c, str, "outer", task.From(func(ctx context.Context) (string, error) {
					if err := write(ctx, c); err != nil {
						return "", err
					}
					_, err := h.e.Poll(ctx, []Workflow{other.Erase()})
					return "polled", err
				}))
			}, `Durable.poll was called inside step "outer"`},
			{"poll-swallowed", func(c *Ctx) task.Task[string] {
				return swallow(Step(c, str, "outer", task.From(func(ctx context.Context) (string, error) {
					if _, err := h.e.Poll(ctx, []Workflow{other.Erase()}); err != nil {
						return "no poll", nil
					}
					return "polled", nil
				})))
			}, `Durable.poll was called inside step "outer"`},
			{"worker", func(c *Ctx) task.Task[string] {
				return Transaction(c, str, "outer", func(ctx context.Context, tx *db.DB) (string, error) {
					_, err := h.e.Work(ctx, []Workflow{other.Erase()}, WorkerOptions{})
					return "worked", err
				})
			}, `Durable.worker was called inside step "outer"`},
			{"sleep", func(c *Ctx) task.Task[string] {
				return swallow(Step(c, str, "outer", task.Map(Sleep(c, 10), func(struct{}) string { return "slept" })))
			}, `"sleep:1" started while step "outer" was still running`},
		}
		for _, tc := range cases {
			def := Register("misuse-"+tc.name, str, str, func(c *Ctx, in string) task.Task[string] { return tc.body(c) })
			h.start(def, tc.name, tc.name)
			h.drain(h.e, def.Erase(), other.Erase())
			r := h.wantStatus(tc.name, StatusDead)
			if !strings.Contains(r.LastError, tc.want) || !strings.Contains(r.LastError, "a permanent error") {
				t.Errorf("%s: last error %q, want it to say %q, permanently", tc.name, r.LastError, tc.want)
			}
			if r.Attempts != 1 {
				t.Errorf("%s: %d attempts, want 1", tc.name, r.Attempts)
			}
		}
		if ids := ledgerIDs(t, h); len(ids) != 0 {
			t.Errorf("ledger %v: a step that polled committed its effect", ids)
		}
	})
}

// TestHaltingWorkerClaimsNothingMore: in a Work loop, an attempt that halts
// the program marks the loop halting before it releases its run, and a poll
// of the loop that sees the mark claims nothing — not the released run, not
// another due one — so no poller takes a run while the program stops (a
// claim cut off by the stop after it committed would leave the run held
// until its lease ends; testscripts/durable_step_guards saw it).
func TestHaltingWorkerClaimsNothingMore(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var halting atomic.Bool
		var markedAtRelease []bool
		e := h.engine("W", func(o *Options) {
			o.OnStatement = func(op, _ string) {
				if op == "release" {
					markedAtRelease = append(markedAtRelease, halting.Load())
				}
			}
		})
		quit := Register("halt-loop", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "quit", task.Fail[string](&exitRequest{5}))
		})
		plain := Register("halt-loop-plain", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		defs := []Workflow{quit.Erase(), plain.Erase()}
		h.start(quit, "q", "q")
		worked, _, err := e.pollWait(h.ctx, defs, PollOptions{halting: &halting})
		if !worked || !IsHalt(err) {
			t.Fatalf("poll = %v, %v; want the exit request", worked, err)
		}
		if len(markedAtRelease) != 1 || !markedAtRelease[0] {
			t.Fatalf("halting marked at the release statements: %v; want [true]", markedAtRelease)
		}
		h.start(plain, "p", "p")
		h.clock.Advance(time.Second)
		for range 3 {
			if worked, _, err := e.pollWait(h.ctx, defs, PollOptions{halting: &halting, MaxRuns: 10}); worked || err != nil {
				t.Fatalf("a poll of the halting loop = %v, %v; want no work", worked, err)
			}
		}
		h.wantStatus("q", StatusWaiting)
		h.wantStatus("p", StatusWaiting)
		// The same engine outside the loop (Poll) still claims.
		if worked, err := e.Poll(h.ctx, []Workflow{plain.Erase()}); !worked || err != nil {
			t.Fatalf("Poll after the loop = %v, %v", worked, err)
		}
		h.wantStatus("p", StatusDone)
	})
}
