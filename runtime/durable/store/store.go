package store

import (
	"context"
	"time"

	"skydurable/runtime/db"
)

// Store is everything the engine asks of the database. Each dialect
// implements it in one package (store/postgres, store/sqlite) holding all of
// its SQL; engine logic never builds SQL. A zero now means "use the
// database's own clock" and is only ever passed to the PostgreSQL Store.
//
// Every write for a claimed run takes a fence (run id + lease token) and is
// guarded by it in the same statement or transaction; a write whose fence no
// longer matches reports ErrLeaseLost and changes nothing.
type Store interface {
	// Setup creates or migrates the tables, idempotently and safely when
	// several processes call it at once.
	Setup(ctx context.Context) error
	// SchemaVersion reads the database's schema version (0: no tables
	// this store made) and the newest this code knows, writing nothing.
	SchemaVersion(ctx context.Context) (current, latest int, err error)
	// DatabaseClock says a zero now makes every statement read the
	// database's clock, shared by all workers (PostgreSQL); otherwise the
	// engine must pass the time (SQLite: the local clock).
	DatabaseClock() bool
	// InsertRun inserts a new run; when the id exists it changes nothing
	// and reports the existing run's workflow name.
	InsertRun(ctx context.Context, r NewRun, now time.Time) (inserted bool, existingWorkflow string, err error)
	// InsertClaimedRun is InsertRun for a run its caller advances at once
	// (durable.RunNow), in one statement: a new id is inserted already
	// claimed, in the state ClaimRun leaves (running, attempt 1, leased
	// with token to worker until now + lease; a first claim, recorded in no
	// history, as ClaimRun's first is not), and c is what ClaimRun would
	// return for it (its journal read: empty). The insert commits
	// synchronously, as InsertRun's. An existing id changes nothing and
	// reports the existing run's workflow, as InsertRun. It takes no claim
	// and so honours no limit (a perKey key is stored, not queued
	// behind): the engine uses it only for workflows without limits.
	InsertClaimedRun(ctx context.Context, r NewRun, now time.Time, lease time.Duration, token, worker string) (c Claimed, inserted bool, existingWorkflow string, err error)
	// ClaimRun leases the most overdue claimable run whose workflow is in
	// names, counting an attempt. ok is false when none is due. It also
	// reads the run's journal in the same statement when it can prove the
	// read complete (c.JournalRead); otherwise the caller uses LoadJournal.
	ClaimRun(ctx context.Context, names []string, now time.Time, lease time.Duration, token, worker string) (c Claimed, ok bool, err error)
	// ClaimPinned is ClaimRun for runs whose (workflow, version) is in keys.
	ClaimPinned(ctx context.Context, keys []VersionKey, now time.Time, lease time.Duration, token, worker string) (c Claimed, ok bool, err error)
	// LoadJournal reads a run's whole journal in sequence order.
	LoadJournal(ctx context.Context, runID string) ([]JournalEntry, error)
	// AppendEntry journals one entry on q (the pool or a transaction)
	// and renews the lease, in one statement; a store opened with
	// Config.Beats may leave the lease to the heartbeats (SQLite does:
	// the renewal rewrote the run's row at every step).
	AppendEntry(ctx context.Context, q *db.DB, f Fence, e JournalEntry, now time.Time) error
	// ConsumeSignal, in one transaction, finds the undelivered signal
	// name, lets accept decode its payload (an accept error aborts and
	// changes nothing), marks it delivered and journals e with the text
	// accept returns (the payload, or its form sealed for the journal).
	// accept also gets the trace context PutSignal stored with it ("" for
	// none).
	ConsumeSignal(ctx context.Context, f Fence, name string, e JournalEntry, accept func(payload, traceContext string) (journal string, err error), now time.Time) (found bool, err error)
	// Suspend releases the lease and parks the run until wakeAt (zero =
	// never) or until signal name arrives (when name is not empty). An
	// undelivered signal of that name makes the run due at once.
	Suspend(ctx context.Context, f Fence, wakeAt time.Time, signal string, now time.Time) error
	// Complete journals last (when not nil: the body's last step, still
	// pending), records the output, marks the run done and releases it,
	// all in one transaction.
	Complete(ctx context.Context, f Fence, last *JournalEntry, output string, now time.Time) error
	// CompleteAndClaim is complete followed by a claim of the next due run
	// (never the one completed), in one statement on PostgreSQL. done is
	// ErrLeaseLost when the completion's fence no longer held (the claim
	// happens regardless); err is a failure of the whole.
	CompleteAndClaim(ctx context.Context, f Fence, last *JournalEntry, output string, now time.Time, next NextClaim) (c Claimed, ok bool, done error, err error)
	// Fail records lastError (the attempt stopped at step, "" for none)
	// and releases the run as failed (due again after backoff) or, when
	// dead, as dead.
	Fail(ctx context.Context, f Fence, lastError, step string, backoff time.Duration, dead bool, now time.Time) error
	// Release gives the run back when its worker stops mid-attempt (its
	// context ended): due at once, the attempt not counted, the status it
	// had before the claim (failed when its last attempt failed, else
	// waiting).
	Release(ctx context.Context, f Fence, now time.Time) error
	// RenewLease is a worker's heartbeat: it moves the end of its lease on
	// the run (wake_at) to now + lease, fenced by the token.
	RenewLease(ctx context.Context, f Fence, lease time.Duration, now time.Time) error
	// ReleaseRun frees a running run whatever its lease token (its worker
	// is known dead): due at once, in the status Release gives, the
	// attempt still counted; false when the run is not running.
	ReleaseRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// Probe is a poll's look at the work no run asks for, in one statement
	// on indexes: whether a run of one of workflows is due at now (a
	// superset of what a claim would take: a lease or a limit may still
	// hold it), whether an unfinished run's deadline has passed, and
	// whether a schedule tick of one of workflows is due; and how long
	// until the earliest of those falls due, looking no further than
	// horizon ahead (Probe.Next).
	Probe(ctx context.Context, workflows []string, now time.Time, horizon time.Duration) (Probe, error)
	// TimeOutRuns ends, in one transaction, up to limit unfinished
	// (waiting, running, failed) runs whose deadline passed by now as
	// timed_out, revoking any lease, and cancels their unfinished descendants
	// (parent_id, recursively); it reports how many of each it changed. It reads the
	// deadline index.
	TimeOutRuns(ctx context.Context, now time.Time, limit int) (timedOut, cancelled int64, err error)
	// PutSignal stores a signal and wakes the run if it waits for it. A
	// signal is one-shot per (run, name): when one of that name was stored
	// before, delivered or not, or the run is finished (done, cancelled,
	// timed_out), it changes nothing and stored is false. traceContext is
	// the W3C traceparent of the sender's span ("" for none), stored in the
	// same INSERT and handed to the attempt that consumes the signal.
	PutSignal(ctx context.Context, runID, name, payload, traceContext string, now time.Time) (stored bool, err error)
	// ReplaceSignal is the operator's correction: it replaces the payload
	// of an undelivered signal (storing it when there is none; the
	// sender's trace context goes with the payload it replaced) and wakes
	// the run if it waits for it; replaced is false, and nothing changes,
	// when the run already consumed that signal or is finished.
	ReplaceSignal(ctx context.Context, runID, name, payload string, now time.Time) (replaced bool, err error)
	// ListSignals reads a run's mailbox, oldest first.
	ListSignals(ctx context.Context, runID string) ([]SignalInfo, error)
	// ReadRun reads one run; a missing run is ErrRunNotFound.
	ReadRun(ctx context.Context, runID string) (Run, error)
	// ListRuns reads runs newest first (created_at, id), filtered by f
	// in SQL on an index.
	ListRuns(ctx context.Context, f ListFilter) ([]Run, error)
	// RetryRun makes a failed or dead run due now with attempts reset.
	RetryRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// WakeRun makes a waiting run due now.
	WakeRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// CancelRun marks a run that is not finished as cancelled, with its
	// unfinished descendants (child runs, theirs, ...), revoking
	// any lease.
	CancelRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// CompactRun deletes the journal and signals of a done or cancelled
	// run, keeping the run row; ok is false when the run is not finished.
	CompactRun(ctx context.Context, runID string, now time.Time) (ok bool, deleted int64, err error)
	// CompactBatch compacts, in one short transaction, up to limit done or
	// cancelled runs not yet compacted, created at or after from (zero: any)
	// and last updated before now - olderThan, oldest created first; it
	// reports the runs and rows it handled and the creation time of the
	// last run, where the next batch starts. scope keeps one namespace's
	// runs (the zero Scope: every namespace's, as retention compacts).
	CompactBatch(ctx context.Context, olderThan time.Duration, limit int, from, now time.Time, scope Scope) (runs, rows int64, last time.Time, err error)
	// TakeTurn gives the turn at a background job (retention) to one
	// caller per period across every process on the database: true when
	// the job's next turn was due at now (or it never ran), which then
	// moves it to now + every. One statement.
	TakeTurn(ctx context.Context, job string, every time.Duration, now time.Time) (bool, error)
	// IndexSearch moves up to limit finished runs from the search
	// backlog into the search index, in one transaction, and reports how
	// many it moved (SQLite: a run finishes into the backlog, which a
	// search reads row by row; Probe.SearchBacklog says when it holds
	// any). A store whose index is written as a run finishes (PostgreSQL)
	// has no backlog: it does nothing and reports 0.
	IndexSearch(ctx context.Context, limit int) (int, error)
	// ListOrphanSignals lists up to limit signals sent to run ids no run
	// has, oldest first (a signal may come before its run starts: it is
	// an orphan until then).
	// scope keeps one namespace's (see Scope; the zero Scope: all).
	ListOrphanSignals(ctx context.Context, limit int, scope Scope) ([]OrphanSignal, error)
	// ExpireOrphanSignals deletes up to limit orphan signals sent before
	// now - olderThan, oldest first, in one statement; it reports how many.
	ExpireOrphanSignals(ctx context.Context, olderThan time.Duration, limit int, now time.Time) (int64, error)
	// Stats reads the overview figures (see Stats) as of now, with the
	// per-minute series covering the last minutes minutes; a running run is
	// stuck once its claim's lease ended and no beat or step renewed it for lease. It reads the
	// due index for the due and stuck runs, the listing index for the runs
	// started, the status index for the counts and the finished index for
	// the finished runs per minute (updated_at of the finished runs only:
	// a journalled step's lease renewal does not write it, so it stays a
	// HOT update on PostgreSQL). scope keeps one namespace's runs in every
	// figure but Counts, which counts every namespace's (by workflow name:
	// the caller keeps its own).
	Stats(ctx context.Context, now time.Time, minutes int, lease time.Duration, scope Scope) (Stats, error)
	// DueBacklog counts the runs due at now that no worker holds, on the
	// due index (the durable.due.backlog metric), of one namespace (scope).
	DueBacklog(ctx context.Context, now time.Time, scope Scope) (int64, error)
	// WorkflowNames lists the distinct workflow names of the runs, in
	// order (WorkflowNamesSQL: one index probe per name).
	WorkflowNames(ctx context.Context) ([]string, error)
	// SaveSnapshot writes data under id when seq is newer than the stored
	// one; loadSnapshot reads it back.
	SaveSnapshot(ctx context.Context, id string, seq int64, data string, now time.Time) (bool, error)
	LoadSnapshot(ctx context.Context, id string) (seq int64, data string, found bool, err error)
	// Composer: child runs and events (children.go).
	Composer
	// TimeTravel is fork and rewind (fork.go).
	TimeTravel
	// Historian reads a run's history (history.go).
	Historian
	// FlowStore holds the limits and schedules (flow.go).
	FlowStore
	// BulkStore holds the operator's bulk actions (bulk.go).
	BulkStore
	// Notifier tells of finished runs and due ones (notify.go).
	Notifier
	// Resealer rewrites payloads in place (reseal.go).
	Resealer
}

