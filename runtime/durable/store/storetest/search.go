package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

func init() { cases = append(cases, searchCases...) }

// search lists the ids of the runs ListRuns finds for filter.
func (f *fixture) search(filter store.ListFilter) []string {
	f.t.Helper()
	runs, err := f.s.ListRuns(f.ctx, filter)
	f.ok("ListRuns (search "+filter.Search+")", err)
	ids := []string{}
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	return ids
}

// searchCases pin ListFilter.Search: the same runs found on every store,
// from the finished runs' index and the unfinished runs alike.
var searchCases = []storeCase{
	{"SearchFindsRunsByIdInputOutputAndError", func(f *fixture) {
		at := func(s int) time.Time { return T0.Add(time.Duration(s) * time.Second) }
		// Inputs are {"id":"<id>"}; a done run's output is "ok".
		f.bulkRun("order-Alpha", "w", "", store.StatusDead, "Unavailable: Provider DOWN", at(1))
		f.bulkRun("order-beta", "w", "", store.StatusDone, "", at(2))
		f.bulkRun("ship-1", "ship", "", store.StatusFailed, "timeout from the carrier", at(3))
		f.bulkRun("ship-2", "ship", "", store.StatusWaiting, "", at(4))
		f.bulkRun("disc_50%off", "w", "", store.StatusDone, "", at(5))
		f.bulkRun("disc-50-off", "w", "", store.StatusRunning, "", at(6))
		cases := []struct {
			filter store.ListFilter
			want   []string
		}{
			// By id, on both parts, newest first, ignoring case.
			{store.ListFilter{Search: "ORDER-"}, []string{"order-beta", "order-Alpha"}},
			{store.ListFilter{Search: "disc"}, []string{"disc-50-off", "disc_50%off"}},
			// By last error: a dead run (indexed) and a failed one (not).
			{store.ListFilter{Search: "provider down"}, []string{"order-Alpha"}},
			{store.ListFilter{Search: "CARRIER"}, []string{"ship-1"}},
			// By input, a double quote in the text.
			{store.ListFilter{Search: `id":"ship`}, []string{"ship-2", "ship-1"}},
			// By output.
			{store.ListFilter{Search: `"ok"`}, []string{"disc_50%off", "order-beta"}},
			// LIKE's wildcards are plain characters.
			{store.ListFilter{Search: "c_50%"}, []string{"disc_50%off"}},
			{store.ListFilter{Search: "%%%"}, []string{}},
			{store.ListFilter{Search: "nothing like it"}, []string{}},
			// The other filters narrow the matches.
			{store.ListFilter{Search: "order", Status: store.StatusDead}, []string{"order-Alpha"}},
			{store.ListFilter{Search: "-50-", Status: store.StatusRunning}, []string{"disc-50-off"}},
			{store.ListFilter{Search: "order", Status: store.StatusWaiting}, []string{}},
			{store.ListFilter{Search: `{"id":"`, Workflow: "ship"}, []string{"ship-2", "ship-1"}},
			{store.ListFilter{Search: `{"id":"`, IDPrefix: "disc"}, []string{"disc-50-off", "disc_50%off"}},
		}
		// The same answers while the finished runs wait in the search
		// backlog (SQLite: tested row by row) and once they are indexed.
		for _, indexed := range []bool{false, true} {
			if indexed {
				f.indexSearch(3)
			}
			for _, c := range cases {
				c.filter.Limit = 10
				if got := f.search(c.filter); !cmp.Equal(got, c.want) {
					f.t.Errorf("indexed %v: search %+v = %q, want %q", indexed, c.filter, got, c.want)
				}
			}
			// Pages by keyset: every input holds {"id":", so every run matches.
			// With pages of 2, the newest finished runs hold a page's matches
			// (read row by row); with pages of 4, they do not (the index).
			for limit, want := range map[int][][]string{
				4: {{"disc-50-off", "disc_50%off", "ship-2", "ship-1"}, {"order-beta", "order-Alpha"}},
				2: {{"disc-50-off", "disc_50%off"}, {"ship-2", "ship-1"}, {"order-beta", "order-Alpha"}},
			} {
				pages := f.listPages(store.ListFilter{Search: `{"id":"`, Limit: limit})
				if diff := cmp.Diff(want, pages); diff != "" {
					f.t.Errorf("indexed %v: search pages of %d (-want +got):\n%s", indexed, limit, diff)
				}
			}
			if got := f.search(store.ListFilter{Search: `"ok"`, Limit: 1}); !cmp.Equal(got, []string{"disc_50%off"}) {
				f.t.Errorf("indexed %v: search \"ok\", a page of 1 = %q, want [disc_50%%off]", indexed, got)
			}
		}
		// A retried dead run leaves the finished runs' index and is found
		// among the unfinished ones, once; finishing again brings it back.
		if ok, err := f.s.RetryRun(f.ctx, "order-Alpha", at(7)); err != nil || !ok {
			f.t.Fatalf("RetryRun = %v, %v", ok, err)
		}
		if got := f.search(store.ListFilter{Search: "provider down", Limit: 10}); !cmp.Equal(got, []string{"order-Alpha"}) {
			f.t.Errorf("search after the retry = %q, want [order-Alpha]", got)
		}
		if got := f.search(store.ListFilter{Search: "Alpha", Status: store.StatusDead, Limit: 10}); len(got) != 0 {
			f.t.Errorf("search of the dead runs after the retry = %q, want none", got)
		}
		c, ok, err := f.s.ClaimRun(f.ctx, []string{"w"}, at(8), Lease, "again", "worker")
		if err != nil || !ok || c.ID != "order-Alpha" {
			f.t.Fatalf("ClaimRun = %q, %v, %v; want order-Alpha", c.ID, ok, err)
		}
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: "order-Alpha", Token: "again"}, nil, `"shipped at last"`, at(8)))
		for _, indexed := range []bool{false, true} {
			if indexed {
				f.indexSearch(1)
			}
			if got := f.search(store.ListFilter{Search: "AT LAST", Status: store.StatusDone, Limit: 10}); !cmp.Equal(got, []string{"order-Alpha"}) {
				f.t.Errorf("indexed %v: search of the done runs after it finished = %q, want [order-Alpha]", indexed, got)
			}
			if got := f.search(store.ListFilter{Search: "provider down", Limit: 10}); len(got) != 0 {
				f.t.Errorf("indexed %v: search of its old error after it finished = %q, want none", indexed, got)
			}
		}
	}},
	{"SearchRefusesTextNoStoreCanAnswer", func(f *fixture) {
		f.insert("abc", "w", 1, T0)
		for _, text := range []string{"ab", "é", "a\x00b", "ab\xff"} {
			_, err := f.s.ListRuns(f.ctx, store.ListFilter{Search: text, Limit: 10})
			if err == nil || task.As(err).Kind != task.InvalidInput {
				f.t.Errorf("search %q = %v; want an InvalidInput refusal", text, err)
			}
		}
		// Three characters, not three bytes: "日本語" is three.
		if got := f.search(store.ListFilter{Search: "日本語", Limit: 10}); len(got) != 0 {
			f.t.Errorf("search 日本語 = %q, want none", got)
		}
	}},
}

