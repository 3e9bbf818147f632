package store

import "slices"

// Op names a store operation that changes a run's status.
type Op string

// The operations of the run state machine.
const (
	OpClaim    Op = "claim"    // ClaimRun, ClaimPinned, the claim of CompleteAndClaim, of InsertClaimedRun (of a new run, waiting)
	OpSuspend  Op = "suspend"  // Suspend
	OpComplete Op = "complete" // Complete, CompleteAndClaim
	OpFail     Op = "fail"     // Fail (not dead)
	OpDie      Op = "die"      // Fail (dead)
	OpRelease  Op = "release"  // Release, ReleaseRun
	OpRetry    Op = "retry"    // RetryRun
	OpWake     Op = "wake"     // WakeRun, PutSignal on a parked run
	OpCancel   Op = "cancel"   // CancelRun; a timed-out run's children
	OpTimeOut  Op = "timeout"  // TimeOutRuns: a run past its deadline
	OpRewind   Op = "rewind"   // RewindRun: an operator's time travel
)

// Transition is one edge group of the run state machine: Op moves a run in
// one of the From statuses to To.
type Transition struct {
	Op   Op
	From []Status
	To   Status
}

// Machine is the run state machine every store implements; the shared store
// suite (storetest) checks each store against it. A run in a status not
// listed in an operation's From is left as it is (the operation reports
// that it changed nothing). Running is in OpClaim's From because a run
// whose lease expired is claimable again (its worker is presumed dead).
// Release returns a run to the status it had before its claim: failed when
// its last attempt failed, else waiting.
var Machine = []Transition{
	{OpClaim, []Status{StatusWaiting, StatusFailed, StatusRunning}, StatusRunning},
	{OpSuspend, []Status{StatusRunning}, StatusWaiting},
	{OpComplete, []Status{StatusRunning}, StatusDone},
	{OpFail, []Status{StatusRunning}, StatusFailed},
	{OpDie, []Status{StatusRunning}, StatusDead},
	{OpRelease, []Status{StatusRunning}, StatusWaiting},
	{OpRelease, []Status{StatusRunning}, StatusFailed},
	{OpRetry, []Status{StatusFailed, StatusDead}, StatusWaiting},
	{OpWake, []Status{StatusWaiting}, StatusWaiting},
	{OpCancel, []Status{StatusWaiting, StatusRunning, StatusFailed}, StatusCancelled},
	{OpTimeOut, []Status{StatusWaiting, StatusRunning, StatusFailed}, StatusTimedOut},
	{OpRewind, []Status{StatusDone, StatusFailed, StatusDead, StatusCancelled}, StatusWaiting},
}

// AllStatuses lists every run status, in the order of the machine's life.
var AllStatuses = []Status{StatusWaiting, StatusRunning, StatusDone, StatusFailed, StatusDead, StatusCancelled, StatusTimedOut}

// Allowed reports whether op may move a run from status from to status to.
func Allowed(op Op, from, to Status) bool {
	for _, t := range Machine {
		if t.Op == op && t.To == to && slices.Contains(t.From, from) {
			return true
		}
	}
	return false
}

// Accepts reports whether op applies to a run in status from at all.
func Accepts(op Op, from Status) bool {
	for _, t := range Machine {
		if t.Op == op && slices.Contains(t.From, from) {
			return true
		}
	}
	return false
}

// Terminal reports whether no operation moves a run out of s (done,
// cancelled, timed_out): such a run is finished. Compaction takes done and
// cancelled runs (a timed-out run keeps its journal, for its inspection).
// An operator's rewind (OpRewind) is time travel, not a move of the run's
// own life: it does not count.
func Terminal(s Status) bool {
	for _, t := range Machine {
		if t.Op != OpRewind && slices.Contains(t.From, s) {
			return false
		}
	}
	return true
}
