package durable

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestParallelOperationRefusedWhileAnotherIsJournalled pins the window in
// which a journal row is being written: step "b" writes the pending row of
// step "a" before its own task runs, and a durable operation started in
// parallel right then is refused with the clear "started while step ...
// was still running" error, never a raw UNIQUE-constraint failure on the
// journal position.
func TestParallelOperationRefusedWhileAnotherIsJournalled(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		writing, tried := make(chan struct{}), make(chan struct{})
		var first atomic.Bool
		e := h.engine("P", func(o *Options) {
			o.OnStatement = func(op, sql string) {
				if op == "append" && first.CompareAndSwap(false, true) {
					close(writing)
					select { // a deadline only so a regression fails instead of hanging
					case <-tried:
					case <-time.After(30 * time.Second):
					}
				}
			}
		})
		var second error
		wf := RegisterWith(RetryPolicy{MaxAttempts: 1}, "par", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", task.Succeed("A")), func(string) task.Task[string] {
				b := Step(c, str, "b", task.Succeed("B"))
				cc := task.From(func(ctx context.Context) (string, error) {
					<-writing // "b" is writing the journal row of "a"
					_, err := task.Run(ctx, Step(c, str, "c", task.Succeed("C")))
					second = err
					close(tried)
					return "", err
				})
				return task.Map(task.Parallel([]task.Task[string]{b, cc}), func(xs []string) string { return strings.Join(xs, "") })
			})
		})
		h.start(wf, "par", "")
		if !h.poll(e, wf.Erase()) {
			t.Fatal("poll found no work")
		}
		if second == nil || !strings.Contains(second.Error(), `"c" started while step "b" was still running`) {
			t.Fatalf("the parallel step got %v, want the clear refusal naming both steps", second)
		}
		r, j := h.describe("par")
		if r.Status != StatusDead || !strings.HasPrefix(r.LastError, "InvalidInput") {
			t.Errorf("run is %s with last_error %q, want dead with the InvalidInput refusal", r.Status, r.LastError)
		}
		// "a" is journalled; Parallel cancels "b" when "c" fails, so "b"
		// may or may not have finished (and then be journalled too).
		if ids := strings.Join(stepIDs(j), ","); ids != "a" && ids != "a,b" {
			t.Errorf("journal [%s], want [a] or [a,b]", ids)
		}
	})
}
