package durable

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Namespaces (Options.Namespace) happen here, at the seam between the
// engine and its store, below the sealing of payloads (sealed.go): the
// namespacedStore prefixes every run id, workflow name, schedule id and
// snapshot id that enters the store with its namespace and
// store.NamespaceSep, and strips the prefix from every one that comes back.
// What is keyed by a run id (journal, signals, events, history, children)
// or by a workflow name (claims, limits, schedules' runs) is then scoped by
// itself: a worker claims by workflow name, so it never claims another
// namespace's run. Listings, search, stats, the due backlog, orphan signals
// and bulk actions filter by store.Scope. The default namespace has no
// prefix: a database written before namespaces holds exactly it.
//
// What stays database-wide: the deadline sweep, retention (its turn, the
// compaction of finished runs and the expiry of orphan signals) and the
// wake-up hints a worker hears; they are the cluster's work, done once for
// every namespace.

// DefaultNamespace is the namespace of an engine whose Options.Namespace is
// empty, and of every run written before namespaces.
const DefaultNamespace = "default"

// NamespaceEnv is the environment variable `sky` reads Options.Namespace
// from.
const NamespaceEnv = "SKY_DURABLE_NAMESPACE"

// namespacePattern is what a namespace name may be: short, lower case, as
// DNS labels and Kubernetes namespaces are, so it reads the same in a URL,
// a shell and a log.
var namespacePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// CheckNamespace refuses a namespace name that is not 1 to 63 characters of
// a-z, 0-9, '.', '_' and '-', starting with a letter or digit ("" is the
// default namespace).
func CheckNamespace(name string) error {
	if name == "" || namespacePattern.MatchString(name) {
		return nil
	}
	return task.Errorf(task.InvalidInput,
		"durable: the namespace %q is not a valid name; hint: 1 to 63 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit, e.g. \"billing\" or \"tenant-42\"", name)
}

// namespacedStore is a store.Store that scopes everything to one namespace.
// It embeds no store, so the compiler checks that every method is here.
type namespacedStore struct {
	s store.Store
	// p is the prefix of the namespace's ids: its name and
	// store.NamespaceSep, "" for the default namespace.
	p string
}

// newNamespacedStore scopes s to namespace name ("" or DefaultNamespace:
// the default one).
func newNamespacedStore(s store.Store, name string) *namespacedStore {
	n := &namespacedStore{s: s}
	if name != "" && name != DefaultNamespace {
		n.p = name + store.NamespaceSep
	}
	return n
}

// in is the stored form of id. In the default namespace an id holding the
// separator (another namespace's, which the engine's validation refuses
// to store) becomes one no run has: no namespace name is empty. So does an
// id no store can hold as text (a NUL, bytes that are not UTF-8: the
// validation refuses to store it, and PostgreSQL refuses it as a
// parameter), so looking it up finds nothing on both stores instead of
// failing with PostgreSQL's driver error (TestUnstorableLookupsAnswerAlike).
func (n *namespacedStore) in(id string) string {
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return store.NamespaceSep + storableText(id)
	}
	if n.p == "" {
		if strings.Contains(id, store.NamespaceSep) {
			return store.NamespaceSep + id
		}
		return id
	}
	return n.p + id
}

// opt is in for an optional id: "" stays "".
func (n *namespacedStore) opt(id string) string {
	if id == "" {
		return ""
	}
	return n.in(id)
}

// out is the engine's form of a stored id of the namespace.
func (n *namespacedStore) out(id string) string { return strings.TrimPrefix(id, n.p) }

// text strips the prefix from free text the store wrote ids into (a
// waiting marker, an error, a history detail), as it is or quoted (%q
// writes the separator \x1f).
func (n *namespacedStore) text(s string) string {
	if n.p == "" {
		return s
	}
	quoted := strings.TrimSuffix(n.p, store.NamespaceSep) + `\x1f`
	return strings.NewReplacer(n.p, "", quoted, "").Replace(s)
}

// mine reports whether stored id (or workflow name) is the namespace's.
func (n *namespacedStore) mine(id string) bool {
	if n.p == "" {
		return !strings.Contains(id, store.NamespaceSep)
	}
	return strings.HasPrefix(id, n.p)
}

