package ui

import (
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// TestTimedOutRunPages: a run past its deadline shows as timed_out in the
// overview, the listing filter and its page, which offers no action.
func TestTimedOutRunPages(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		if err := f.e.StartJSONWith(f.ctx, durable.StartOptions{Deadline: time.Minute}, f.defs[0], "late-1", `"x"`); err != nil {
			t.Fatal(err)
		}
		// A worker whose clock is an hour ahead sweeps it.
		later := durable.New(d, durable.Options{WorkerID: "later", Clock: func() time.Time { return time.Now().Add(time.Hour) }})
		if _, err := later.Poll(f.ctx, f.defs); err != nil {
			t.Fatal(err)
		}
		if got := f.status("late-1"); got != durable.StatusTimedOut {
			t.Fatalf("late-1 is %s, want timed_out", got)
		}
		f.page("/", "timed_out", `<a href="/runs?workflow=checkout&amp;status=timed_out">1</a>`)
		if got := listed(f.page("/runs?status=timed_out")); len(got) != 1 || got[0] != "late-1" {
			t.Errorf("/runs?status=timed_out lists %v, want [late-1]", got)
		}
		body := f.page("/runs/late-1", `id="run-status">timed_out<`, "the deadline passed at", `id="deadline">`)
		if strings.Contains(f.page("/runs/order-1"), `id="deadline"`) {
			t.Error("a run without a deadline shows one")
		}
		if strings.Contains(body, `id="action-`) {
			t.Errorf("the timed-out run's page offers an action:\n%s", body)
		}
	})
}
