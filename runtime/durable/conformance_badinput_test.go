package durable

import (
	"context"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

func TestGuarantee13BadInput(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		twice := RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}
		counts := RegisterWith(twice, "counts", codec.Int, codec.Int, func(c *Ctx, n int64) task.Task[int64] {
			return task.AndThen(Step(c, codec.Int, "double", task.Succeed(2*n)), func(m int64) task.Task[int64] {
				return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[int64] { return task.Succeed(m) })
			})
		})
		wf := counts.Erase()

		t.Run("undecodable input is kept, inspectable and retryable", func(t *testing.T) {
			if err := h.e.StartJSON(h.ctx, wf, "bad-input", `"seven"`); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, wf)
			r := h.wantStatus("bad-input", StatusFailed)
			wantContains(t, r.LastError, "Decode", `"bad-input"`, `"counts"`, `"seven"`, "expected an integer")
			h.clock.Advance(time.Second)
			h.drain(h.e, wf)
			r = h.wantStatus("bad-input", StatusDead)
			if r.Input != `"seven"` || r.Attempts != 2 {
				t.Errorf("input %s attempts %d, want the input kept and 2 attempts", r.Input, r.Attempts)
			}
			if err := h.e.Retry(h.ctx, "bad-input"); err != nil {
				t.Fatal(err)
			}
			if r := h.wantStatus("bad-input", StatusWaiting); r.Attempts != 0 || !r.WakeAt.Equal(h.clock.Now()) {
				t.Errorf("after Retry: attempts %d wake_at %v, want 0 and now", r.Attempts, r.WakeAt)
			}
		})

		t.Run("undecodable journal JSON names the step", func(t *testing.T) {
			if err := Start(h.ctx, h.e, counts, "bad-journal", 4); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, wf)
			if _, err := d.Exec(h.ctx, `UPDATE _sky_durable_journal SET result = ? WHERE run_id = ? AND step_id = ?`, `"eight"`, "bad-journal", "double"); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(time.Second)
			h.drain(h.e, wf)
			r := h.wantStatus("bad-journal", StatusFailed)
			wantContains(t, r.LastError, `"bad-journal"`, `step "double"`, "position 1", "does not decode")
			_, j := h.describe("bad-journal")
			if len(j) != 2 || j[0].Result != `"eight"` {
				t.Errorf("journal %+v: want it kept as it was", j)
			}
		})

		t.Run("unknown workflow names", func(t *testing.T) {
			_, err := Lookup([]Workflow{wf}, "refunds")
			wantErrContains(t, err, task.NotFound, `"refunds"`, `"counts"`)
			v2 := wf
			v2.Version = 2
			_, err = Lookup([]Workflow{wf, v2, {Name: "alpha"}}, "refunds")
			wantContains(t, err.Error(), `known workflows: "alpha", "counts"; hint:`) // one name per workflow, not per version
			other := Workflow{Name: "refunds", Body: wf.Body}
			if err := h.e.StartJSON(h.ctx, other, "orphan", `1`); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, wf) // a worker never claims what it cannot run
			if r := h.wantStatus("orphan", StatusWaiting); r.Attempts != 0 {
				t.Errorf("orphan attempts %d", r.Attempts)
			}
		})

		t.Run("payloads over the cap and invalid JSON", func(t *testing.T) {
			small := h.engine("small", func(o *Options) { o.MaxPayloadBytes = 64 })
			big := `"` + strings.Repeat("x", 100) + `"`
			err := small.StartJSON(h.ctx, wf, "too-big", big)
			wantErrContains(t, err, task.InvalidInput, `"too-big"`, "102 bytes", "cap of 64", "SKY_DURABLE_MAX_PAYLOAD_BYTES")
			if _, _, err := h.e.Describe(h.ctx, "too-big"); task.As(err).Kind != task.NotFound {
				t.Errorf("an oversized start created a run: %v", err)
			}
			err = small.Signal(h.ctx, "any", "approve", big)
			wantErrContains(t, err, task.InvalidInput, `"approve"`, "cap of 64")
			err = h.e.Signal(h.ctx, "any", "approve", `{"oops"`)
			wantErrContains(t, err, task.InvalidInput, `"approve"`, `{"oops"`, "not valid JSON")
			err = h.e.StartJSON(h.ctx, wf, "", `1`)
			wantErrContains(t, err, task.InvalidInput, "run id must not be empty")
			err = h.e.StartJSON(h.ctx, wf, "order\n42", `1`)
			wantErrContains(t, err, task.InvalidInput, `"order\n42"`, "control character U+000A at byte 5")
			if _, _, err := h.e.Describe(h.ctx, "order\n42"); task.As(err).Kind != task.NotFound {
				t.Errorf("a run id with a newline created a run: %v", err)
			}

			var emptyStep error
			unnamed := RegisterWith(twice, "unnamed", str, str, func(c *Ctx, in string) task.Task[string] {
				return task.OnError(Step(c, str, "", task.Succeed("x")), func(err error) task.Task[string] {
					emptyStep = err
					return task.Fail[string](err)
				})
			})
			if err := Start(h.ctx, h.e, unnamed, "unnamed-1", "x"); err != nil {
				t.Fatal(err)
			}
			h.poll(h.e, unnamed.Erase())
			wantErrContains(t, emptyStep, task.InvalidInput, `"unnamed-1"`, "empty id")
			if _, j := h.describe("unnamed-1"); len(j) != 0 {
				t.Errorf("a step with an empty id was journalled: %v", stepIDs(j))
			}

			bloat := RegisterWith(twice, "bloat", str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "fat", task.Succeed(strings.Repeat("y", 100)))
			})
			if err := Start(h.ctx, small, bloat, "fat-step", "x"); err != nil {
				t.Fatal(err)
			}
			h.drain(small, bloat.Erase())
			// InvalidInput is permanent: dead on the first attempt.
			r := h.wantStatus("fat-step", StatusDead)
			wantContains(t, r.LastError, `step "fat"`, `"fat-step"`, "cap of 64", "permanent")
			if r.Attempts != 1 {
				t.Errorf("attempts %d, want 1 (a permanent error is not retried)", r.Attempts)
			}
		})

		t.Run("a signal payload of the wrong shape fails the attempt and is not consumed", func(t *testing.T) {
			wait := RegisterWith(twice, "wait-int", str, codec.Int, func(c *Ctx, in string) task.Task[int64] {
				return AwaitSignal(c, codec.Int, "amount")
			})
			h.signal("shape", "amount", `"ten"`)
			h.start2(wait, "shape")
			h.drain(h.e, wait.Erase())
			r := h.wantStatus("shape", StatusFailed)
			wantContains(t, r.LastError, `"shape"`, `signal "amount"`, "expected an integer")
			wantContains(t, r.LastError, "sky durable signal --replace shape amount JSON")
			h.signal("shape", "amount", `10`) // a repeat is ignored: the first delivery wins
			if box, err := h.e.Signals(h.ctx, "shape"); err != nil || len(box) != 1 || box[0].Payload != `"ten"` {
				t.Fatalf("mailbox after a repeat = %+v, %v; want the first payload kept", box, err)
			}
			if _, err := h.e.ReplaceSignal(h.ctx, "shape", "amount", `10`); err != nil { // the operator's correction
				t.Fatal(err)
			}
			h.clock.Advance(time.Second)
			h.drain(h.e, wait.Erase())
			if r := h.wantStatus("shape", StatusDone); r.Output != "10" {
				t.Errorf("output %s", r.Output)
			}
		})
	})
}

