package durable

import (
	"context"
	"fmt"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Ctx is threaded through a workflow body (Sky's Durable.Ctx). It carries the
// run id, the lease this worker holds, the journal loaded once at claim and
// the cursor of the replay. Durable operations (Step, Sleep, AwaitSignal, ...)
// must run one after another: the journal records their order.
type Ctx struct {
	e        *Engine
	f        store.Fence
	workflow string
	attempt  int
	// claimNow is the clock reading of the claim and claimLocal the local
	// monotonic time then; with the database clock, "now" inside the body
	// is claimNow plus the local time elapsed since.
	claimNow   time.Time
	claimLocal time.Time

	mu        sync.Mutex
	journal   []JournalEntry
	cursor    int
	seen      map[string]bool
	sleeps    int
	suspended bool
	lost      bool
	// inStep is the id of the fresh durable operation in flight (a step
	// running its task and journalling its result, a timer or signal wait
	// being journalled), or "": a durable operation started meanwhile
	// (nested in a step's task, or in parallel) is refused.
	inStep string
	// last is the id of the last durable operation the body reached (for
	// logs: where a run failed, suspended or lost its lease), lastKind its
	// kind (the first it may be journalled as).
	last     string
	lastKind EntryKind
	// pending is the entry of the last fresh plain step, already in the
	// in-memory journal but not yet written. It is written before the
	// body's next durable operation starts (enter), or in the statement
	// that records the run's outcome (advance), which spares a run one
	// statement and one commit. Nothing is at greater risk than unbatched:
	// until then the body only runs its own deterministic code, and no
	// later effect starts before the entry is durable.
	pending *JournalEntry
	// broken is the error of a pending entry that could not be written:
	// the body already used the step's value, so no durable operation may
	// follow (its journal position would be the step's).
	broken error
	// maxAttempts is the run's attempt limit: a step failing on the last
	// attempt fails finally (stepFailed).
	maxAttempts int
	// retrying is the step failure that ends this attempt (the run is
	// retried): no durable operation may follow it.
	retrying *stepRetry
	// pendingFailure says pending is a step's final failure, journalled
	// only if the body goes on durably or completes (permanent.go).
	pendingFailure bool
	// crashed is set once Options.OnBoundary stopped the worker (boundary.go).
	crashed *task.Error
	// misuse is a durable operation or a poll reached inside a step's task:
	// the run fails with it (guard.go).
	misuse *task.Error
	// halt is a step task's request to stop the program (guard.go).
	halt error
	// replaying is set by a replay (replay.go): the first operation past
	// the journal's end stops the body before it touches the store.
	replaying bool
}

func newCtx(e *Engine, cl store.Claimed, token string, journal []JournalEntry) *Ctx {
	return &Ctx{
		e:          e,
		f:          store.Fence{RunID: cl.ID, Token: token},
		workflow:   cl.Workflow,
		attempt:    cl.Attempts,
		claimNow:   cl.Now,
		claimLocal: time.Now(),
		journal:    journal,
		seen:       map[string]bool{},
	}
}

// RunID is the id of the run being advanced (Sky's Durable.runId).
func (c *Ctx) RunID() string { return c.f.RunID }

// Workflow is the name of the run's workflow.
func (c *Ctx) Workflow() string { return c.workflow }

// Attempt is the 1-based attempt number of this claim.
func (c *Ctx) Attempt() int { return c.attempt }

// IdempotencyKey is runID + ":" + stepID: a deterministic key to pass to an
// external service so it can deduplicate a step that re-runs after a crash
// (Sky's Durable.idempotencyKey).
func (c *Ctx) IdempotencyKey(stepID string) string { return c.f.RunID + ":" + stepID }

// DB is the run's database (Sky's Durable.conn). Statements made on it inside
// a Step's task with the task's context join the step's transaction, so they
// commit together with the step's journal row.
func (c *Ctx) DB() *db.DB { return c.e.db }

// now is the engine's clock as seen inside the body.
func (c *Ctx) now() time.Time {
	if c.e.clock != nil {
		return c.e.clock()
	}
	return c.claimNow.Add(time.Since(c.claimLocal))
}

// enter checks that the body may take its next durable operation, id, of one
// of kinds. It returns the journalled entry when the operation is replayed,
// or nil when it is fresh (the caller then runs it and calls write+advance);
// a fresh operation first writes the pending entry of the step before it.
func (c *Ctx) enter(ctx context.Context, id string, kinds ...EntryKind) (*JournalEntry, error) {
	prev, err := c.check(id, kinds)
	if err != nil || prev != nil {
		return prev, err
	}
	if err := c.flush(ctx); err != nil {
		c.finish()
		return nil, err
	}
	return nil, nil
}

// check is enter's bookkeeping, under the lock.
func (c *Ctx) check(id string, kinds []EntryKind) (*JournalEntry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed != nil {
		return nil, c.crashed
	}
	if c.lost {
		return nil, leaseLostError(c.f.RunID)
	}
	if c.broken != nil {
		return nil, c.broken
	}
	if c.misuse != nil {
		return nil, c.misuse
	}
	if c.retrying != nil {
		return nil, c.retrying.refusal(c.f.RunID, id)
	}
	if id == "" {
		c.last = ""
		return nil, task.Errorf(task.InvalidInput,
			"durable run %q: a durable operation with an empty id; hint: give every step, sleep and signal wait an id that says what it is, e.g. \"charge\"", c.f.RunID)
	}
	if err := checkName("the id", id, func() string { return fmt.Sprintf(" of a durable operation of run %q", c.f.RunID) }, "a step, sleep or signal wait id is printable text, e.g. \"charge\""); err != nil {
		c.last = "" // not a step the store can name (the history's step)
		return nil, err
	}
	if c.suspended {
		return nil, suspendError(c.f.RunID, "an earlier wait in this body suspended it")
	}
	// Set only here: an operation refused above for an earlier outcome (a
	// crash, a lost lease, a step failure the body swallowed, a suspension)
	// never runs, and the logs and the history name the operation that
	// decided the attempt (TestCompensationReplaysTheFailurePath).
	c.last, c.lastKind = id, kinds[0]
	if c.inStep != "" {
		c.misuse = nestedStep(c.f.RunID, c.inStep, id)
		return nil, c.misuse
	}
	if c.seen[id] {
		return nil, duplicateStep(c.f.RunID, id)
	}
	if c.cursor >= len(c.journal) && c.replaying {
		c.crashed = frontierReached(c.f.RunID, id)
		return nil, c.crashed
	}
	if c.cursor >= len(c.journal) {
		c.inStep = id // fresh: in flight until the caller's finish
		return nil, nil
	}
	je := c.journal[c.cursor]
	kindOK := false
	for _, k := range kinds {
		kindOK = kindOK || je.Kind == k
	}
	if je.StepID != id || !kindOK {
		return nil, nonDeterminism(c.f.RunID, c.cursor+1, id, kinds[0], je)
	}
	c.cursor++
	c.seen[id] = true
	return &je, nil
}

// finish ends the fresh operation enter let in (whether it was journalled,
// suspended or failed), so the body may take its next one.
func (c *Ctx) finish() {
	c.mu.Lock()
	c.inStep = ""
	c.mu.Unlock()
}

// entry prepares the journal entry of a fresh operation at the next position.
func (c *Ctx) entry(id string, kind EntryKind, result string) JournalEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	return JournalEntry{Seq: len(c.journal) + 1, StepID: id, Kind: kind, Result: result}
}

// write journals e on q (the pool or the step's transaction), fenced by the
// lease, renewing it. A lost lease marks the Ctx lost.
func (c *Ctx) write(ctx context.Context, q *db.DB, e JournalEntry) error {
	return c.fenced(c.e.store.AppendEntry(ctx, q, c.f, e, c.e.now()))
}

// fenced turns the store's ErrLeaseLost into the Ctx's lost state.
func (c *Ctx) fenced(err error) error {
	if err == nil || !IsLeaseLost(err) {
		return err
	}
	c.mu.Lock()
	c.lost = true
	c.mu.Unlock()
	return leaseLostError(c.f.RunID)
}

// advance adds a committed entry to the in-memory journal.
func (c *Ctx) advance(e JournalEntry) {
	c.remember(e)
	c.journalled(e)
}

// defer adds a plain step's entry to the in-memory journal and leaves it
// pending: written by the next durable operation or with the run's outcome.
func (c *Ctx) deferWrite(e JournalEntry) {
	c.remember(e)
	c.mu.Lock()
	c.pending = &e
	c.mu.Unlock()
}

func (c *Ctx) remember(e JournalEntry) {
	c.mu.Lock()
	c.journal = append(c.journal, e)
	c.cursor = len(c.journal)
	c.seen[e.StepID] = true
	c.mu.Unlock()
}

func (c *Ctx) journalled(e JournalEntry) {
	c.e.log.Info("durable step journalled", "run", c.f.RunID, "workflow", c.workflow, "step", e.StepID, "kind", string(e.Kind), "seq", e.Seq, "attempt", c.attempt)
}

// brokenErr is the error of a pending entry that could not be written.
func (c *Ctx) brokenErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.broken
}

