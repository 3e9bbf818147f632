package durable

import (
	"fmt"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestStepValueComputesOnce holds StepValue's promise (Sky's
// Durable.stepValue): the value is computed once and journalled; the replay
// after a sleep returns the recorded value without calling f again.
func TestStepValueComputesOnce(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		calls := 0
		def := Register("fresh-id", str, str, func(c *Ctx, in string) task.Task[string] {
			id := StepValue(c, codec.Int, "id", func() int64 { calls++; return int64(100 + calls) })
			return task.AndThen(id, func(id int64) task.Task[string] {
				return task.AndThen(Sleep(c, 10), func(struct{}) task.Task[string] {
					return task.Succeed(fmt.Sprint(in, "-", id))
				})
			})
		})
		h.start(def, "v1", "order")
		h.drain(h.e, def.Erase())
		h.clock.Advance(time.Second)
		h.drain(h.e, def.Erase())
		if r := h.wantStatus("v1", StatusDone); r.Output != `"order-101"` || calls != 1 {
			t.Errorf("output %s after %d calls of f; want \"order-101\" after 1", r.Output, calls)
		}
	})
}
