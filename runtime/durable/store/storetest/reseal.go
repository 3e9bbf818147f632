package storetest

import (
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, resealCases...) }

// resealCases: store.Resealer, what re-encryption reads and rewrites.
var resealCases = []storeCase{
	{"PayloadsAreReadAndSwappedInPlace", func(f *fixture) {
		for _, id := range []string{"a", "b", "c"} {
			f.insert(id, "w", 1, T0)
		}
		fence := store.Fence{RunID: "a", Token: "A"}
		f.ok("PutSignal", errOf(f.s.PutSignal(f.ctx, "a", "go", `"signal"`, "", T0)))
		f.claim(T0, "A", "a")
		f.ok("AppendEntry", f.s.AppendEntry(f.ctx, f.d, fence, store.JournalEntry{Seq: 1, StepID: "s1", Kind: store.KindStep, Result: `"step"`}, T0))
		f.ok("PutEvent", f.s.PutEvent(f.ctx, f.d, "a", "k", `"event"`, T0))
		f.ok("Complete", f.s.Complete(f.ctx, fence, nil, `"out"`, T0))
		_, err := f.s.PutSchedule(f.ctx, store.Schedule{ID: "nightly", Workflow: "w", Version: 1, Cron: "@daily", Input: `"sched"`}, T0,
			func(t time.Time) time.Time { return t.Add(24 * time.Hour) })
		f.ok("PutSchedule", err)

		ids, err := f.s.RunsAfter(f.ctx, "", 2)
		f.ok("RunsAfter", err)
		more, err := f.s.RunsAfter(f.ctx, "b", 2)
		f.ok("RunsAfter", err)
		if !slices.Equal(ids, []string{"a", "b"}) || !slices.Equal(more, []string{"c"}) {
			f.t.Fatalf("RunsAfter pages = %v then %v, want [a b] then [c]", ids, more)
		}

		got, err := f.s.Payloads(f.ctx, []string{"a", "missing"})
		f.ok("Payloads", err)
		slices.SortFunc(got, func(x, y store.Payload) int { return strings.Compare(string(x.Place), string(y.Place)) })
		want := []store.Payload{
			{Place: store.PlaceEvent, RunID: "a", Key: "k", Text: `"event"`},
			{Place: store.PlaceInput, RunID: "a", Text: `{"id":"a"}`},
			{Place: store.PlaceJournal, RunID: "a", Key: "s1", Text: `"step"`},
			{Place: store.PlaceOutput, RunID: "a", Text: `"out"`},
			{Place: store.PlaceSignal, RunID: "a", Key: "go", Text: `"signal"`},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			f.t.Fatalf("Payloads (-want +got):\n%s", diff)
		}

		// Each swap replaces its payload; one whose text changed since it
		// was read (a stale Old) changes nothing.
		swaps := make([]store.Swap, 0, len(got)+2)
		for _, p := range got {
			swaps = append(swaps, store.Swap{Payload: p, New: `"new ` + string(p.Place) + `"`})
		}
		swaps = append(swaps,
			store.Swap{Payload: store.Payload{Place: store.PlaceSchedule, RunID: "nightly", Text: `"sched"`}, New: `"new schedule"`},
			store.Swap{Payload: store.Payload{Place: store.PlaceInput, RunID: "b", Text: `"stale"`}, New: `"lost"`})
		n, err := f.s.SwapPayloads(f.ctx, swaps)
		f.ok("SwapPayloads", err)
		if n != int64(len(got)+1) {
			f.t.Errorf("SwapPayloads changed %d, want %d (the stale swap changes nothing)", n, len(got)+1)
		}
		again, err := f.s.Payloads(f.ctx, []string{"a", "b"})
		f.ok("Payloads", err)
		for _, p := range again {
			want := `"new ` + string(p.Place) + `"`
			if p.RunID == "b" {
				want = `{"id":"b"}`
			}
			if p.Text != want {
				f.t.Errorf("%s of %s after the swaps: %s, want %s", p.Place, p.RunID, p.Text, want)
			}
		}
		scheds, err := f.s.ListSchedules(f.ctx)
		f.ok("ListSchedules", err)
		if len(scheds) != 1 || scheds[0].Input != `"new schedule"` {
			f.t.Errorf("schedule after its swap: %+v", scheds)
		}
	}},
}