// takePending hands over the pending entry (nil when there is none), for
// the statement that records the run's outcome.
func (c *Ctx) takePending() *JournalEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pending
	c.pending = nil
	c.pendingFailure = false
	return p
}

// dropFailure discards a pending final failure: the body failed without
// going on past it, so nothing depends on it and a retry runs the step
// again.
func (c *Ctx) dropFailure() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pendingFailure {
		c.pending = nil
		c.pendingFailure = false
	}
}

// retryErr is the step failure that ends this attempt, or nil.
func (c *Ctx) retryErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.retrying == nil {
		return nil
	}
	return c.retrying.err
}

// flush writes the pending entry, if any, even when ctx is cancelled (the
// step's work is done; keeping it spares running it again). When that
// fails the Ctx is broken (or lost): the body cannot go on durably, and the
// run is reported as stopped at that step.
func (c *Ctx) flush(ctx context.Context) error {
	p := c.takePending()
	if p == nil {
		return nil
	}
	err := c.write(context.WithoutCancel(ctx), c.e.db, *p)
	if err == nil {
		c.journalled(*p)
		return c.cross(AfterCommit, *p, false)
	}
	if !IsLeaseLost(err) {
		err = task.Errorf(task.Unavailable, "durable run %q: the result of step %q could not be journalled: %s", c.f.RunID, p.StepID, errText(err))
	}
	c.mu.Lock()
	c.last = p.StepID
	if !IsLeaseLost(err) {
		c.broken = err
	}
	c.mu.Unlock()
	return err
}

