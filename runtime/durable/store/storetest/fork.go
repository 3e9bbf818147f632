package storetest

import (
	"errors"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, forkCases...) }

// history makes run "r" done with the journal a, signal:go, event:k, b
// (the cut of the cases), signal:late, event:j; its mailbox holds go and
// late (consumed) and unused; its events are k and j. It returns the cut
// before b.
func (f *fixture) history() store.Cut {
	f.t.Helper()
	f.insert("r", "w", 1, T0)
	for _, s := range []string{"go", "late", "unused"} {
		_, err := f.s.PutSignal(f.ctx, "r", s, `"`+s+`"`, "", T0)
		f.ok("PutSignal", err)
	}
	f.claim(T0, "A", "r")
	fence := store.Fence{RunID: "r", Token: "A"}
	at := T0
	step := func(seq int, id, result string) {
		at = at.Add(time.Second)
		f.ok("AppendEntry "+id, f.s.AppendEntry(f.ctx, f.d, fence, store.JournalEntry{Seq: seq, StepID: id, Kind: store.KindStep, Result: result, CreatedAt: at}, at))
	}
	signal := func(seq int, name string) {
		at = at.Add(time.Second)
		found, err := f.s.ConsumeSignal(f.ctx, fence, name, store.JournalEntry{Seq: seq, StepID: "signal:" + name, Kind: store.KindSignal, Result: `"` + name + `"`, CreatedAt: at},
			func(p, _ string) (string, error) { return p, nil }, at)
		if err != nil || !found {
			f.t.Fatalf("ConsumeSignal(%s) = %v, %v", name, found, err)
		}
	}
	step(1, "a", `"1"`)
	signal(2, "go")
	step(3, "event:k", `[]`)
	f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "r", "k", `"before"`, at))
	step(4, "b", `"2"`)
	signal(5, "late")
	step(6, "event:j", `[]`)
	f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "r", "j", `"after"`, at))
	f.ok("Complete", f.s.Complete(f.ctx, fence, nil, `"out"`, at))
	return store.Cut{RunID: "r", Seq: 4, Step: "b", Consumed: []string{"go"}, Events: []string{"k"}}
}

// events reads run id's events of keys, key → value.
func (f *fixture) events(id string, keys ...string) map[string]string {
	f.t.Helper()
	out := map[string]string{}
	for _, k := range keys {
		v, found, err := f.s.GetEvent(f.ctx, id, k)
		f.ok("GetEvent", err)
		if found {
			out[k] = v
		}
	}
	return out
}

// cutMailbox is the mailbox of history's run at its cut: go consumed, the
// others not.
var cutMailbox = map[string]store.SignalInfo{
	"go":     {Name: "go", Payload: `"go"`, Delivered: true},
	"late":   {Name: "late", Payload: `"late"`},
	"unused": {Name: "unused", Payload: `"unused"`},
}