// NextClaim is the claim completeAndClaim makes: by workflow names, or by
// (workflow, version) keys when pinned.
type NextClaim struct {
	Names         []string
	Keys          []VersionKey
	Pinned        bool
	Lease         time.Duration
	Token, Worker string
}

// Probe is what Store.Probe found.
type Probe struct {
	Due, Overdue, SchedulesDue bool
	// Next is how long after now the first of these falls due: the wake
	// time of a run of the workflows (a timer, a backoff, the end of a
	// lease: a crashed worker's run), the deadline of an unfinished run, a
	// schedule tick of the workflows; the horizon when none falls due
	// within it, zero or less when one is due now. Nothing else makes work
	// due sooner without a wake-up hint (Notifier.WatchHints).
	Next time.Duration
	// SearchBacklog is true when finished runs wait to enter the search
	// index (Store.IndexSearch); always false on a store without a
	// backlog.
	SearchBacklog bool
}

// Fence identifies the lease a worker holds on a run.
type Fence struct {
	RunID string
	Token string
}

// NewRun is a run about to be started.
type NewRun struct {
	ID       string
	Workflow string
	Version  int
	Input    string
	// TraceContext is the W3C traceparent of the span that started the
	// run ("" for none), so every attempt's span joins that trace.
	TraceContext string
	// Deadline, when positive, is how long the run may take from its
	// start, on the store's clock (deadline_at): past it no claim takes
	// the run, its lease holder's next journal write or completion is
	// refused, and TimeOutRuns ends it timed_out.
	Deadline time.Duration
	// Priority orders the claim: higher first, then due time (default 0).
	Priority int
	// LimitKey is the run's perKey key (flow.go); nil when its workflow
	// has no perKey limit.
	LimitKey *string
}

// ClaimedAt is what InsertClaimedRun returns for r, inserted claimed at
// now (the clock reading its statement used): its first attempt, with its
// journal read (a new run has none).
func (r NewRun) ClaimedAt(now time.Time) Claimed {
	return Claimed{ID: r.ID, Workflow: r.Workflow, Version: r.Version, Input: r.Input, Attempts: 1, Now: now,
		TraceContext: r.TraceContext, JournalRead: true}
}

// Claimed is what a claim returns: enough to run the body.
type Claimed struct {
	ID        string
	Workflow  string
	Version   int
	Input     string
	Attempts  int
	LastError string
	Now       time.Time // the clock reading the claim used
	// TraceContext is the run's stored trace context (NewRun.TraceContext,
	// "" when none), read by the claim itself so a traced attempt costs no
	// extra statement.
	TraceContext string
	// Journal is the run's whole Journal in sequence order, read by the
	// claim itself when JournalRead is true (see the PostgreSQL store's
	// pgClaimWhere for when it is not: then LoadJournal, after the claim,
	// reads it).
	Journal     []JournalEntry
	JournalRead bool
}

// StatementHook is called once per SQL statement the store sends.
type StatementHook func(op, sql string)
