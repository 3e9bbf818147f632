package store

import "strings"

// The status lists the stores' SQL statements name, the one place they are
// written. Each is a constant (so the statements stay constants) whose
// value TestStatusListsFollowTheMachine derives from Machine; a new status
// or transition that changes a set fails that test until the list here
// follows. Migrations are history and keep the lists they were written
// with.
const (
	// SQLClaimable: the statuses a claim takes a run from (OpClaim's From;
	// running only once its lease expired).
	SQLClaimable = `'waiting','running','failed'`
	// SQLFree: claimable and held by no worker.
	SQLFree = `'waiting','failed'`
	// SQLUnclaimable: the statuses no worker takes a run up from by itself
	// (everything but SQLClaimable): finished, or dead until a retry.
	SQLUnclaimable = `'done','dead','cancelled','timed_out'`
	// SQLEndedUnsuccessfully: SQLUnclaimable but done; a child ending so
	// fails the parent that awaits it.
	SQLEndedUnsuccessfully = `'dead','cancelled','timed_out'`
	// SQLTerminal: the statuses no operation moves a run out of (Terminal);
	// a signal to such a run is ignored.
	SQLTerminal = `'done','cancelled','timed_out'`
	// SQLRetryable: the statuses RetryRun takes (OpRetry's From).
	SQLRetryable = `'failed','dead'`
	// SQLRewindable: the statuses RewindRun takes (OpRewind's From).
	SQLRewindable = `'done','failed','dead','cancelled'`
	// SQLCompactable: the statuses compaction takes (Compactable).
	SQLCompactable = `'done','cancelled'`
	// SQLDueIndexExcludes is the predicate of the partial due and claim
	// indexes (migrations 0001 and 0006: status NOT IN (...)), which
	// predates timed_out; a statement that must be answered from those
	// indexes names exactly this list. A timed-out run is in them with
	// wake_at 'infinity', after every due run.
	SQLDueIndexExcludes = `'done','dead','cancelled'`
)

// The single statuses as SQL literals ('waiting'): a statement names a
// status only through these or the lists above, never in its own quotes
// (TestStatusListsFollowTheMachine checks both, and that no store spells
// one itself).
const (
	SQLWaiting   = `'waiting'`
	SQLRunning   = `'running'`
	SQLDone      = `'done'`
	SQLFailed    = `'failed'`
	SQLDead      = `'dead'`
	SQLCancelled = `'cancelled'`
	SQLTimedOut  = `'timed_out'`
)

// Compactable lists the statuses whose runs compaction may strip of their
// journal and signals: finished for good and of no further interest (a
// timed-out run keeps its journal for its inspection).
var Compactable = []Status{StatusDone, StatusCancelled}

// From lists the statuses op applies to, in AllStatuses order.
func From(op Op) []Status {
	var out []Status
	for _, s := range AllStatuses {
		if Accepts(op, s) {
			out = append(out, s)
		}
	}
	return out
}

// SQLList renders statuses as the items of a SQL IN list: 'a','b'.
func SQLList(statuses []Status) string {
	q := make([]string, len(statuses))
	for i, s := range statuses {
		q[i] = "'" + string(s) + "'"
	}
	return strings.Join(q, ",")
}
