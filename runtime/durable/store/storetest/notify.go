package storetest

import (
	"errors"
	"time"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, notifyCases...) }

// heard collects what a watch hears (its fn must not block: the buffer is
// large).
type heard chan store.Notice

func (h heard) fn(n store.Notice) { h <- n }

// next waits for the next notice naming a run (Missed and Err are skipped:
// a reconnect may come at any time) and returns its run id.
func (f *fixture) next(h heard, what string) string {
	f.t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case n := <-h:
			if n.RunID != "" {
				return n.RunID
			}
		case <-timeout:
			f.t.Fatalf("heard nothing of %s within 30s", what)
		}
	}
}

// watchDone watches run id's finish.
func (f *fixture) watchDone(id string) (heard, store.Watch) {
	f.t.Helper()
	h := make(heard, 64)
	w, err := f.s.WatchDone(f.ctx, id, h.fn)
	if errors.Is(err, store.ErrNoNotifications) {
		f.t.Skip("this database cannot notify (a transaction pooler): waiters poll")
	}
	f.ok("WatchDone("+id+")", err)
	f.t.Cleanup(w.Stop)
	return h, w
}

// notifyCases pin store.Notifier: a watch is in effect when it returns (a
// change committed right after it is heard, with no read in between), it
// hears its own run only and nothing after Stop; every way a run finishes
// (complete, die, cancel) is announced.
var notifyCases = []storeCase{
	{"WatchDoneHearsEveryFinishOfItsRunOnly", func(f *fixture) {
		for _, id := range []string{"done", "dead", "cancelled", "stopped", "later", "untouched"} {
			f.insert(id, "w", 1, T0)
		}
		done, _ := f.watchDone("done")
		dead, _ := f.watchDone("dead")
		cancelled, _ := f.watchDone("cancelled")
		stopped, w := f.watchDone("stopped")
		untouched, _ := f.watchDone("untouched")
		w.Stop()
		w.Stop() // stopping twice is harmless
		f.claim(T0, "A", "done")
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "done", Token: "A"}, nil, `"ok"`, T0))
		if got := f.next(done, "the completed run"); got != "done" {
			f.t.Errorf("the watch of run done heard %q", got)
		}
		f.claim(T0, "B", "dead")
		f.ok("Fail dead", f.s.Fail(f.ctx, store.Fence{RunID: "dead", Token: "B"}, "boom", "", 0, true, T0))
		if got := f.next(dead, "the dead run"); got != "dead" {
			f.t.Errorf("the watch of run dead heard %q", got)
		}
		for _, id := range []string{"stopped", "cancelled"} {
			if ok, err := f.s.CancelRun(f.ctx, id, T0); err != nil || !ok {
				f.t.Fatalf("CancelRun(%s) = %v, %v", id, ok, err)
			}
		}
		// Notices arrive in commit order: once cancelled's is heard, one
		// for the stopped watch would have come before it.
		if got := f.next(cancelled, "the cancelled run"); got != "cancelled" {
			f.t.Errorf("the watch of run cancelled heard %q", got)
		}
		for name, h := range map[string]heard{"stopped": stopped, "untouched": untouched, "done": done, "dead": dead} {
			for len(h) > 0 {
				if n := <-h; n.RunID != "" {
					f.t.Errorf("the watch of run %s heard %+v after its own (or after Stop)", name, n)
				}
			}
		}
	}},
	{"WatchHintsHearsRunsFallingDue", func(f *fixture) {
		h := make(heard, 64)
		w, err := f.s.WatchHints(f.ctx, "", h.fn)
		if errors.Is(err, store.ErrNoNotifications) {
			f.t.Skip("this store has no hints here: its workers poll on their tick")
		}
		f.ok("WatchHints", err)
		defer w.Stop()
		f.insert("started", "w", 1, T0)
		if got := f.next(h, "the started run"); got != "started" {
			f.t.Errorf("the hint watch heard %q, want started", got)
		}
		// A claim sends no hint; the next one is the signal's wake-up.
		f.claim(T0, "A", "started")
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "started", Token: "A"}, time.Time{}, "go", T0))
		if _, err := f.s.PutSignal(f.ctx, "started", "go", `{}`, "", T0); err != nil {
			f.t.Fatal(err)
		}
		if got := f.next(h, "the signalled run"); got != "started" {
			f.t.Errorf("the hint watch heard %q, want started (its signal)", got)
		}
	}},
}