// start2 starts a string-input workflow of any output type.
func (h *harness) start2(w Def[string, int64], runID string) {
	h.t.Helper()
	if err := Start(h.ctx, h.e, w, runID, "x"); err != nil {
		h.t.Fatalf("start %q: %v", runID, err)
	}
}

// TestGuarantee13ClosedDatabase: a worker whose database handle is closed
// (mid-step too) gets clear Unavailable errors and loses nothing; another
// worker finishes the run after the lease expires.
func TestGuarantee13ClosedDatabase(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			url := dbtest.URL(t, driver)
			open := func() *db.DB {
				d, err := db.Open(context.Background(), driver, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = d.Close() })
				return d
			}
			h := newHarness(t, open())
			d2 := open()
			e2 := New(d2, Options{Clock: h.clock.Now, WorkerID: "doomed"})
			cnt := newCounter()
			def := Register("w", str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "s", task.From(func(context.Context) (string, error) {
					if cnt.hit("s") == 1 {
						_ = d2.Close() // the worker's database goes away mid-step
					}
					return "ok", nil
				}))
			})
			wf := def.Erase()
			h.start(def, "r1", "x")
			worked, err := e2.Poll(h.ctx, []Workflow{wf})
			if !worked {
				t.Error("the doomed worker did not claim the run")
			}
			wantErrContains(t, err, task.Unavailable, "closed")
			for name, err := range map[string]error{
				"start":  Start(h.ctx, e2, def, "r2", "x"),
				"signal": e2.Signal(h.ctx, "r1", "s", `1`),
				"poll":   func() error { _, err := e2.Poll(h.ctx, []Workflow{wf}); return err }(),
			} {
				if te := task.As(err); te == nil || te.Kind != task.Unavailable || !strings.Contains(te.Message, "closed") {
					t.Errorf("%s on a closed database: %v, want Unavailable naming the closed database", name, err)
				}
			}
			r, j := h.describe("r1")
			if r.Status != StatusRunning || len(j) != 0 {
				t.Fatalf("after the crash: status %s, %d journal entries", r.Status, len(j))
			}
			h.clock.Advance(DefaultLease + time.Second)
			h.drain(h.e, wf)
			if r := h.wantStatus("r1", StatusDone); r.Output != `"ok"` || r.Attempts != 2 {
				t.Errorf("output %s attempts %d", r.Output, r.Attempts)
			}
		})
	}
}
