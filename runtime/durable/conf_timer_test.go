package durable

import (
	"fmt"
	"math"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestHugeTimersNeverFireEarly checks that a sleep or signal timeout too long
// for a time.Duration (a "forever" of math.MaxInt64 ms) suspends the run
// until far in the future instead of overflowing into the past and
// returning at once.
func TestHugeTimersNeverFireEarly(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		century := h.clock.Now().Add(100 * 365 * 24 * time.Hour)
		for _, ms := range []int64{100_000_000_000_000, math.MaxInt64} {
			sleeper := Register("sleeper", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.Map(Sleep(c, ms), func(struct{}) string { return "woke" })
			})
			waiter := Register("waiter", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.Map(AwaitSignalFor(c, str, "go", ms), func(p *string) string { return fmt.Sprint(p) })
			})
			sleepID, waitID := fmt.Sprintf("sleep-%d", ms), fmt.Sprintf("wait-%d", ms)
			h.start(sleeper, sleepID, "")
			h.start(waiter, waitID, "")
			h.drain(h.e, sleeper.Erase(), waiter.Erase())
			for _, id := range []string{sleepID, waitID} {
				if r := h.wantStatus(id, StatusWaiting); r.WakeAt.Before(century) {
					t.Errorf("run %s wakes at %v, want more than a century from now", id, r.WakeAt)
				}
			}
		}
	})
}