// indexSearch empties the search backlog with IndexSearch, two runs a
// call, and checks what the store says about it: a store with a backlog
// (SQLite) held the finished runs (want) since the last call, its probe
// said so and no longer does; a store without one (PostgreSQL) moves none
// and never says so.
func (f *fixture) indexSearch(want int) {
	f.t.Helper()
	probe := func() bool {
		p, err := f.s.Probe(f.ctx, []string{"w"}, T0, time.Minute)
		f.ok("Probe", err)
		return p.SearchBacklog
	}
	before := probe()
	moved := 0
	for {
		n, err := f.s.IndexSearch(f.ctx, 2)
		f.ok("IndexSearch", err)
		if n < 0 || n > 2 {
			f.t.Fatalf("IndexSearch(2) moved %d runs", n)
		}
		if moved += n; n < 2 {
			break
		}
	}
	if (moved != 0 && moved != want) || before != (moved > 0) {
		f.t.Errorf("IndexSearch moved %d runs (probe said backlog %v), want %d or none (and the probe to agree)", moved, before, want)
	}
	if probe() {
		f.t.Errorf("the probe still says backlog after IndexSearch moved every run")
	}
}

// CheckSearchMigrated checks that a migrated database searches the runs it
// held before: its finished run from the search index, its waiting one row
// by row (MigrationStep's data).
func CheckSearchMigrated(t *testing.T, s store.Store, _ *db.DB) {
	f := &fixture{t: t, ctx: t.Context(), s: s}
	for text, want := range map[string][]string{`"n":2`: {"finished"}, `"n":1`: {"old"}, `"OK"`: {"finished"}} {
		if got := f.search(store.ListFilter{Search: text, Limit: 10}); !cmp.Equal(got, want) {
			t.Errorf("search %s after migrating = %q, want %q", text, got, want)
		}
	}
}