// scope is the namespace's store.Scope.
func (n *namespacedStore) scope() store.Scope { return store.Scope{On: true, Prefix: n.p} }

// ownNamespace is the Scope the engine passes for its own namespace (the
// namespacedStore writes in its prefix); the zero Scope is every
// namespace's.
var ownNamespace = store.Scope{On: true}

// scopeOf is the store's scope for the engine's: its namespace's for
// ownNamespace, the zero Scope (all) as it is.
func (n *namespacedStore) scopeOf(s store.Scope) store.Scope {
	if s.On {
		return n.scope()
	}
	return s
}

func (n *namespacedStore) ins(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = n.in(id)
	}
	return out
}

func (n *namespacedStore) keys(keys []store.VersionKey) []store.VersionKey {
	out := make([]store.VersionKey, len(keys))
	for i, k := range keys {
		out[i] = store.VersionKey{Name: n.in(k.Name), Version: k.Version}
	}
	return out
}

func (n *namespacedStore) fence(f store.Fence) store.Fence {
	return store.Fence{RunID: n.in(f.RunID), Token: f.Token}
}

func (n *namespacedStore) claimed(c store.Claimed) store.Claimed {
	c.ID, c.Workflow, c.LastError = n.out(c.ID), n.out(c.Workflow), n.text(c.LastError)
	return c
}

func (n *namespacedStore) run(r store.Run) store.Run {
	r.ID, r.Workflow, r.ParentID, r.ForkedFrom = n.out(r.ID), n.out(r.Workflow), n.out(r.ParentID), n.out(r.ForkedFrom)
	r.WaitingSignal, r.LastError = n.text(r.WaitingSignal), n.text(r.LastError)
	return r
}

func (n *namespacedStore) schedule(s store.Schedule) store.Schedule {
	s.ID, s.Workflow, s.LastRunID = n.out(s.ID), n.out(s.Workflow), n.out(s.LastRunID)
	return s
}

func (n *namespacedStore) Setup(ctx context.Context) error { return n.s.Setup(ctx) }

func (n *namespacedStore) SchemaVersion(ctx context.Context) (int, int, error) {
	return n.s.SchemaVersion(ctx)
}

func (n *namespacedStore) DatabaseClock() bool { return n.s.DatabaseClock() }

func (n *namespacedStore) InsertRun(ctx context.Context, r store.NewRun, now time.Time) (bool, string, error) {
	r.ID, r.Workflow = n.in(r.ID), n.in(r.Workflow)
	ok, existing, err := n.s.InsertRun(ctx, r, now)
	return ok, n.out(existing), err
}

func (n *namespacedStore) InsertClaimedRun(ctx context.Context, r store.NewRun, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, string, error) {
	r.ID, r.Workflow = n.in(r.ID), n.in(r.Workflow)
	c, ok, existing, err := n.s.InsertClaimedRun(ctx, r, now, lease, token, worker)
	return n.claimed(c), ok, n.out(existing), err
}

func (n *namespacedStore) ClaimRun(ctx context.Context, names []string, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	c, ok, err := n.s.ClaimRun(ctx, n.ins(names), now, lease, token, worker)
	return n.claimed(c), ok, err
}

func (n *namespacedStore) ClaimPinned(ctx context.Context, keys []store.VersionKey, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	c, ok, err := n.s.ClaimPinned(ctx, n.keys(keys), now, lease, token, worker)
	return n.claimed(c), ok, err
}

func (n *namespacedStore) LoadJournal(ctx context.Context, runID string) ([]store.JournalEntry, error) {
	return n.s.LoadJournal(ctx, n.in(runID))
}

func (n *namespacedStore) AppendEntry(ctx context.Context, q *db.DB, f store.Fence, e store.JournalEntry, now time.Time) error {
	return n.s.AppendEntry(ctx, q, n.fence(f), e, now)
}

func (n *namespacedStore) ConsumeSignal(ctx context.Context, f store.Fence, name string, e store.JournalEntry, accept func(payload, traceContext string) (string, error), now time.Time) (bool, error) {
	return n.s.ConsumeSignal(ctx, n.fence(f), name, e, accept, now)
}