var forkCases = []storeCase{
	{"ForkCopiesTheHistoryBeforeTheCut", func(f *fixture) {
		cut := f.history()
		before, box := f.journal("r"), f.mailbox("r")
		t1 := T0.Add(time.Minute)
		child, err := f.s.ForkRun(f.ctx, store.Fork{Cut: cut, NewID: "f"}, t1)
		if err != nil || child != "" {
			f.t.Fatalf("ForkRun = %q, %v", child, err)
		}
		r := f.run("f")
		if r.Status != store.StatusWaiting || !r.WakeAt.Equal(t1) || r.Input != f.run("r").Input || r.Workflow != "w" ||
			r.ForkedFrom != "r" || r.ForkStep != "b" || r.Output != "" || r.ParentID != "" {
			f.t.Errorf("fork: %+v; want waiting, due at %v, r's input, forked from r at b", r, t1)
		}
		if diff := cmp.Diff(before[:3], f.journal("f")); diff != "" {
			f.t.Errorf("fork's journal is not the original's before the cut, byte for byte (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(cutMailbox, f.mailbox("f")); diff != "" {
			f.t.Errorf("fork's mailbox (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(map[string]string{"k": `"before"`}, f.events("f", "k", "j")); diff != "" {
			f.t.Errorf("fork's events (-want +got):\n%s", diff)
		}
		if o := f.run("r"); o.Status != store.StatusDone || o.Output != `"out"` || o.ForkedFrom != "" ||
			!cmp.Equal(before, f.journal("r")) || !cmp.Equal(box, f.mailbox("r")) {
			f.t.Errorf("the original changed: %+v", o)
		}
		for _, id := range []string{"f", "r"} {
			if _, err := f.s.ForkRun(f.ctx, store.Fork{Cut: cut, NewID: id}, t1); !errors.Is(err, store.ErrRunExists) {
				f.t.Errorf("ForkRun as existing %q = %v, want ErrRunExists", id, err)
			}
		}
		if got := len(f.journal("f")); got != 3 {
			f.t.Errorf("a refused fork changed the fork's journal: %d entries", got)
		}
	}},
	{"ForkSetsTheResultAtTheCut", func(f *fixture) {
		cut := f.history()
		set := store.JournalEntry{Seq: 4, StepID: "b", Kind: store.KindStep, Result: `"what if"`}
		_, err := f.s.ForkRun(f.ctx, store.Fork{Cut: cut, NewID: "g", Set: &set}, T0.Add(time.Minute))
		f.ok("ForkRun", err)
		want := append(f.journal("r")[:3], store.JournalEntry{Seq: 4, StepID: "b", Kind: store.KindStep, Result: `"what if"`, CreatedAt: T0.Add(time.Minute)})
		if diff := cmp.Diff(want, f.journal("g")); diff != "" {
			f.t.Errorf("journal of a fork with a set result (-want +got):\n%s", diff)
		}
	}},
	{"ForkLinksFinishedChildrenAndRefusesUnfinishedOnes", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		_, err := f.s.InsertChildren(f.ctx, f.d, "p", "", "w", 1, []store.NewChild{{ID: "p/b", Input: `{"k":"b"}`}}, T0.Add(10*time.Second))
		f.ok("InsertChildren", err)
		at := T0.Add(2 * time.Second)
		f.claim(at, "Ca", "p/a")
		f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "p/a", Token: "Ca"}, store.JournalEntry{Seq: 1, StepID: "x", Kind: store.KindStep, Result: `"x"`, CreatedAt: at}, at))
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "p/a", Token: "Ca"}, nil, `"out-a"`, at))
		for i, id := range []string{"child:a", "child:b", "c"} {
			f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, fence, store.JournalEntry{Seq: i + 1, StepID: id, Kind: store.KindStep, Result: `1`, CreatedAt: at}, at))
		}
		t1 := T0.Add(time.Minute)
		child, err := f.s.ForkRun(f.ctx, store.Fork{Cut: store.Cut{RunID: "p", Seq: 3, Step: "c", Children: []string{"p/a", "p/b"}}, NewID: "q2"}, t1)
		if err != nil || child != "p/b" {
			f.t.Fatalf("ForkRun past an unfinished child = %q, %v; want the child p/b named", child, err)
		}
		if _, err := f.s.ReadRun(f.ctx, "q2"); err != store.ErrRunNotFound {
			f.t.Errorf("a refused fork left run q2: %v", err)
		}
		child, err = f.s.ForkRun(f.ctx, store.Fork{Cut: store.Cut{RunID: "p", Seq: 2, Step: "child:b", Children: []string{"p/a"}}, NewID: "q"}, t1)
		if err != nil || child != "" {
			f.t.Fatalf("ForkRun = %q, %v", child, err)
		}
		c := f.run("q/a")
		if c.Status != store.StatusDone || c.Output != `"out-a"` || c.ParentID != "q" || c.ForkedFrom != "p/a" || c.ForkStep != "" {
			f.t.Errorf("the fork's copy of child p/a: %+v; want done with its output, child of q, forked from p/a", c)
		}
		if diff := cmp.Diff(f.journal("p/a"), f.journal("q/a")); diff != "" {
			f.t.Errorf("the copied child's journal (-want +got):\n%s", diff)
		}
		if _, err := f.s.ReadRun(f.ctx, "q/b"); err != store.ErrRunNotFound {
			f.t.Errorf("the child started at the cut was copied: %v", err)
		}
	}},
	{"RewindCutsTheRunInPlace", func(f *fixture) {
		cut := f.history()
		before := f.journal("r")
		t1 := T0.Add(time.Minute)
		ok, child, err := f.s.RewindRun(f.ctx, cut, t1)
		if err != nil || !ok || child != "" {
			f.t.Fatalf("RewindRun = %v, %q, %v", ok, child, err)
		}
		r := f.step(store.OpRewind, "r", store.StatusDone, store.StatusWaiting)
		if !r.WakeAt.Equal(t1) || r.Output != "" || r.Attempts != 0 || r.LastError != "" || r.ClaimedBy != "" && !r.ClaimedAt.IsZero() {
			f.t.Errorf("rewound run: %+v; want due at %v with no output", r, t1)
		}
		if diff := cmp.Diff(before[:3], f.journal("r")); diff != "" {
			f.t.Errorf("rewound journal (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(cutMailbox, f.mailbox("r")); diff != "" {
			f.t.Errorf("rewound mailbox (-want +got):\n%s", diff)
		}
		box, err := f.s.ListSignals(f.ctx, "r")
		f.ok("ListSignals", err)
		if names := []string{box[0].Name, box[1].Name, box[2].Name}; !cmp.Equal(names, []string{"go", "late", "unused"}) {
			f.t.Errorf("mailbox order after a rewind: %v", names)
		}
		if diff := cmp.Diff(map[string]string{"k": `"before"`}, f.events("r", "k", "j")); diff != "" {
			f.t.Errorf("rewound events (-want +got):\n%s", diff)
		}
		c := f.claim(t1, "B", "r")
		if len(c.Journal) != 3 && c.JournalRead {
			f.t.Errorf("the claim after a rewind read %d entries", len(c.Journal))
		}
		if ok, _, err := f.s.RewindRun(f.ctx, cut, t1); err != nil || ok {
			f.t.Errorf("RewindRun of a running run = %v, %v; want refused", ok, err)
		}
		f.insert("w1", "w", 1, t1)
		if ok, _, err := f.s.RewindRun(f.ctx, store.Cut{RunID: "w1", Seq: 1}, t1); err != nil || ok {
			f.t.Errorf("RewindRun of a waiting run = %v, %v; want refused", ok, err)
		}
		if ok, _, err := f.s.RewindRun(f.ctx, store.Cut{RunID: "nope", Seq: 1}, t1); err != nil || ok {
			f.t.Errorf("RewindRun of an unknown run = %v, %v; want refused", ok, err)
		}
	}},
	{"RewindRefusesUnfinishedChildrenAfterTheCut", func(f *fixture) {
		fence := f.parentWithChildren("", "a")
		at := T0.Add(2 * time.Second)
		for i, id := range []string{"x", "child:a"} {
			f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, fence, store.JournalEntry{Seq: i + 1, StepID: id, Kind: store.KindStep, Result: `1`, CreatedAt: at}, at))
		}
		f.ok("Complete", f.s.Complete(f.ctx, fence, nil, `"p"`, at))
		cut := store.Cut{RunID: "p", Seq: 2, Step: "child:a"}
		ok, child, err := f.s.RewindRun(f.ctx, cut, at)
		if err != nil || ok || child != "p/a" {
			f.t.Fatalf("RewindRun past an unfinished child = %v, %q, %v; want the child p/a named", ok, child, err)
		}
		if r := f.run("p"); r.Status != store.StatusDone || len(f.journal("p")) != 2 {
			f.t.Errorf("a refused rewind changed the run: %s, %d entries", r.Status, len(f.journal("p")))
		}
		f.finish("p/a", at, false)
		if ok, child, err := f.s.RewindRun(f.ctx, cut, at); err != nil || !ok || child != "" {
			f.t.Errorf("RewindRun once the child finished = %v, %q, %v", ok, child, err)
		}
		if got := f.run("p/a"); got.Status != store.StatusDone {
			f.t.Errorf("the finished child after a rewind: %s, want kept done", got.Status)
		}
	}},
	{"RewindRefusesACompactedRun", func(f *fixture) {
		cut := f.history()
		_, _, err := f.s.CompactRun(f.ctx, "r", T0.Add(time.Hour))
		f.ok("CompactRun", err)
		if ok, _, err := f.s.RewindRun(f.ctx, cut, T0.Add(time.Hour)); err != nil || ok {
			f.t.Errorf("RewindRun of a compacted run = %v, %v; want refused", ok, err)
		}
	}},
}
