package durable

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Limits are a workflow's flow control (Sky's Limits i), enforced by the
// database at claim, so any number of workers obey them together. A zero
// field is no limit. A run held back by a limit stays waiting (`sky durable
// ls` says "held by concurrency" or "held by rate limit"); a run suspended
// on a sleep or a signal holds no slot.
type Limits struct {
	// Concurrency is the most runs of the workflow running at once.
	Concurrency int
	// PerKey is the most runs running at once per key; Key computes a
	// run's key from its input JSON, once, at start.
	PerKey int
	Key    func(input string) (string, error)
	// RatePerSecond spaces the claims of the workflow 1/RatePerSecond
	// apart (on a grid: a late claim is caught up by the next), and no
	// more than that many start in any second.
	RatePerSecond float64
}

// none is true when l limits nothing.
func (l *Limits) none() bool {
	return l == nil || (l.Concurrency == 0 && l.PerKey == 0 && l.RatePerSecond == 0)
}

// check explains limits that cannot be enforced.
func (l *Limits) check(workflow string) error {
	bad := func(field string, v any, hint string) error {
		return task.Errorf(task.InvalidInput, "durable: workflow %q declares %s = %v; hint: %s", workflow, field, v, hint)
	}
	switch {
	case l.Concurrency < 0:
		return bad("concurrency", l.Concurrency, "a limit is at least 1; use Nothing for no limit")
	case l.PerKey < 0:
		return bad("perKey", l.PerKey, "a limit is at least 1; use Nothing for no limit")
	case l.PerKey > 0 && l.Key == nil:
		return bad("perKey", l.PerKey, "a per-key limit needs the function that computes the key from the input")
	case math.IsNaN(l.RatePerSecond) || math.IsInf(l.RatePerSecond, 0) || l.RatePerSecond < 0:
		return bad("ratePerSecond", l.RatePerSecond, "a positive number of runs a second, such as 20 or 0.5; use Nothing for no limit")
	case l.RatePerSecond > 0 && l.RatePerSecond < 1.0/86400:
		return bad("ratePerSecond", l.RatePerSecond, "at least one run a day (1/86400)")
	}
	return nil
}

// stored is l as the store keeps it.
func (l *Limits) stored(workflow string) store.Limits {
	return store.Limits{Workflow: workflow, Concurrency: l.Concurrency, PerKey: l.PerKey, RatePerSecond: l.RatePerSecond}
}

// RegisterWithLimits defines a workflow with limits and a retry policy
// (Sky's Durable.registerWithLimits); key (nil: none) computes the perKey
// key from the input.
func RegisterWithLimits[I, O any](limits Limits, key func(I) (string, error), policy RetryPolicy, name string, in codec.Codec[I], out codec.Codec[O], body func(*Ctx, I) task.Task[O]) Def[I, O] {
	return RegisterWith(policy, name, in, out, body).WithLimits(limits, key)
}

// WithLimits returns d with limits; key (nil: none) computes the perKey key
// from a run's input, once, at start.
func (d Def[I, O]) WithLimits(limits Limits, key func(I) (string, error)) Def[I, O] {
	if key != nil {
		limits.Key = func(input string) (string, error) {
			v, err := d.in.Decode(input)
			if err != nil {
				return "", err
			}
			return key(v)
		}
	}
	d.limits = &limits
	return d
}

// runOptions are what a start records besides the input: the caller's
// options and the workflow's limits (for the perKey key).
type runOptions struct {
	StartOptions
	limits *Limits
}

// limitKey is the run's perKey key, nil when its workflow has none.
func (o runOptions) limitKey(workflow, runID, input string) (*string, error) {
	if o.limits.none() {
		return nil, nil
	}
	if err := o.limits.check(workflow); err != nil {
		return nil, err
	}
	if o.limits.PerKey == 0 || o.limits.Key == nil {
		return nil, nil
	}
	k, err := o.limits.Key(input)
	if err != nil {
		return nil, task.Errorf(task.InvalidInput, "durable: cannot start run %q of workflow %q: its perKey key cannot be computed from the input %s: %s",
			runID, workflow, codec.Preview(input), errText(err))
	}
	if err := checkName("the perKey key", k, func() string { return fmt.Sprintf(" of run %q of workflow %q", runID, workflow) }, "the key function must return printable text, e.g. a customer id"); err != nil {
		return nil, err
	}
	return &k, nil
}

// ClaimedAt is the clock reading of the claim that is advancing the run
// (the database's clock on PostgreSQL unless one is injected).
func (c *Ctx) ClaimedAt() time.Time { return c.claimNow }

// flowState is an engine's memory of the limits it declared and of when it
// last looked for due schedule ticks.
type flowState struct {
	mu        sync.Mutex
	declared  map[string]store.Limits
	nextCheck time.Time // schedules (schedule.go)
}