// suspend persists the wake condition (wake at wakeAt, zero = never; or
// when signal arrives), releases the lease and returns the suspend sentinel.
// From then on the Ctx refuses further durable operations.
func (c *Ctx) suspend(ctx context.Context, wakeAt time.Time, signal, why string) error {
	if err := c.fenced(c.e.store.Suspend(ctx, c.f, wakeAt, signal, c.e.now())); err != nil {
		return err
	}
	spanEvent(ctx, store.EventSuspended, c.e.worker, store.SuspendDetail(wakeAt, signal), "")
	return c.parked(why, "wake_at", wakeAt, "signal", signal)
}

// parked marks the Ctx suspended once the store parked the run, logs it
// (with attrs saying what it waits for) and returns the suspend sentinel.
func (c *Ctx) parked(why string, attrs ...any) error {
	c.mu.Lock()
	c.suspended = true
	c.mu.Unlock()
	args := append([]any{"run", c.f.RunID, "workflow", c.workflow, "step", c.at(), "why", why}, attrs...)
	c.e.log.Info("durable run suspended", append(args, "attempt", c.attempt)...)
	return suspendError(c.f.RunID, why)
}

// at is the id of the last durable operation the body reached, or "".
func (c *Ctx) at() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// state reports whether the body suspended or lost its lease.
func (c *Ctx) state() (suspended, lost bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.suspended, c.lost
}

// checkPayload enforces the payload cap and MaxJSONDepth on a value a
// codec made, about to be stored (a step result, an output, an event
// value, a child's input), so every stored run still shows as JSON. what
// names the value; it is called only to word a refusal.
func (c *Ctx) checkPayload(what func() string, js string) error {
	named := func() string { return what() + " of run " + quote(c.f.RunID) }
	if len(js) > c.e.maxBytes {
		return tooLarge(named(), len(js), c.e.maxBytes)
	}
	return checkDepth(named, js)
}

func quote(s string) string { return "\"" + s + "\"" }