func (n *namespacedStore) Suspend(ctx context.Context, f store.Fence, wakeAt time.Time, signal string, now time.Time) error {
	return n.s.Suspend(ctx, n.fence(f), wakeAt, signal, now)
}

func (n *namespacedStore) Complete(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	return n.s.Complete(ctx, n.fence(f), last, output, now)
}

func (n *namespacedStore) CompleteAndClaim(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time, next store.NextClaim) (store.Claimed, bool, error, error) {
	next.Names, next.Keys = n.ins(next.Names), n.keys(next.Keys)
	c, ok, done, err := n.s.CompleteAndClaim(ctx, n.fence(f), last, output, now, next)
	return n.claimed(c), ok, done, err
}

func (n *namespacedStore) Fail(ctx context.Context, f store.Fence, lastError, step string, backoff time.Duration, dead bool, now time.Time) error {
	return n.s.Fail(ctx, n.fence(f), lastError, step, backoff, dead, now)
}

func (n *namespacedStore) Release(ctx context.Context, f store.Fence, now time.Time) error {
	return n.s.Release(ctx, n.fence(f), now)
}

func (n *namespacedStore) RenewLease(ctx context.Context, f store.Fence, lease time.Duration, now time.Time) error {
	return n.s.RenewLease(ctx, n.fence(f), lease, now)
}

func (n *namespacedStore) ReleaseRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	return n.s.ReleaseRun(ctx, n.in(runID), now)
}

func (n *namespacedStore) Probe(ctx context.Context, workflows []string, now time.Time, horizon time.Duration) (store.Probe, error) {
	return n.s.Probe(ctx, n.ins(workflows), now, horizon)
}

func (n *namespacedStore) TimeOutRuns(ctx context.Context, now time.Time, limit int) (int64, int64, error) {
	return n.s.TimeOutRuns(ctx, now, limit)
}

func (n *namespacedStore) PutSignal(ctx context.Context, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	return n.s.PutSignal(ctx, n.in(runID), name, payload, traceContext, now)
}

func (n *namespacedStore) ReplaceSignal(ctx context.Context, runID, name, payload string, now time.Time) (bool, error) {
	return n.s.ReplaceSignal(ctx, n.in(runID), name, payload, now)
}

func (n *namespacedStore) ListSignals(ctx context.Context, runID string) ([]store.SignalInfo, error) {
	return n.s.ListSignals(ctx, n.in(runID))
}

func (n *namespacedStore) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	r, err := n.s.ReadRun(ctx, n.in(runID))
	return n.run(r), err
}

// ListRuns lists the namespace's runs only: by workflow or parent (both
// prefixed), or filtered by the scope.
func (n *namespacedStore) ListRuns(ctx context.Context, f store.ListFilter) ([]store.Run, error) {
	f.Workflow, f.Parent = n.opt(f.Workflow), n.opt(f.Parent)
	if f.Before != nil {
		f.Before = &store.Cursor{CreatedAt: f.Before.CreatedAt, ID: n.in(f.Before.ID)}
	}
	if f.IDPrefix != "" {
		f.IDPrefix = n.in(f.IDPrefix)
	}
	if f.Workflow == "" && f.Parent == "" {
		f.Scope = n.scope()
	}
	runs, err := n.s.ListRuns(ctx, f)
	for i := range runs {
		runs[i] = n.run(runs[i])
	}
	return runs, err
}

func (n *namespacedStore) RetryRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	return n.s.RetryRun(ctx, n.in(runID), now)
}

func (n *namespacedStore) WakeRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	return n.s.WakeRun(ctx, n.in(runID), now)
}

func (n *namespacedStore) CancelRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	return n.s.CancelRun(ctx, n.in(runID), now)
}

func (n *namespacedStore) CompactRun(ctx context.Context, runID string, now time.Time) (bool, int64, error) {
	return n.s.CompactRun(ctx, n.in(runID), now)
}

