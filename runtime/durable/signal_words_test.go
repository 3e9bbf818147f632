package durable

import (
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestSignalToAFinishedRunSaysItsStatus: a signal to a cancelled run is
// ignored and the operator is told the run is cancelled (it used to say
// "run is done"); the words of every outcome use the mailbox's vocabulary
// (pending, never "delivered").
func TestSignalToAFinishedRunSaysItsStatus(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("approval", str, str, func(c *Ctx, in string) task.Task[string] {
			return AwaitSignal(c, str, "approve")
		})
		h.start(def, "a-1", "x")
		h.drain(h.e, def.Erase())
		if err := h.e.Cancel(h.ctx, "a-1"); err != nil {
			t.Fatal(err)
		}
		out, err := h.e.SignalRun(h.ctx, "a-1", "approve", `"yes"`)
		if err != nil || out != SignalRunCancelled {
			t.Fatalf("SignalRun to a cancelled run = %v, %v; want SignalRunCancelled", out, err)
		}
		if signals, _ := h.e.Signals(h.ctx, "a-1"); len(signals) != 0 {
			t.Errorf("a signal to a cancelled run was stored: %+v", signals)
		}
	})
	for o, want := range map[SignalOutcome]string{
		SignalStored:       "signal approve to run a-1 stored: pending until the run consumes it",
		SignalNoRunYet:     "signal approve to run a-1 stored: pending until the run consumes it",
		SignalDuplicate:    "signal approve to run a-1 ignored: a signal approve was sent to it before and the first one wins (correct a pending payload with --replace)",
		SignalRunDone:      "signal approve to run a-1 ignored: the run is done and will never consume a signal",
		SignalRunCancelled: "signal approve to run a-1 ignored: the run is cancelled and will never consume a signal",
		SignalRunTimedOut:  "signal approve to run a-1 ignored: the run timed out and will never consume a signal",
		SignalReplaced:     "signal approve of run a-1 replaced: pending, with the new payload",
		SignalSentNew:      "signal approve to run a-1 sent (nothing to replace: none of that name was sent before): pending until the run consumes it",
	} {
		if got := o.Message("a-1", "approve"); got != want {
			t.Errorf("outcome %d: Message = %q, want %q", o, got, want)
		}
	}
}
