package store

import (
	"context"
	"time"
)

// FlowStore is what flow control and schedules ask of the database: the
// declared limits of a workflow, the claim that obeys them, and the
// schedules whose ticks poll fires. Every limit is enforced by the database
// (row locks on PostgreSQL, the single writer on SQLite), so any number of
// workers obey it together.
type FlowStore interface {
	// DeclareLimits stores a workflow's limits (the last declaration wins;
	// the rate limit's state is kept). Zero limits delete the row.
	DeclareLimits(ctx context.Context, l Limits, now time.Time) error
	// ClaimLimited is ClaimRun (or ClaimPinned) for a worker some of whose
	// workflows have limits: a run of a limited workflow is claimed only
	// while its workflow has fewer than Concurrency runs running, its key
	// fewer than PerKey, and its rate limit's next claim time has come
	// (which the claim then moves on by 1/RatePerSecond). When it claims
	// nothing because a rate limit held a due run back, wait is the time
	// from now until that limit's next claim time, the moment a claim
	// should be tried again (0 otherwise).
	ClaimLimited(ctx context.Context, c LimitedClaim, now time.Time) (cl Claimed, ok bool, wait time.Duration, err error)
	// FlowStates reads the limits of workflows and what they count now:
	// the runs running under a live lease (lease), per key too.
	FlowStates(ctx context.Context, workflows []string, lease time.Duration, now time.Time) ([]FlowState, error)
	// SaveRates reads the rate-limit bookkeeping (the next claim time and
	// what it is computed from) of those of workflows that have a rate
	// limit, for RestoreRates.
	SaveRates(ctx context.Context, workflows []string) ([]RateState, error)
	// RestoreRates puts back rate states SaveRates read, so the claims made
	// since cost no token. Only the test kit uses it, to undo the claim an
	// injected crash lost (durabletest.Harness.Drain); a real crashed claim
	// keeps its token, since its effects may have reached the service the
	// limit protects.
	RestoreRates(ctx context.Context, states []RateState) error

	// PutSchedule creates or updates schedule s; next gives the first tick
	// after a time. When the cron expression is unchanged the pending tick
	// is kept (re-declaring at every program start skips nothing).
	PutSchedule(ctx context.Context, s Schedule, now time.Time, next func(time.Time) time.Time) (Schedule, error)
	// DeleteSchedule deletes a schedule; false when there was none.
	DeleteSchedule(ctx context.Context, id string) (bool, error)
	// ListSchedules reads every schedule, by id.
	ListSchedules(ctx context.Context) ([]Schedule, error)
	// FireSchedules starts, in one transaction, the runs of up to 16 due
	// schedules of workflows (plan says, for a schedule at a time, which
	// ticks to start and the next one; each run's id is RunIDOf(schedule,
	// tick), so a tick starts one run however many workers fire it) and
	// reports how many runs it inserted. A schedule another worker is
	// firing is skipped. An empty workflows list fires nothing.
	FireSchedules(ctx context.Context, workflows []string, now time.Time, plan func(Schedule, time.Time) SchedulePlan) (int, error)
}

// SchedulePlan is what firing a due schedule does: start a run for each of
// Ticks (with LimitKey, the perKey key of its input) and wait for Next.
type SchedulePlan struct {
	Ticks    []time.Time
	Next     time.Time
	LimitKey *string
}

// Limits are a workflow's flow-control limits; a zero field is no limit.
type Limits struct {
	Workflow      string
	Concurrency   int
	PerKey        int
	RatePerSecond float64
}

// None is true when l limits nothing.
func (l Limits) None() bool { return l.Concurrency <= 0 && l.PerKey <= 0 && l.RatePerSecond <= 0 }

// LimitedClaim is one claim with limits: the workflows by name (or by
// version key when Pinned), Limited the names among them whose limits were
// declared, Rated those among Limited with a rate limit.
type LimitedClaim struct {
	Names   []string
	Keys    []VersionKey
	Pinned  bool
	Limited []string
	Rated   []string
	Lease   time.Duration
	Token   string
	Worker  string
}

// FlowState is a workflow's limits and what they count at Now.
type FlowState struct {
	Limits
	// Running counts its runs under a live lease; RunningByKey per key.
	Running      int
	RunningByKey map[string]int
	// NextClaimAt is the rate limit's earliest next claim (zero: none).
	NextClaimAt time.Time
	Now         time.Time
}

// RateState is one workflow's rate-limit bookkeeping as its store keeps
// it: State is opaque outside the store that read it; "" is the state of a
// rate limit no claim has used yet.
type RateState struct {
	Workflow string
	State    string
}

// Hold is the limit that holds a due run back (Engine.HeldBy): its
// workflow's concurrency, its perKey key (Key) or its rate limit.
type Hold struct {
	Limit HoldLimit
	Key   string
}

// HoldLimit names the limit of a Hold.
type HoldLimit string

// The limits that hold runs back.
const (
	HoldConcurrency HoldLimit = "concurrency"
	HoldKey         HoldLimit = "key"
	HoldRate        HoldLimit = "rate"
)

// Schedule is a cron schedule of a workflow: each tick starts one run of
// Workflow (at Version) with Input.
type Schedule struct {
	ID       string
	Workflow string
	Version  int
	Cron     string
	Input    string
	// CatchUp starts every tick missed while no worker ran (default: only
	// the latest).
	CatchUp bool
	// NextAt is the next tick to fire; LastRunID the run its last tick
	// started ("" before the first).
	NextAt    time.Time
	LastRunID string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// RunIDOf is the id of the run a schedule's tick starts: the schedule id,
// "@" and the tick time in ISO 8601 (UTC, seconds).
func RunIDOf(scheduleID string, tick time.Time) string {
	return scheduleID + "@" + tick.UTC().Format("2006-01-02T15:04:05Z")
}

// LimitKeyArg is the run's limit_key parameter: NULL when it has none.
func (r NewRun) LimitKeyArg() any {
	if r.LimitKey == nil {
		return nil
	}
	return *r.LimitKey
}

// FoldFlowStates folds the n rows of a flow-state query (one per workflow
// and running key, ordered by workflow; keyed is false for the runs with no
// key) into one FlowState per workflow.
func FoldFlowStates(n int, row func(i int) (st FlowState, key string, keyed bool, count int)) []FlowState {
	var out []FlowState
	for i := 0; i < n; i++ {
		st, key, keyed, count := row(i)
		if len(out) == 0 || out[len(out)-1].Workflow != st.Workflow {
			st.RunningByKey = map[string]int{}
			out = append(out, st)
		}
		last := &out[len(out)-1]
		last.Running += count
		if keyed {
			last.RunningByKey[key] += count
		}
	}
	return out
}
