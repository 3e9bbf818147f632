package durable

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestHistoryOfARunThatWaitsFailsAndIsRetried: a run suspended on a signal
// by worker A, resumed by worker B, which fails it dead at step "charge";
// an operator retries it and A finishes it. Its history says exactly that,
// in order, with each event's actor.
func TestHistoryOfARunThatWaitsFailsAndIsRetried(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		b := h.engine("B")
		declined := true
		w := RegisterWith(RetryPolicy{MaxAttempts: 1}, "hist", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(AwaitSignal(c, str, "go"), func(v string) task.Task[string] {
				return Step(c, str, "charge", task.From(func(context.Context) (string, error) {
					if declined {
						declined = false
						return "", task.New(task.Unavailable, "card declined")
					}
					return "charged " + v, nil
				}))
			})
		})
		h.start(w, "r", "")
		h.poll(h.e, w.Erase()) // A: suspends on "go"
		h.signal("r", "go", `"now"`)
		h.poll(b, w.Erase()) // B: consumes it, fails at "charge": dead
		h.wantStatus("r", StatusDead)
		if err := h.e.Retry(WithActor(h.ctx, "ann@box via sky durable"), "r"); err != nil {
			t.Fatal(err)
		}
		h.poll(h.e, w.Erase()) // A: replays the signal, charges: done
		h.wantStatus("r", StatusDone)

		events, err := h.e.History(h.ctx, "r")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for i, e := range events {
			if e.Pos != int64(i+1) || e.At.IsZero() {
				t.Errorf("event %d is at position %d, time %v", i+1, e.Pos, e.At)
			}
			got = append(got, fmt.Sprintf("%s by %s (attempt %d) %s %s", e.Kind, e.Actor, e.Attempt, e.Step, e.Detail))
		}
		want := []string{
			`suspended by A (attempt 1)  signal "go"`,
			`claimed by B (attempt 1)  `,
			`dead by B (attempt 1) charge Unavailable: card declined`,
			`retried by ann@box via sky durable (attempt 1)  `,
			`claimed by A (attempt 1)  `,
			`done by A (attempt 1)  `,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("history (-want +got):\n%s", diff)
		}
		_, err = h.e.History(h.ctx, "missing")
		wantErrContains(t, err, task.NotFound, `"missing"`)
	})
}

// TestHistoryOfAPlainRunIsDerived: a run done in the attempt that first
// claimed it stores no history row (its "done" is spared on the commonest
// path) and History derives its done from the run row, on both stores; a
// rewind of it first writes that done, so it is kept.
func TestHistoryOfAPlainRunIsDerived(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("plain", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "a", task.Succeed(in))
		})
		h.start(def, "p1", "x")
		h.drain(h.e, def.Erase())
		var stored int64
		if err := d.QueryRow(h.ctx, "SELECT COUNT(*) FROM _sky_durable_history WHERE run_id = ?", "p1").Scan(&stored); err != nil || stored != 0 {
			t.Errorf("history rows stored for a plain run = %d, %v; want 0", stored, err)
		}
		r := h.wantStatus("p1", StatusDone)
		events, err := h.e.History(h.ctx, "p1")
		if err != nil || len(events) != 1 || events[0].Pos != 1 || events[0].Kind != EventKind("done") || events[0].Actor != "A" || events[0].Attempt != 1 || !events[0].At.Equal(r.UpdatedAt) {
			t.Fatalf("History(p1) = %+v, %v; want one done by A at its completion", events, err)
		}
		if err := h.e.Rewind(WithActor(h.ctx, "ann"), "p1", "a"); err != nil {
			t.Fatal(err)
		}
		events, err = h.e.History(h.ctx, "p1")
		if err != nil || len(events) != 2 || events[0].Kind != EventKind("done") || events[0].Actor != "A" || events[1].Kind != EventKind("rewound") {
			t.Errorf("History after a rewind = %+v, %v; want the done kept, then the rewind", events, err)
		}
	})
}
