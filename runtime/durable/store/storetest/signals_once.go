package storetest

import (
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, oneShotSignalCases...) }

// mailbox reads run id's mailbox as name → payload, delivered.
func (f *fixture) mailbox(id string) map[string]store.SignalInfo {
	f.t.Helper()
	box, err := f.s.ListSignals(f.ctx, id)
	f.ok("ListSignals", err)
	out := map[string]store.SignalInfo{}
	for _, s := range box {
		s.CreatedAt = time.Time{}
		out[s.Name] = s
	}
	return out
}

// consume consumes signal name of run id under token, as journal entry
// seq, and returns its payload ("" when none was found).
func (f *fixture) consume(id, token, name string, seq int, at time.Time) string {
	f.t.Helper()
	var seen string
	found, err := f.s.ConsumeSignal(f.ctx, store.Fence{RunID: id, Token: token}, name,
		store.JournalEntry{Seq: seq, StepID: name, Kind: store.KindSignal}, func(p, _ string) (string, error) { seen = p; return p, nil }, at)
	f.ok("ConsumeSignal", err)
	if !found {
		return ""
	}
	return seen
}

// oneShotSignalCases pin that a signal is one-shot per (run, name): the first
// delivery wins, and only ReplaceSignal changes an unconsumed payload.
var oneShotSignalCases = []storeCase{
	{"SignalFirstDeliveryWinsWhileUnconsumed", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", T0))
		t1 := T0.Add(time.Second)
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `"first"`, "", t1); err != nil || !stored {
			f.t.Fatalf("first PutSignal = %v, %v; want stored", stored, err)
		}
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `"second"`, "", t1.Add(time.Second)); err != nil || stored {
			f.t.Fatalf("repeated PutSignal = %v, %v; want ignored (not stored), no error", stored, err)
		}
		want := map[string]store.SignalInfo{"go": {Name: "go", Payload: `"first"`}}
		if diff := cmp.Diff(want, f.mailbox("r")); diff != "" {
			f.t.Errorf("mailbox after a repeat (-want +got):\n%s", diff)
		}
		f.claim(t1, "B", "r")
		if got := f.consume("r", "B", "go", 1, t1); got != `"first"` {
			f.t.Errorf("consumed payload = %q, want the first delivery's", got)
		}
	}},
	{"SignalRepeatAfterConsumptionIsIgnored", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "go", `1`, "", T0)))
		f.claim(T0, "A", "r")
		if got := f.consume("r", "A", "go", 1, T0); got != `1` {
			f.t.Fatalf("consumed %q, want 1", got)
		}
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", T0))
		t1 := T0.Add(time.Second)
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `2`, "", t1); err != nil || stored {
			f.t.Fatalf("PutSignal after consumption = %v, %v; want ignored, no error", stored, err)
		}
		want := map[string]store.SignalInfo{"go": {Name: "go", Payload: `1`, Delivered: true}}
		if diff := cmp.Diff(want, f.mailbox("r")); diff != "" {
			f.t.Errorf("mailbox (-want +got):\n%s", diff)
		}
		// The repeat did not wake the run parked on that name again.
		f.claim(t1, "B", "")
	}},
	{"SignalToAFinishedRunIsIgnored", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: "A"}, nil, `"out"`, T0))
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `1`, "", T0); err != nil || stored {
			f.t.Fatalf("PutSignal to a done run = %v, %v; want ignored, no error", stored, err)
		}
		if box := f.mailbox("r"); len(box) != 0 {
			f.t.Errorf("a done run's mailbox = %v, want empty", box)
		}
	}},
	{"ReplaceSignalCorrectsAnUnconsumedPayload", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.claim(T0, "A", "r")
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", T0))
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "go", `"wrong"`, "", T0)))
		t1 := T0.Add(time.Second)
		if replaced, err := f.s.ReplaceSignal(f.ctx, "r", "go", `"right"`, t1); err != nil || !replaced {
			f.t.Fatalf("ReplaceSignal = %v, %v; want replaced", replaced, err)
		}
		if replaced, err := f.s.ReplaceSignal(f.ctx, "r", "new", `3`, t1); err != nil || !replaced {
			f.t.Fatalf("ReplaceSignal of a signal never sent = %v, %v; want stored", replaced, err)
		}
		want := map[string]store.SignalInfo{"go": {Name: "go", Payload: `"right"`}, "new": {Name: "new", Payload: `3`}}
		if diff := cmp.Diff(want, f.mailbox("r")); diff != "" {
			f.t.Errorf("mailbox after replacing (-want +got):\n%s", diff)
		}
		f.claim(t1, "B", "r")
		if got := f.consume("r", "B", "go", 1, t1); got != `"right"` {
			f.t.Errorf("consumed payload = %q, want the replacement", got)
		}
	}},
	// An operator's --replace that reaches the store after the run
	// finished (the run was read live a moment before) changes nothing, as
	// PutSignal does: no orphan payload is rewritten and no new one stored.
	{"ReplaceSignalToAFinishedRunIsRefused", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "go", `"first"`, "", T0)))
		f.claim(T0, "A", "r")
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "r", Token: "A"}, nil, `"out"`, T0))
		t1 := T0.Add(time.Second)
		for _, name := range []string{"go", "never-sent"} {
			if replaced, err := f.s.ReplaceSignal(f.ctx, "r", name, `"late"`, t1); err != nil || replaced {
				f.t.Fatalf("ReplaceSignal %q of a done run = %v, %v; want refused (false), no error", name, replaced, err)
			}
		}
		want := map[string]store.SignalInfo{"go": {Name: "go", Payload: `"first"`}}
		if diff := cmp.Diff(want, f.mailbox("r")); diff != "" {
			f.t.Errorf("a done run's mailbox after --replace (-want +got):\n%s", diff)
		}
	}},
	{"ReplaceSignalAfterConsumptionIsRefused", func(f *fixture) {
		f.insert("r", "w", 1, T0)
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "r", "go", `1`, "", T0)))
		f.claim(T0, "A", "r")
		if got := f.consume("r", "A", "go", 1, T0); got != `1` {
			f.t.Fatalf("consumed %q, want 1", got)
		}
		if replaced, err := f.s.ReplaceSignal(f.ctx, "r", "go", `2`, T0.Add(time.Second)); err != nil || replaced {
			f.t.Fatalf("ReplaceSignal after consumption = %v, %v; want refused (false), no error", replaced, err)
		}
		want := map[string]store.SignalInfo{"go": {Name: "go", Payload: `1`, Delivered: true}}
		if diff := cmp.Diff(want, f.mailbox("r")); diff != "" {
			f.t.Errorf("mailbox (-want +got):\n%s", diff)
		}
		if j := f.journal("r"); len(j) != 1 || j[0].Result != `1` {
			f.t.Errorf("journal = %+v, want the consumed payload 1", j)
		}
	}},
}

// errOf keeps the error of a (value, error) pair.
func errOf[T any](_ T, err error) error { return err }