// CompactBatch compacts the namespace's runs for ownNamespace (the
// operator's compaction), every namespace's for the zero Scope (retention).
func (n *namespacedStore) CompactBatch(ctx context.Context, olderThan time.Duration, limit int, from, now time.Time, scope store.Scope) (int64, int64, time.Time, error) {
	return n.s.CompactBatch(ctx, olderThan, limit, from, now, n.scopeOf(scope))
}

func (n *namespacedStore) TakeTurn(ctx context.Context, job string, every time.Duration, now time.Time) (bool, error) {
	return n.s.TakeTurn(ctx, job, every, now)
}

func (n *namespacedStore) IndexSearch(ctx context.Context, limit int) (int, error) {
	return n.s.IndexSearch(ctx, limit)
}

func (n *namespacedStore) ListOrphanSignals(ctx context.Context, limit int, scope store.Scope) ([]store.OrphanSignal, error) {
	list, err := n.s.ListOrphanSignals(ctx, limit, n.scopeOf(scope))
	for i := range list {
		list[i].RunID = n.out(list[i].RunID)
	}
	return list, err
}

func (n *namespacedStore) ExpireOrphanSignals(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, error) {
	return n.s.ExpireOrphanSignals(ctx, olderThan, limit, now)
}

// Stats are the namespace's: its workflows' counts, and the other figures
// on the scope.
func (n *namespacedStore) Stats(ctx context.Context, now time.Time, minutes int, lease time.Duration, _ store.Scope) (store.Stats, error) {
	st, err := n.s.Stats(ctx, now, minutes, lease, n.scope())
	st.Counts = slices.DeleteFunc(st.Counts, func(c store.StatusCount) bool { return !n.mine(c.Workflow) })
	for i := range st.Counts {
		st.Counts[i].Workflow = n.out(st.Counts[i].Workflow)
	}
	due := func(r *store.DueRun) { r.ID, r.Workflow = n.out(r.ID), n.out(r.Workflow) }
	if st.OldestDue != nil {
		due(st.OldestDue)
	}
	for i := range st.Stuck {
		due(&st.Stuck[i])
	}
	return st, err
}

func (n *namespacedStore) DueBacklog(ctx context.Context, now time.Time, scope store.Scope) (int64, error) {
	return n.s.DueBacklog(ctx, now, n.scopeOf(scope))
}

// WorkflowNames lists the namespace's workflow names.
func (n *namespacedStore) WorkflowNames(ctx context.Context) ([]string, error) {
	names, err := n.s.WorkflowNames(ctx)
	names = slices.DeleteFunc(names, func(w string) bool { return !n.mine(w) })
	for i := range names {
		names[i] = n.out(names[i])
	}
	return names, err
}

func (n *namespacedStore) SaveSnapshot(ctx context.Context, id string, seq int64, data string, now time.Time) (bool, error) {
	return n.s.SaveSnapshot(ctx, n.in(id), seq, data, now)
}

func (n *namespacedStore) LoadSnapshot(ctx context.Context, id string) (int64, string, bool, error) {
	return n.s.LoadSnapshot(ctx, n.in(id))
}

func (n *namespacedStore) InsertChildren(ctx context.Context, q *db.DB, parentID, group, workflow string, version int, children []store.NewChild, now time.Time) (int64, error) {
	scoped := make([]store.NewChild, len(children))
	for i, c := range children {
		c.ID = n.in(c.ID)
		scoped[i] = c
	}
	return n.s.InsertChildren(ctx, q, n.in(parentID), group, n.in(workflow), version, scoped, now)
}

func (n *namespacedStore) ReadChildren(ctx context.Context, ids []string) ([]store.ChildState, error) {
	states, err := n.s.ReadChildren(ctx, n.ins(ids))
	for i := range states {
		c := &states[i]
		c.ID, c.Workflow, c.ParentID, c.LastError = n.out(c.ID), n.out(c.Workflow), n.out(c.ParentID), n.text(c.LastError)
	}
	return states, err
}

func (n *namespacedStore) AwaitChildren(ctx context.Context, f store.Fence, w store.ChildWait, now time.Time) error {
	w.ChildID = n.opt(w.ChildID)
	return n.s.AwaitChildren(ctx, n.fence(f), w, now)
}

