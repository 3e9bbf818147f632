package durable

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestBulkActions: counts, refusals naming the valid statuses, a retry by
// error text, a retry of every dead run in batches, and a cancel by
// workflow, on both stores.
func TestBulkActions(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		flaky := RegisterWith(RetryPolicy{MaxAttempts: 1}, "flaky", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "charge", task.Fail[string](task.Errorf(task.Unavailable, "provider down for %s", in)))
		})
		for i := range 7 {
			h.start(flaky, fmt.Sprintf("f-%d", i), fmt.Sprintf("n%d", i))
		}
		h.drain(h.e, flaky.Erase())
		count := func(a BulkAction, f BulkFilter) int64 {
			t.Helper()
			n, err := h.e.CountBulk(h.ctx, a, f)
			if err != nil {
				t.Fatalf("CountBulk(%s, %+v): %v", a, f, err)
			}
			return n
		}
		if n := count(BulkRetry, BulkFilter{}); n != 7 {
			t.Fatalf("%d runs to retry, want the 7 dead", n)
		}
		if n := count(BulkCancel, BulkFilter{}); n != 0 {
			t.Errorf("%d runs to cancel, want none (dead runs cannot be cancelled)", n)
		}
		for _, c := range []struct {
			a    BulkAction
			f    BulkFilter
			want string
		}{
			{BulkRetry, BulkFilter{Statuses: []Status{StatusWaiting}}, `retry applies to failed and dead runs, not "waiting"; hint: a status among failed, dead`},
			{BulkCancel, BulkFilter{Statuses: []Status{StatusDead}}, `cancel applies to waiting, running and failed runs, not "dead"`},
			{BulkRelease, BulkFilter{Statuses: []Status{StatusFailed}}, `release applies to running runs, not "failed"`},
			{"explode", BulkFilter{}, `"explode" is not a bulk action`},
			{BulkRetry, BulkFilter{CreatedAfter: time.Unix(100, 0), CreatedBefore: time.Unix(50, 0)}, "no run is created after"},
		} {
			_, err := h.e.Bulk(h.ctx, c.a, c.f, BulkOptions{})
			if te := task.As(err); te == nil || te.Kind != task.InvalidInput || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Bulk(%s, %+v) = %v, want InvalidInput with %q", c.a, c.f, err, c.want)
			}
		}
		h.wantStatus("f-3", StatusDead)

		res, err := h.e.Bulk(h.ctx, BulkRetry, BulkFilter{ErrorContains: "down for n3"}, BulkOptions{})
		if err != nil || res.Changed != 1 {
			t.Fatalf("retry of the runs whose error has 'down for n3' = %+v, %v; want 1", res, err)
		}
		if r := h.wantStatus("f-3", StatusWaiting); r.Attempts != 0 {
			t.Errorf("retried run has %d attempts, want 0", r.Attempts)
		}
		var progress []int64
		res, err = h.e.Bulk(h.ctx, BulkRetry, BulkFilter{Statuses: []Status{StatusDead}, Workflow: "flaky"},
			BulkOptions{BatchSize: 2, OnBatch: func(n int64) { progress = append(progress, n) }})
		// 6 dead runs, 2 a batch: 3 full batches and the empty one that
		// shows none is left.
		if err != nil || res.Changed != 6 || res.Batches != 4 || fmt.Sprint(progress) != "[2 4 6 6]" {
			t.Fatalf("retry of every dead run = %+v, %v, progress %v; want 6 in 4 batches", res, err, progress)
		}
		for i := range 7 {
			h.wantStatus(fmt.Sprintf("f-%d", i), StatusWaiting)
		}
		res, err = h.e.Bulk(h.ctx, BulkCancel, BulkFilter{Workflow: "flaky"}, BulkOptions{})
		if err != nil || res.Changed != 7 {
			t.Fatalf("cancel of every flaky run = %+v, %v; want 7", res, err)
		}
		h.wantStatus("f-0", StatusCancelled)
		if n := count(BulkRetry, BulkFilter{}) + count(BulkCancel, BulkFilter{}); n != 0 {
			t.Errorf("%d runs left to retry or cancel, want none", n)
		}
	})
}
