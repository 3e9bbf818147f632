package durable

import (
	"context"
	"time"

	"skydurable/runtime/db"
)

// store is everything the engine asks of the database. Each dialect
// implements it in one file (store_postgres.go, store_sqlite.go) holding all
// of its SQL; engine logic never builds SQL. A zero now means "use the
// database's own clock" and is only ever passed to the PostgreSQL store.
//
// Every write for a claimed run takes a fence (run id + lease token) and is
// guarded by it in the same statement or transaction; a write whose fence no
// longer matches reports errLeaseLost and changes nothing.
type store interface {
	// setup creates or migrates the tables, idempotently and safely when
	// several processes call it at once.
	setup(ctx context.Context) error
	// insertRun inserts a new run; when the id exists it changes nothing
	// and reports the existing run's workflow name.
	insertRun(ctx context.Context, r newRun, now time.Time) (inserted bool, existingWorkflow string, err error)
	// claimRun leases the most overdue claimable run whose workflow is in
	// names, counting an attempt. ok is false when none is due. It also
	// reads the run's journal in the same statement when it can prove the
	// read complete (c.journalRead); otherwise the caller uses loadJournal.
	claimRun(ctx context.Context, names []string, now time.Time, lease time.Duration, token, worker string) (c claimed, ok bool, err error)
	// claimPinned is claimRun for runs whose (workflow, version) is in keys.
	claimPinned(ctx context.Context, keys []versionKey, now time.Time, lease time.Duration, token, worker string) (c claimed, ok bool, err error)
	// loadJournal reads a run's whole journal in sequence order.
	loadJournal(ctx context.Context, runID string) ([]JournalEntry, error)
	// appendEntry journals one entry on q (the pool or a transaction)
	// and renews the lease, in one statement.
	appendEntry(ctx context.Context, q *db.DB, f fence, e JournalEntry, now time.Time) error
	// consumeSignal, in one transaction, finds the undelivered signal
	// name, lets accept decode its payload (an accept error aborts and
	// changes nothing), marks it delivered and journals e with the payload.
	consumeSignal(ctx context.Context, f fence, name string, e JournalEntry, accept func(payload string) error, now time.Time) (found bool, err error)
	// suspend releases the lease and parks the run until wakeAt (zero =
	// never) or until signal name arrives (when name is not empty). An
	// undelivered signal of that name makes the run due at once.
	suspend(ctx context.Context, f fence, wakeAt time.Time, signal string, now time.Time) error
	// complete journals last (when not nil: the body's last step, still
	// pending), records the output, marks the run done and releases it,
	// all in one transaction.
	complete(ctx context.Context, f fence, last *JournalEntry, output string, now time.Time) error
	// completeAndClaim is complete followed by a claim of the next due run
	// (never the one completed), in one statement on PostgreSQL. done is
	// errLeaseLost when the completion's fence no longer held (the claim
	// happens regardless); err is a failure of the whole.
	completeAndClaim(ctx context.Context, f fence, last *JournalEntry, output string, now time.Time, next nextClaim) (c claimed, ok bool, done error, err error)
	// fail records lastError and releases the run as failed (due again
	// after backoff) or, when dead, as dead.
	fail(ctx context.Context, f fence, lastError string, backoff time.Duration, dead bool, now time.Time) error
	// release gives the run back when its worker stops mid-attempt (its
	// context ended): due at once, the attempt not counted, the status it
	// had before the claim (failed when its last attempt failed, else
	// waiting).
	release(ctx context.Context, f fence, now time.Time) error
	// putSignal stores a signal (replacing an undelivered one of the same
	// name, ignoring a delivered one) and wakes the run if it waits for it.
	putSignal(ctx context.Context, runID, name, payload string, now time.Time) (stored bool, err error)
	// listSignals reads a run's mailbox, oldest first.
	listSignals(ctx context.Context, runID string) ([]SignalInfo, error)
	// readRun reads one run; a missing run is errRunNotFound.
	readRun(ctx context.Context, runID string) (Run, error)
	// listRuns reads runs newest first (created_at, id), filtered by f
	// in SQL on an index.
	listRuns(ctx context.Context, f ListFilter) ([]Run, error)
	// retryRun makes a failed or dead run due now with attempts reset.
	retryRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// wakeRun makes a waiting run due now.
	wakeRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// cancelRun marks a run that is not finished as cancelled, revoking
	// any lease.
	cancelRun(ctx context.Context, runID string, now time.Time) (bool, error)
	// compactRun deletes the journal and signals of a done or cancelled
	// run, keeping the run row; ok is false when the run is not finished.
	compactRun(ctx context.Context, runID string, now time.Time) (ok bool, deleted int64, err error)
	// compactBatch compacts, in one short transaction, up to limit done or
	// cancelled runs not yet compacted, created at or after from (zero: any)
	// and last updated before now - olderThan, oldest created first; it
	// reports the runs and rows it handled and the creation time of the
	// last run, where the next batch starts.
	compactBatch(ctx context.Context, olderThan time.Duration, limit int, from, now time.Time) (runs, rows int64, last time.Time, err error)
	// saveSnapshot writes data under id when seq is newer than the stored
	// one; loadSnapshot reads it back.
	saveSnapshot(ctx context.Context, id string, seq int64, data string, now time.Time) (bool, error)
	loadSnapshot(ctx context.Context, id string) (seq int64, data string, found bool, err error)
}

// nextClaim is the claim completeAndClaim makes: by workflow names, or by
// (workflow, version) keys when pinned.
type nextClaim struct {
	names         []string
	keys          []versionKey
	pinned        bool
	lease         time.Duration
	token, worker string
}

// fence identifies the lease a worker holds on a run.
type fence struct {
	runID string
	token string
}

// newRun is a run about to be started.
type newRun struct {
	id       string
	workflow string
	version  int
	input    string
}

// claimed is what a claim returns: enough to run the body.
type claimed struct {
	id        string
	workflow  string
	version   int
	input     string
	attempts  int
	lastError string
	now       time.Time // the clock reading the claim used
	// journal is the run's whole journal in sequence order, read by the
	// claim itself when journalRead is true (see pgClaimWhere for when it
	// is not: then loadJournal, after the claim, reads it).
	journal     []JournalEntry
	journalRead bool
}

// statementHook is called once per SQL statement the store sends.
type statementHook func(op, sql string)

// newStore picks the store of d's dialect.
func newStore(d *db.DB, hook statementHook) store {
	if hook == nil {
		hook = func(string, string) {}
	}
	if d.Dialect() == db.Postgres {
		return newPgStore(d, hook)
	}
	return &sqliteStore{d: d, hook: hook}
}