func (n *namespacedStore) PutEvent(ctx context.Context, q *db.DB, runID, key, value string, now time.Time) error {
	return n.s.PutEvent(ctx, q, n.in(runID), key, value, now)
}

func (n *namespacedStore) GetEvent(ctx context.Context, runID, key string) (string, bool, error) {
	return n.s.GetEvent(ctx, n.in(runID), key)
}

func (n *namespacedStore) cut(c store.Cut) store.Cut {
	c.RunID, c.Children = n.in(c.RunID), n.ins(c.Children)
	return c
}

func (n *namespacedStore) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	f.Cut, f.NewID = n.cut(f.Cut), n.in(f.NewID)
	child, err := n.s.ForkRun(ctx, f, now)
	return n.out(child), err
}

func (n *namespacedStore) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	ok, child, err := n.s.RewindRun(ctx, n.cut(c), now)
	return ok, n.out(child), err
}

func (n *namespacedStore) ReadHistory(ctx context.Context, runID string) ([]store.Event, error) {
	events, err := n.s.ReadHistory(ctx, n.in(runID))
	for i := range events {
		events[i].Detail = n.text(events[i].Detail)
	}
	return events, err
}

func (n *namespacedStore) DeclareLimits(ctx context.Context, l store.Limits, now time.Time) error {
	l.Workflow = n.in(l.Workflow)
	return n.s.DeclareLimits(ctx, l, now)
}

func (n *namespacedStore) ClaimLimited(ctx context.Context, c store.LimitedClaim, now time.Time) (store.Claimed, bool, time.Duration, error) {
	c.Names, c.Keys, c.Limited, c.Rated = n.ins(c.Names), n.keys(c.Keys), n.ins(c.Limited), n.ins(c.Rated)
	cl, ok, wait, err := n.s.ClaimLimited(ctx, c, now)
	return n.claimed(cl), ok, wait, err
}

func (n *namespacedStore) FlowStates(ctx context.Context, workflows []string, lease time.Duration, now time.Time) ([]store.FlowState, error) {
	states, err := n.s.FlowStates(ctx, n.ins(workflows), lease, now)
	for i := range states {
		states[i].Workflow = n.out(states[i].Workflow)
	}
	return states, err
}

func (n *namespacedStore) SaveRates(ctx context.Context, workflows []string) ([]store.RateState, error) {
	states, err := n.s.SaveRates(ctx, n.ins(workflows))
	for i := range states {
		states[i].Workflow = n.out(states[i].Workflow)
	}
	return states, err
}

func (n *namespacedStore) RestoreRates(ctx context.Context, states []store.RateState) error {
	in := make([]store.RateState, len(states))
	for i, r := range states {
		in[i] = store.RateState{Workflow: n.in(r.Workflow), State: r.State}
	}
	return n.s.RestoreRates(ctx, in)
}

func (n *namespacedStore) PutSchedule(ctx context.Context, s store.Schedule, now time.Time, next func(time.Time) time.Time) (store.Schedule, error) {
	s.ID, s.Workflow = n.in(s.ID), n.in(s.Workflow)
	out, err := n.s.PutSchedule(ctx, s, now, next)
	return n.schedule(out), err
}

func (n *namespacedStore) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	return n.s.DeleteSchedule(ctx, n.in(id))
}

// ListSchedules lists the namespace's schedules (the table is small: one
// row per schedule).
func (n *namespacedStore) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	list, err := n.s.ListSchedules(ctx)
	list = slices.DeleteFunc(list, func(s store.Schedule) bool { return !n.mine(s.ID) })
	for i := range list {
		list[i] = n.schedule(list[i])
	}
	return list, err
}

func (n *namespacedStore) FireSchedules(ctx context.Context, workflows []string, now time.Time, plan func(store.Schedule, time.Time) store.SchedulePlan) (int, error) {
	return n.s.FireSchedules(ctx, n.ins(workflows), now, func(s store.Schedule, at time.Time) store.SchedulePlan {
		return plan(n.schedule(s), at)
	})
}

