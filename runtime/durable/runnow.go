package durable

import (
	"context"
	"time"
)

// RunNow starts run runID of def with input and advances it here, in this
// process, at once, instead of leaving it to a worker's poll: for a
// request/response workflow (a checkout handler that wants the order's
// outcome now). It is idempotent on the id, as Start.
//
// When this call inserts the run and def has no Limits, one statement
// inserts it already claimed by this engine, in the state a claim leaves
// (running, attempt 1, leased to this engine's WorkerID, renewed by its
// heartbeats), and the engine advances it exactly as Poll does after its
// claim: the body runs, its steps are journalled, and the attempt ends as
// any does. RunNow then returns:
//   - the output, when the run is done in this attempt;
//   - nil and no error, when it suspended (a sleep, a signal, children) or
//     failed with a retry pending: a worker resumes it later, and
//     AwaitResult waits for its output;
//   - the error Result gives, when it is dead, cancelled or timed out (or
//     what Result says when another worker took it over: its lease was
//     lost); these read the run once more.
//
// A crash of this process mid-run leaves the run running under its lease:
// a worker reclaims it once the lease ends (Options.Heartbeat after its
// last beat; Options.Lease after its last step when heartbeats are off)
// and resumes it from its journal, as any claimed run.
//
// When the id exists nothing is claimed: RunNow returns what Result
// returns for that run now (a run of another workflow under the id is the
// Conflict Start gives). A workflow with Limits is started as Start starts
// it and not run here (nil and no error, unless the id existed): its limits
// are honoured by the claim of a worker that polls it.
//
// err is otherwise a failure of the engine, or ctx's end mid-run (the run
// is then released, due at once, as by a stopping worker). RunNow is refused
// inside a step, as Poll is.
func RunNow[I, O any](ctx context.Context, e *Engine, def Def[I, O], runID string, input I) (*O, error) {
	if err := refuseInStep(ctx, "durable.RunNow"); err != nil {
		return nil, err
	}
	js, err := def.encodeInput(runID, input)
	if err != nil {
		return nil, err
	}
	opts := runOptions{limits: def.limits}
	if !def.limits.none() {
		inserted, err := e.insert(ctx, def.name, def.version, runID, js, opts)
		if err != nil || inserted {
			return nil, err
		}
		return Result(ctx, e, def, runID)
	}
	r, err := e.newRun(ctx, def.name, def.version, runID, js, opts)
	if err != nil {
		return nil, err
	}
	token, began := e.newToken(), time.Now()
	cl, inserted, existing, err := e.store.InsertClaimedRun(ctx, r, e.now(), e.heldLease(), token, e.worker)
	if err != nil {
		return nil, err
	}
	if err := e.started(ctx, r, inserted, existing); err != nil {
		return nil, err
	}
	if !inserted {
		return Result(ctx, e, def, runID)
	}
	e.tel.claimed(ctx, began, true)
	reg, err := newRegistry([]Workflow{def.Erase()})
	if err != nil {
		return nil, err
	}
	a, err := e.advance(ctx, reg, PollOptions{}, &chain{}, cl, token)
	switch {
	case err != nil:
		return nil, err
	case a.outcome == "done":
		return resultOf(e, def, Run{ID: runID, Workflow: def.name, Status: StatusDone, Output: a.output})
	case a.outcome == "dead" || a.outcome == "lease_lost":
		return Result(ctx, e, def, runID)
	}
	return nil, nil
}