// prepareFlow notes the limited workflows of reg, declares their limits to
// the database the first time (or when they changed), and fires the due
// schedule ticks of reg's workflows (schedule.go).
func (e *Engine) prepareFlow(ctx context.Context, reg *registry) error {
	for _, name := range reg.names {
		l := reg.newest(name).Limits
		if l.none() {
			continue
		}
		if err := l.check(name); err != nil {
			return err
		}
		if err := e.declare(ctx, l.stored(name)); err != nil {
			return err
		}
		reg.limited = append(reg.limited, name)
		if l.RatePerSecond > 0 {
			reg.rated = append(reg.rated, name)
		}
	}
	return nil
}

// declare stores l unless this engine already did.
func (e *Engine) declare(ctx context.Context, l store.Limits) error {
	e.flow.mu.Lock()
	done := e.flow.declared[l.Workflow] == l
	e.flow.mu.Unlock()
	if done {
		return nil
	}
	if err := e.store.DeclareLimits(ctx, l, e.now()); err != nil {
		return err
	}
	e.flow.mu.Lock()
	defer e.flow.mu.Unlock()
	if e.flow.declared == nil {
		e.flow.declared = map[string]store.Limits{}
	}
	e.flow.declared[l.Workflow] = l
	return nil
}

// NextRateClaims lists, for each of the named workflows whose rate limit
// spaces its claims, the earliest time its next claim is allowed (the test
// kit's virtual clock stops there). One query.
func (e *Engine) NextRateClaims(ctx context.Context, names []string) ([]time.Time, error) {
	states, err := e.store.FlowStates(ctx, names, e.lease, e.now())
	if err != nil {
		return nil, err
	}
	var out []time.Time
	for _, st := range states {
		if !st.NextClaimAt.IsZero() {
			out = append(out, st.NextClaimAt)
		}
	}
	return out, nil
}

// RateSnapshot is the rate-limit state of some workflows at one moment
// (SaveRates), to be put back by RestoreRate.
type RateSnapshot struct{ states []store.RateState }

// SaveRates reads the rate-limit state of the named workflows, which have
// a rate limit: one whose limits no poll has declared yet is saved as
// unused (a claim's poll declares them first). One query.
func (e *Engine) SaveRates(ctx context.Context, names []string) (RateSnapshot, error) {
	states, err := e.store.SaveRates(ctx, names)
	if err != nil {
		return RateSnapshot{}, err
	}
	for _, n := range names {
		if !slices.ContainsFunc(states, func(s store.RateState) bool { return s.Workflow == n }) {
			states = append(states, store.RateState{Workflow: n})
		}
	}
	return RateSnapshot{states}, nil
}

// RestoreRate puts workflow's rate-limit state back as s saw it, so the
// claims made since cost no token: the test kit's undo of a claim an
// injected crash lost (durabletest). A real crashed claim keeps its token:
// its effects may have reached the service the limit protects.
func (e *Engine) RestoreRate(ctx context.Context, s RateSnapshot, workflow string) error {
	for _, st := range s.states {
		if st.Workflow == workflow {
			return e.store.RestoreRates(ctx, []store.RateState{st})
		}
	}
	return nil
}

// HeldBy says, for each due run of runs that a limit holds back, which
// (view.HeldText words it: "held by concurrency (key k)"). It reads the
// limits and running counts of the runs' workflows in one query.
func (e *Engine) HeldBy(ctx context.Context, runs []Run) (map[string]Hold, error) {
	seen := map[string]bool{}
	var names []string
	for _, r := range runs {
		if (r.Status == StatusWaiting || r.Status == StatusFailed) && !r.WakeAt.IsZero() && !seen[r.Workflow] {
			seen[r.Workflow] = true
			names = append(names, r.Workflow)
		}
	}
	held := map[string]Hold{}
	if len(names) == 0 {
		return held, nil
	}
	sort.Strings(names)
	states, err := e.store.FlowStates(ctx, names, e.lease, e.now())
	if err != nil {
		return nil, err
	}
	byName := map[string]store.FlowState{}
	for _, st := range states {
		byName[st.Workflow] = st
	}
	for _, r := range runs {
		st, ok := byName[r.Workflow]
		if !ok || !seen[r.Workflow] || r.WakeAt.IsZero() || r.WakeAt.After(st.Now) || (r.Status != StatusWaiting && r.Status != StatusFailed) {
			continue
		}
		switch {
		case st.Concurrency > 0 && st.Running >= st.Concurrency:
			held[r.ID] = Hold{Limit: store.HoldConcurrency}
		case st.PerKey > 0 && r.LimitKey != "" && st.RunningByKey[r.LimitKey] >= st.PerKey:
			held[r.ID] = Hold{Limit: store.HoldKey, Key: r.LimitKey}
		case st.RatePerSecond > 0 && st.NextClaimAt.After(st.Now):
			held[r.ID] = Hold{Limit: store.HoldRate}
		}
	}
	return held, nil
}
