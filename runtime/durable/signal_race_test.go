package durable

import (
	"context"
	"errors"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// finishingStore is the engine's store with a run that finishes right after
// the engine read it: the operator's signal then reaches the store when the
// run no longer takes one (on SQLite a `sky durable signal` waits for the
// write lock of a step in flight, so the run often ends meanwhile).
type finishingStore struct {
	store.Store
	finish func()
}

func (s *finishingStore) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := s.Store.ReadRun(ctx, runID)
	if s.finish != nil {
		s.finish()
		s.finish = nil
	}
	return r, err
}

// TestSignalToARunThatFinishesMeanwhileSaysSo: a signal that meets a run
// finishing between the engine's read and its write is ignored and said to
// be (the run is cancelled), never reported as a repeat of a signal nobody
// sent; --replace in the same race is refused as for a finished run and
// stores nothing, instead of writing into the finished run's mailbox.
func TestSignalToARunThatFinishesMeanwhileSaysSo(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("approval", str, str, func(c *Ctx, in string) task.Task[string] {
			return AwaitSignal(c, str, "approve")
		})
		other := h.engine("B")
		race := func(id string) *Engine {
			e := h.engine("A")
			e.store = &finishingStore{Store: e.store, finish: func() {
				if err := other.Cancel(h.ctx, id); err != nil {
					t.Fatalf("cancel %s: %v", id, err)
				}
			}}
			return e
		}
		for _, id := range []string{"a-1", "a-2"} {
			h.start(def, id, "x")
		}
		h.drain(h.e, def.Erase())

		out, err := race("a-1").SignalRun(h.ctx, "a-1", "approve", `"yes"`)
		if err != nil || out != SignalRunCancelled {
			t.Errorf("SignalRun to a run cancelled meanwhile = %v (%q), %v; want SignalRunCancelled", out, out.Message("a-1", "approve"), err)
		}

		_, err = race("a-2").ReplaceSignal(h.ctx, "a-2", "approve", `"yes"`)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "the run is cancelled") {
			t.Errorf("ReplaceSignal to a run cancelled meanwhile = %v; want refused: the run is cancelled", err)
		}
		for _, id := range []string{"a-1", "a-2"} {
			if box, err := h.e.Signals(h.ctx, id); err != nil || len(box) != 0 {
				t.Errorf("run %s, cancelled before the signal was written, has the mailbox %+v (%v); want empty", id, box, err)
			}
		}
		h.mu.Lock()
		logs := h.logs.String()
		h.mu.Unlock()
		if strings.Contains(logs, "signal_replaced") || strings.Contains(logs, "durable signal replaced") {
			t.Errorf("a refused --replace was logged as done:\n%s", logs)
		}
	})
}