func (n *namespacedStore) bulk(f store.BulkFilter) store.BulkFilter {
	f.Workflow, f.Parent, f.Scope = n.opt(f.Workflow), n.opt(f.Parent), n.scope()
	return f
}

func (n *namespacedStore) CountRuns(ctx context.Context, f store.BulkFilter) (int64, error) {
	return n.s.CountRuns(ctx, n.bulk(f))
}

func (n *namespacedStore) BulkAct(ctx context.Context, op store.Op, f store.BulkFilter, from store.Cursor, limit int, now time.Time) (store.BulkBatch, error) {
	if from.ID != "" {
		from.ID = n.in(from.ID)
	}
	b, err := n.s.BulkAct(ctx, op, n.bulk(f), from, limit, now)
	b.Last.ID = n.out(b.Last.ID)
	return b, err
}

// WatchDone watches the namespace's run.
func (n *namespacedStore) WatchDone(ctx context.Context, runID string, fn func(store.Notice)) (store.Watch, error) {
	return n.s.WatchDone(ctx, n.in(runID), func(no store.Notice) {
		no.RunID = n.out(no.RunID)
		fn(no)
	})
}

// WatchHints passes on the hints of the namespace's runs (and those naming
// no run); another namespace's are not this worker's work.
func (n *namespacedStore) WatchHints(ctx context.Context, url string, fn func(store.Notice)) (store.Watch, error) {
	return n.s.WatchHints(ctx, url, func(no store.Notice) {
		if no.RunID != "" {
			if !n.mine(no.RunID) {
				return
			}
			no.RunID = n.out(no.RunID)
		}
		fn(no)
	})
}

// RunsAfter lists the namespace's runs after after, in id order. It reads
// the primary key from after on and keeps the namespace's ids: another
// namespace's may sort among them (the default namespace's always may, and
// a collation other than C interleaves them all), so it reads on until it
// has limit or the table ends. Rekey, its one caller, is a batch job: a
// filter in the statement instead made PostgreSQL's planner expect no row
// to match and sort the whole table.
func (n *namespacedStore) RunsAfter(ctx context.Context, after string, limit int) ([]string, error) {
	var ids []string
	cursor := n.opt(after)
	for len(ids) < limit {
		batch, err := n.s.RunsAfter(ctx, cursor, limit)
		if err != nil {
			return nil, err
		}
		for _, id := range batch {
			if n.mine(id) && len(ids) < limit {
				ids = append(ids, n.out(id))
			}
		}
		if len(batch) < limit {
			break
		}
		cursor = batch[len(batch)-1]
	}
	return ids, nil
}

func (n *namespacedStore) Payloads(ctx context.Context, ids []string) ([]store.Payload, error) {
	list, err := n.s.Payloads(ctx, n.ins(ids))
	for i := range list {
		list[i].RunID, list[i].ForkedFrom = n.out(list[i].RunID), n.out(list[i].ForkedFrom)
	}
	return list, err
}

func (n *namespacedStore) SwapPayloads(ctx context.Context, swaps []store.Swap) (int64, error) {
	scoped := make([]store.Swap, len(swaps))
	for i, s := range swaps {
		s.RunID, s.ForkedFrom = n.in(s.RunID), n.opt(s.ForkedFrom)
		scoped[i] = s
	}
	return n.s.SwapPayloads(ctx, scoped)
}

// WorkflowNames lists the workflow names of the runs of the engine's
// namespace, sorted (one index probe per workflow name in the database,
// store.WorkflowNamesSQL): what a filter by workflow can match.
func (e *Engine) WorkflowNames(ctx context.Context) ([]string, error) {
	return e.scoped.WorkflowNames(ctx)
}

// Namespace is the engine's namespace (Options.Namespace).
func (e *Engine) Namespace() string { return e.namespace }

// Namespaces lists the namespaces that have runs in the database, sorted:
// every namespace's, whatever the engine's own (one index probe per
// workflow name, store.WorkflowNamesSQL).
func (e *Engine) Namespaces(ctx context.Context) ([]string, error) {
	names, err := e.scoped.s.WorkflowNames(ctx)
	if err != nil {
		return nil, err
	}
	return store.NamespacesOf(names, DefaultNamespace), nil
}
