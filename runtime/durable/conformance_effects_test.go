package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

const ledgerTable = `CREATE TABLE ledger (id TEXT PRIMARY KEY, amount INTEGER NOT NULL)`

func ledgerIDs(t *testing.T, h *harness) []string {
	t.Helper()
	rows, err := h.d.QueryMaps(h.ctx, `SELECT id FROM ledger ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r["id"])
	}
	return ids
}

func TestGuarantee04TransactionalStep(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		insert := func(c *Ctx, id string) task.Task[string] {
			return task.From(func(ctx context.Context) (string, error) {
				_, err := c.DB().Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, id, 10)
				return id, err
			})
		}

		t.Run("effect commits with the journal row", func(t *testing.T) {
			def := Register("charge", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.AndThen(Step(c, str, "charge", insert(c, "charge-"+in)), func(id string) task.Task[string] {
					return task.AndThen(Sleep(c, 10), func(struct{}) task.Task[string] { return task.Succeed(id) })
				})
			})
			h.start(def, "c1", "c1")
			h.drain(h.e, def.Erase())
			h.clock.Advance(time.Second)
			h.drain(h.e, def.Erase()) // the replay must not insert again (it would conflict)
			h.wantStatus("c1", StatusDone)
			if got := fmt.Sprint(ledgerIDs(t, h)); got != "[charge-c1]" {
				t.Errorf("ledger %s, want [charge-c1]", got)
			}
		})

		t.Run("a lost lease rolls the effect back", func(t *testing.T) {
			def := Register("cancelled-charge", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.AndThen(Step(c, str, "prepare", task.Succeed("ok")), func(string) task.Task[string] {
					return Step(c, str, "charge", task.From(func(ctx context.Context) (string, error) {
						// An operator cancels the run while the step runs: the
						// worker's lease is revoked before its journal write.
						if err := h.e.Cancel(context.Background(), c.RunID()); err != nil {
							return "", err
						}
						return task.Run(ctx, insert(c, "lost-"+in))
					}))
				})
			})
			h.start(def, "c2", "c2")
			worked, err := h.e.Poll(h.ctx, []Workflow{def.Erase()})
			if err != nil || !worked {
				t.Fatalf("poll = %v, %v; want true, nil", worked, err)
			}
			_, j := h.describe("c2")
			h.wantStatus("c2", StatusCancelled)
			if got := fmt.Sprint(stepIDs(j)); got != "[prepare]" {
				t.Errorf("journal %s, want [prepare]", got)
			}
			if got := fmt.Sprint(ledgerIDs(t, h)); got != "[charge-c1]" {
				t.Errorf("ledger %s: the cancelled worker's insert was committed", got)
			}
		})

		t.Run("a failing effect rolls back and journals nothing", func(t *testing.T) {
			def := RegisterWith(RetryPolicy{MaxAttempts: 1}, "half-charge", str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "charge", task.AndThen(insert(c, "half-"+in), func(string) task.Task[string] {
					return task.Fail[string](task.New(task.Network, "payment gateway down"))
				}))
			})
			h.start(def, "c3", "c3")
			h.drain(h.e, def.Erase())
			r, j := h.describe("c3")
			if r.Status != StatusDead || len(j) != 0 {
				t.Errorf("run %s with %d journal entries, want dead with none", r.Status, len(j))
			}
			wantContains(t, r.LastError, "payment gateway down")
			if got := fmt.Sprint(ledgerIDs(t, h)); got != "[charge-c1]" {
				t.Errorf("ledger %s: a failed step's insert was committed", got)
			}
		})

		t.Run("Transaction runs the effect and the journal row in one transaction", func(t *testing.T) {
			def := Register("tx", str, str, func(c *Ctx, in string) task.Task[string] {
				return Transaction(c, str, "book", func(ctx context.Context, tx *db.DB) (string, error) {
					if !tx.InTransaction() {
						return "", task.New(task.Unexpected, "not in a transaction")
					}
					_, err := tx.Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, "tx-"+in, 5)
					return "booked", err
				})
			})
			h.start(def, "c4", "c4")
			h.drain(h.e, def.Erase())
			if r := h.wantStatus("c4", StatusDone); r.Output != `"booked"` {
				t.Errorf("output %s", r.Output)
			}
			if got := fmt.Sprint(ledgerIDs(t, h)); got != "[charge-c1 tx-c4]" {
				t.Errorf("ledger %s", got)
			}
		})
	})
}

func TestGuarantee05IdempotencyKey(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("keyed", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "charge", task.Succeed(c.IdempotencyKey("charge")))
		})
		h.start(def, "order-42", "x")
		h.drain(h.e, def.Erase())
		if r := h.wantStatus("order-42", StatusDone); r.Output != `"order-42:charge"` {
			t.Errorf("output %s, want \"order-42:charge\"", r.Output)
		}
	})
}

func TestGuarantee06AttemptsCountedAtClaim(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := RegisterWith(RetryPolicy{MaxAttempts: 3}, "crashy", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Succeed("never reached")
		})
		h.start(def, "r1", "x")
		// Three workers claim the run and die without a word.
		for i := 1; i <= 3; i++ {
			c, ok, err := h.e.store.ClaimRun(h.ctx, []string{"crashy"}, h.clock.Now(), DefaultLease, fmt.Sprintf("crashed-%d", i), "ghost")
			if err != nil || !ok || c.Attempts != i {
				t.Fatalf("crash claim %d: ok=%v attempts=%d err=%v", i, ok, c.Attempts, err)
			}
			h.clock.Advance(DefaultLease + time.Second)
		}
		if !h.poll(h.e, def.Erase()) {
			t.Fatal("the crash-looping run was not claimed")
		}
		r := h.wantStatus("r1", StatusDead)
		if r.Attempts != 4 || r.Output != "" {
			t.Errorf("attempts %d output %q; want 4 and no output", r.Attempts, r.Output)
		}
		wantContains(t, r.LastError, "attempt 4 exceeds the limit of 3 attempts", "crashed")
	})
}

func TestRetryBackoffIsExponentialWithJitterAndCap(t *testing.T) {
	p := RetryPolicy{InitialBackoff: time.Second, MaxBackoff: 10 * time.Second, Multiplier: 2, Jitter: 0.5}
	cases := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 0, time.Second},
		{2, 0, 2 * time.Second},
		{3, 0, 4 * time.Second},
		{3, 0.5, 3 * time.Second},
		{3, 0.999999, 2*time.Second + 4*time.Microsecond},
		{5, 0, 10 * time.Second}, // capped
		{60, 0, 10 * time.Second},
	}
	for _, c := range cases {
		if got := p.Backoff(c.attempt, c.r); got.Round(time.Millisecond) != c.want.Round(time.Millisecond) {
			t.Errorf("Backoff(%d, %v) = %v, want %v", c.attempt, c.r, got, c.want)
		}
	}
	if d := (RetryPolicy{}).WithDefaults(); d != DefaultRetryPolicy {
		t.Errorf("zero policy defaults to %+v, want %+v", d, DefaultRetryPolicy)
	}
}

func TestGuarantee07LeaseReclaimedAfterExpiry(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		lease := 10 * time.Minute
		a := h.engine("A2", func(o *Options) { o.Lease = lease })
		b := h.engine("B", func(o *Options) { o.Lease = lease })
		def := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed("done by " + in) })
		h.start(def, "r1", "B")
		// Worker A claims and crashes.
		if _, ok, err := a.store.ClaimRun(h.ctx, []string{"w"}, h.clock.Now(), lease, "tok-A", "A2"); !ok || err != nil {
			t.Fatalf("claim: %v %v", ok, err)
		}
		h.clock.Advance(lease - time.Second)
		if h.poll(b, def.Erase()) {
			t.Fatal("worker B claimed a run whose lease has not expired")
		}
		h.clock.Advance(2 * time.Second)
		if !h.poll(b, def.Erase()) {
			t.Fatal("worker B did not reclaim the run after its lease expired")
		}
		if r := h.wantStatus("r1", StatusDone); r.ClaimedBy != "B" || r.Attempts != 2 {
			t.Errorf("claimed_by %q attempts %d, want B and 2", r.ClaimedBy, r.Attempts)
		}
	})
}

func TestGuarantee07ProgressRenewsTheLease(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		// Heartbeats off: journalled steps alone must keep the lease
		// (heartbeat_test.go covers the heartbeat).
		lease := 10 * time.Minute
		a := h.engine("A2", func(o *Options) { o.Lease, o.Heartbeat = lease, -1 })
		b := h.engine("B", func(o *Options) { o.Lease, o.Heartbeat = lease, -1 })
		var wf Workflow
		stolen := 0
		slowStep := func(c *Ctx, id string) task.Task[string] {
			return Step(c, str, id, task.From(func(context.Context) (string, error) {
				// Each step takes most of a lease; a peer polls meanwhile.
				h.clock.Advance(lease - time.Minute)
				if h.poll(b, wf) {
					stolen++
				}
				return id, nil
			}))
		}
		def := Register("long", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(slowStep(c, "s1"), func(string) task.Task[string] {
				return task.AndThen(slowStep(c, "s2"), func(string) task.Task[string] {
					return slowStep(c, "s3")
				})
			})
		})
		wf = def.Erase()
		h.start(def, "r1", "x")
		if !h.poll(a, wf) {
			t.Fatal("no work")
		}
		if stolen != 0 {
			t.Errorf("a peer claimed the run %d times while it made progress", stolen)
		}
		if r := h.wantStatus("r1", StatusDone); r.ClaimedBy != "A2" {
			t.Errorf("claimed_by %q, want A2", r.ClaimedBy)
		}
	})
}

func TestGuarantee08TimersAreExact(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := Register("nap", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(SleepAs(c, "nap", 60_000), func(struct{}) task.Task[string] {
				return Step(c, str, "after", cnt.effect("after", "woke"))
			})
		})
		wf := def.Erase()
		start := h.clock.Now()
		h.start(def, "r1", "x")
		h.drain(h.e, wf)
		r := h.wantStatus("r1", StatusWaiting)
		if want := start.Add(time.Minute); !r.WakeAt.Equal(want) {
			t.Fatalf("wake_at %v, want %v", r.WakeAt, want)
		}
		// Woken early (an operator nudge): the sleep suspends again until
		// its journalled wake time.
		h.clock.Advance(10 * time.Second)
		if err := h.e.Wake(h.ctx, "r1"); err != nil {
			t.Fatal(err)
		}
		if !h.poll(h.e, wf) {
			t.Fatal("the woken run was not claimed")
		}
		r = h.wantStatus("r1", StatusWaiting)
		if want := start.Add(time.Minute); !r.WakeAt.Equal(want) || cnt.get("after") != 0 {
			t.Fatalf("after an early wake: wake_at %v (want %v), step after ran %d times", r.WakeAt, want, cnt.get("after"))
		}
		h.clock.Advance(50*time.Second - time.Millisecond)
		if h.poll(h.e, wf) {
			t.Fatal("the run was due 1ms before its wake time")
		}
		h.clock.Advance(time.Millisecond)
		h.drain(h.e, wf)
		h.wantStatus("r1", StatusDone)
		if cnt.get("after") != 1 {
			t.Errorf("step after ran %d times", cnt.get("after"))
		}
	})
}
