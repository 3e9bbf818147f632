package storetest

import (
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, namespaceCases...) }

// namespaceCases pin store.Scope: each statement that reads across runs
// keeps one namespace's rows (ids prefixed with the namespace and
// store.NamespaceSep; the default namespace's hold no separator) on every
// store, and the zero Scope keeps them all.
var namespaceCases = []storeCase{
	{"ScopesKeepOneNamespace", func(f *fixture) {
		const sep = store.NamespaceSep
		at := func(s int) time.Time { return T0.Add(time.Duration(s) * time.Second) }
		// "a_b" checks that '_' is no wildcard in a scope.
		f.bulkRun("r1", "w", "", store.StatusFailed, "provider exploded", at(1))
		f.bulkRun("a"+sep+"r1", "a"+sep+"w", "", store.StatusFailed, "provider exploded", at(2))
		f.bulkRun("a_b"+sep+"r1", "a_b"+sep+"w", "", store.StatusDead, "provider exploded", at(3))
		f.insert("a"+sep+"r2", "a"+sep+"w", 1, at(4))
		f.insert("r2", "w", 1, at(5))
		all, def := store.Scope{}, store.Scope{On: true}
		a, ab := store.Scope{On: true, Prefix: "a" + sep}, store.Scope{On: true, Prefix: "a_b" + sep}
		for _, c := range []struct {
			scope store.Scope
			want  []string
		}{
			{all, []string{"r2", "a" + sep + "r2", "a_b" + sep + "r1", "a" + sep + "r1", "r1"}},
			{def, []string{"r2", "r1"}},
			{a, []string{"a" + sep + "r2", "a" + sep + "r1"}},
			{ab, []string{"a_b" + sep + "r1"}},
		} {
			if got := f.search(store.ListFilter{Scope: c.scope, Limit: 10}); !slices.Equal(got, c.want) {
				f.t.Errorf("ListRuns(scope %q) = %q, want %q", c.scope.Prefix, got, c.want)
			}
			failed := slices.DeleteFunc(slices.Clone(c.want), func(id string) bool { return f.run(id).Status != store.StatusFailed })
			if got := f.search(store.ListFilter{Scope: c.scope, Status: store.StatusFailed, Limit: 10}); !slices.Equal(got, failed) {
				f.t.Errorf("ListRuns(failed, scope %q) = %q, want %q", c.scope.Prefix, got, failed)
			}
			if n, err := f.s.CountRuns(f.ctx, store.BulkFilter{Status: store.StatusFailed, Scope: c.scope}); err != nil || n != int64(len(failed)) {
				f.t.Errorf("CountRuns(failed, scope %q) = %d, %v; want %d", c.scope.Prefix, n, err, len(failed))
			}
			st, err := f.s.Stats(f.ctx, at(10), 60, Lease, c.scope)
			f.ok("Stats", err)
			started := 0
			for _, n := range st.Started {
				started += n
			}
			if started != len(c.want) {
				f.t.Errorf("Stats(scope %q) started %d, want %d", c.scope.Prefix, started, len(c.want))
			}
			var due []string
			for _, id := range c.want {
				if f.run(id).Status == store.StatusWaiting {
					due = append(due, id)
				}
			}
			if n, err := f.s.DueBacklog(f.ctx, at(10), c.scope); err != nil || n != int64(len(due)) {
				f.t.Errorf("DueBacklog(scope %q) = %d, %v; want %d", c.scope.Prefix, n, err, len(due))
			}
			oldest, want := "", "" // due is newest first
			if st.OldestDue != nil {
				oldest = st.OldestDue.ID
			}
			if len(due) > 0 {
				want = due[len(due)-1]
			}
			if oldest != want {
				f.t.Errorf("Stats(scope %q) oldest due %q, want %q", c.scope.Prefix, oldest, want)
			}
		}
		// A namespace's listing pages by keyset on its own index, and a
		// search keeps to it.
		first := f.search(store.ListFilter{Scope: a, Limit: 1})
		runs, err := f.s.ListRuns(f.ctx, store.ListFilter{Scope: a, Limit: 10, Before: &store.Cursor{CreatedAt: at(4), ID: first[0]}})
		if f.ok("ListRuns (page 2)", err); len(runs) != 1 || runs[0].ID != "a"+sep+"r1" {
			f.t.Errorf("scope a's second page = %v, want a's r1", runs)
		}
		for _, c := range []struct {
			scope store.Scope
			want  []string
		}{{def, []string{"r1"}}, {a, []string{"a" + sep + "r1"}}, {ab, []string{"a_b" + sep + "r1"}}} {
			if got := f.search(store.ListFilter{Scope: c.scope, Search: "provider exploded", Limit: 10}); !slices.Equal(got, c.want) {
				f.t.Errorf("search (scope %q) = %q, want %q", c.scope.Prefix, got, c.want)
			}
		}
		// Orphan signals: one to a default id, one to a's.
		for _, id := range []string{"nobody", "a" + sep + "nobody"} {
			if _, err := f.s.PutSignal(f.ctx, id, "go", `1`, "", at(6)); err != nil {
				f.t.Fatalf("PutSignal(%q): %v", id, err)
			}
		}
		for _, c := range []struct {
			scope store.Scope
			want  []string
		}{{all, []string{"nobody", "a" + sep + "nobody"}}, {def, []string{"nobody"}}, {a, []string{"a" + sep + "nobody"}}, {ab, nil}} {
			found, err := f.s.ListOrphanSignals(f.ctx, 10, c.scope)
			f.ok("ListOrphanSignals", err)
			var got []string
			for _, o := range found {
				got = append(got, o.RunID)
			}
			slices.Sort(got)
			slices.Sort(c.want)
			if !slices.Equal(got, c.want) {
				f.t.Errorf("ListOrphanSignals(scope %q) = %q, want %q", c.scope.Prefix, got, c.want)
			}
		}
		// Compaction: a's finished run only, then every namespace's.
		f.bulkRun("d", "v", "", store.StatusDone, "", at(7))
		f.bulkRun("a"+sep+"d", "a"+sep+"v", "", store.StatusDone, "", at(8))
		compacted := func() (ids []string) {
			for _, id := range []string{"d", "a" + sep + "d"} {
				if !f.run(id).CompactedAt.IsZero() {
					ids = append(ids, id)
				}
			}
			return ids
		}
		if runs, _, _, err := f.s.CompactBatch(f.ctx, 0, 10, time.Time{}, at(20), a); err != nil || runs != 1 || !slices.Equal(compacted(), []string{"a" + sep + "d"}) {
			f.t.Errorf("CompactBatch(scope a) = %d, %v; compacted %q, want a's run only", runs, err, compacted())
		}
		if runs, _, _, err := f.s.CompactBatch(f.ctx, 0, 10, time.Time{}, at(20), all); err != nil || runs != 1 || len(compacted()) != 2 {
			f.t.Errorf("CompactBatch(every scope) = %d, %v; compacted %q, want both", runs, err, compacted())
		}
		names, err := f.s.WorkflowNames(f.ctx)
		f.ok("WorkflowNames", err)
		slices.Sort(names)
		if want := []string{"a" + sep + "v", "a" + sep + "w", "a_b" + sep + "w", "v", "w"}; !slices.Equal(names, want) {
			f.t.Errorf("WorkflowNames = %q, want %q", names, want)
		}
	}},
}

// CheckNamespaceMigrated checks a migrated database's runs (the seed's
// "old" and "finished") are the default namespace's: its listing, on the
// namespace index, shows them, and another namespace's shows none.
func CheckNamespaceMigrated(t *testing.T, s store.Store, _ *db.DB) {
	f := &fixture{t: t, ctx: t.Context(), s: s}
	got := f.search(store.ListFilter{Scope: store.Scope{On: true}, Limit: 10})
	if slices.Sort(got); !slices.Equal(got, []string{"finished", "old"}) {
		t.Errorf("the default namespace's runs after migrating = %q, want [finished old]", got)
	}
	if got := f.search(store.ListFilter{Scope: store.Scope{On: true, Prefix: "other" + store.NamespaceSep}, Limit: 10}); len(got) != 0 {
		t.Errorf("namespace other's runs after migrating = %q, want none", got)
	}
}
