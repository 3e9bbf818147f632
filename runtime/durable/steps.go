package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/task"
)

// Step marks an effect boundary (Sky's Durable.step). The first time the run
// reaches it, t runs and its result is journalled (encoded with cd); on every
// later replay, in any worker, the journalled value is returned and t does
// not run. A failure of t is retried (the attempt ends and the run re-runs
// from the top) until it is final: permanent (IsPermanent) or on the last
// attempt. A final failure is handed to the body and journalled as the
// step's outcome when the body goes on past it (stepFailed), so a body that
// compensates replays the same path.
//
// Statements t makes on c.DB() with the context it is run with join one
// lazily begun transaction, which commits together with the journal row: a
// database effect inside a step is exactly-once.
//
// Cost: a replayed step makes no query; a fresh step makes one statement
// (journal row + lease renewal) and one commit. A step without a database
// effect has its row written when the body reaches its next durable
// operation, before that operation starts, or, for the body's last step, in
// the statement that completes the run; on PostgreSQL the rows of several
// runs advancing at once in one Engine share a statement (group commit).
func Step[A any](c *Ctx, cd codec.Codec[A], stepID string, t task.Task[A]) task.Task[A] {
	return task.From(func(ctx context.Context) (A, error) {
		var zero A
		prev, err := c.enter(ctx, stepID, KindStep, KindError)
		if err != nil {
			return zero, err
		}
		if prev != nil {
			return replayStep(c, cd, *prev)
		}
		defer c.finish()
		ctx, span := c.e.tel.step(ctx, c, stepID)
		a, err := freshStep(ctx, c, cd, stepID, t)
		span.end(ctx, err)
		return a, err
	})
}

// freshStep runs the task of a step the journal does not hold yet and
// journals its result.
func freshStep[A any](ctx context.Context, c *Ctx, cd codec.Codec[A], stepID string, t task.Task[A]) (A, error) {
	var zero A
	if err := c.cross(BeforeEffect, JournalEntry{StepID: stepID, Kind: KindStep}, false); err != nil {
		return zero, err
	}
	stepCtx, lazy := db.WithLazyTx(withinStep(ctx, c, stepID), c.e.db)
	a, err := task.Run(stepCtx, t)
	if err != nil {
		rollback(ctx, lazy)
		return zero, stepFailed(ctx, c, stepID, err)
	}
	e, err := encodeEntry(c, cd, stepID, KindStep, a)
	if err != nil {
		rollback(ctx, lazy)
		return zero, err
	}
	if err := c.cross(BeforeCommit, e, lazy.Started()); err != nil {
		rollback(ctx, lazy)
		return zero, err
	}
	if !lazy.Started() {
		// No database effect: the entry is written before the next
		// durable operation or with the run's outcome (Ctx.pending).
		c.deferWrite(e)
		return a, nil
	}
	tx, err := lazy.Tx(stepCtx)
	if err == nil {
		err = c.write(ctx, tx, e)
	}
	if err != nil {
		rollback(ctx, lazy)
		return zero, err
	}
	if err := lazy.Commit(ctx); err != nil {
		return zero, err
	}
	c.advance(e)
	return a, c.cross(AfterCommit, e, true)
}

// StepValue journals a value computed once (Sky's Durable.stepValue): a
// fresh id, the current time, a random number. Replays return the recorded
// value without calling f.
func StepValue[A any](c *Ctx, cd codec.Codec[A], stepID string, f func() A) task.Task[A] {
	return Step(c, cd, stepID, task.Lazy(f))
}

// Transaction runs fn inside one database transaction together with the
// step's journal row and lease check (Sky's Durable.transaction): either the
// effect and the journal row both commit, or neither does. Replays return the
// journalled value without calling fn.
func Transaction[A any](c *Ctx, cd codec.Codec[A], stepID string, fn func(ctx context.Context, tx *db.DB) (A, error)) task.Task[A] {
	return task.From(func(ctx context.Context) (A, error) {
		var zero A
		prev, err := c.enter(ctx, stepID, KindStep, KindError)
		if err != nil {
			return zero, err
		}
		if prev != nil {
			return replayStep(c, cd, *prev)
		}
		defer c.finish()
		if err := c.cross(BeforeEffect, JournalEntry{StepID: stepID, Kind: KindStep}, true); err != nil {
			return zero, err
		}
		var a A
		var e JournalEntry
		var fnErr error
		ctx, span := c.e.tel.step(ctx, c, stepID)
		err = c.e.db.WithTransaction(withinStep(ctx, c, stepID), func(ctx context.Context, tx *db.DB) error {
			var err error
			a, err = fn(ctx, tx)
			if err != nil {
				fnErr = err
				return err
			}
			if e, err = encodeEntry(c, cd, stepID, KindStep, a); err != nil {
				return err
			}
			if err := c.write(ctx, tx, e); err != nil {
				return err
			}
			return c.cross(BeforeCommit, e, true)
		})
		span.end(ctx, err)
		if fnErr != nil {
			return zero, stepFailed(ctx, c, stepID, fnErr)
		}
		if err != nil {
			return zero, err
		}
		c.advance(e)
		return a, c.cross(AfterCommit, e, true)
	})
}

// replayStep returns a step's journalled outcome: its result, or the final
// failure it journalled (an error entry).
func replayStep[A any](c *Ctx, cd codec.Codec[A], e JournalEntry) (A, error) {
	if e.Kind == KindError {
		var zero A
		return zero, replayFailure(c, e)
	}
	return replay(c, cd, e)
}

// replay decodes a journalled result.
func replay[A any](c *Ctx, cd codec.Codec[A], e JournalEntry) (A, error) {
	a, err := cd.Decode(e.Result)
	if err != nil {
		return a, badJournal(c.f.RunID, e, err)
	}
	return a, nil
}

func encodeEntry[A any](c *Ctx, cd codec.Codec[A], stepID string, kind EntryKind, a A) (JournalEntry, error) {
	js, err := cd.Encode(a)
	if err != nil {
		return JournalEntry{}, task.Errorf(task.InvalidInput, "durable run %q: the result of step %q does not encode: %s", c.f.RunID, stepID, errText(err))
	}
	if err := c.checkPayload(func() string { return fmt.Sprintf("the result of step %q", stepID) }, js); err != nil {
		return JournalEntry{}, err
	}
	return c.entry(stepID, kind, js), nil
}

func rollback(ctx context.Context, lazy *db.LazyTx) {
	if lazy.Started() {
		_ = lazy.Rollback(ctx) // the step's own error is the one to report
	}
}

// Sleep suspends the run for ms milliseconds from the first time it reaches
// this point (Sky's Durable.sleep). Its id is "sleep:<n>" for the n-th
// anonymous sleep in the body; use SleepAs to name it.
func Sleep(c *Ctx, ms int64) task.Task[struct{}] {
	return task.From(func(ctx context.Context) (struct{}, error) {
		c.mu.Lock()
		c.sleeps++
		id := "sleep:" + strconv.Itoa(c.sleeps)
		c.mu.Unlock()
		return task.Run(ctx, SleepAs(c, id, ms))
	})
}

// SleepAs is Sleep with an explicit id. The wake time (first execution time
// + ms) is journalled; the sleep returns only once the clock has passed it,
// even if the run is woken earlier for another reason.
func SleepAs(c *Ctx, sleepID string, ms int64) task.Task[struct{}] {
	return task.From(func(ctx context.Context) (struct{}, error) {
		wake, err := timer(ctx, c, sleepID, KindSleep, ms)
		if err != nil {
			return struct{}{}, err
		}
		if !c.now().Before(wake) {
			return struct{}{}, nil
		}
		return struct{}{}, c.suspend(ctx, wake, "", fmt.Sprintf("sleep %q until %s", sleepID, wake.UTC().Format(time.RFC3339Nano)))
	})
}

// MaxTimerMs is the longest timer (about 292 years): a longer one is
// clamped to it, since its wake time in nanoseconds would overflow and wrap
// into the past, making a "sleep forever" return at once.
const MaxTimerMs = int64(math.MaxInt64 / int64(time.Millisecond))

// timer returns the journalled wake time of a sleep or deadline, journalling
// now+ms the first time.
func timer(ctx context.Context, c *Ctx, id string, kind EntryKind, ms int64) (time.Time, error) {
	prev, err := c.enter(ctx, id, kind)
	if err != nil {
		return time.Time{}, err
	}
	if prev != nil {
		var w struct {
			WakeAt *int64 `json:"wakeAt"`
		}
		if err := json.Unmarshal([]byte(prev.Result), &w); err != nil || w.WakeAt == nil {
			return time.Time{}, badJournal(c.f.RunID, *prev, fmt.Errorf("expected {\"wakeAt\": <unix ms>}, found %s", codec.Preview(prev.Result)))
		}
		return time.UnixMilli(*w.WakeAt).UTC(), nil
	}
	defer c.finish()
	ms = min(max(ms, 0), MaxTimerMs)
	wake := c.now().Add(time.Duration(ms) * time.Millisecond)
	e := c.entry(id, kind, fmt.Sprintf(`{"wakeAt":%d}`, wake.UnixMilli()))
	if err := c.cross(BeforeCommit, e, false); err != nil {
		return time.Time{}, err
	}
	if err := c.write(ctx, c.e.db, e); err != nil {
		return time.Time{}, err
	}
	c.advance(e)
	if err := c.cross(AfterCommit, e, false); err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(wake.UnixMilli()).UTC(), nil
}

// AwaitSignal waits for signal name (Sky's Durable.awaitSignal). A signal
// already delivered to the run (even before it started) is consumed at once;
// otherwise the run suspends until it arrives. The consumed payload is
// journalled, so replays return the same value. A payload that does not
// decode with cd fails the attempt and stays undelivered (send a corrected
// one to replace it).
func AwaitSignal[A any](c *Ctx, cd codec.Codec[A], name string) task.Task[A] {
	return task.From(func(ctx context.Context) (A, error) {
		var zero A
		id := "signal:" + name
		prev, err := c.enter(ctx, id, KindSignal)
		if err != nil {
			return zero, err
		}
		if prev != nil {
			return replay(c, cd, *prev)
		}
		defer c.finish()
		a, found, err := consume(ctx, c, cd, name, id)
		if err != nil || found {
			return a, err
		}
		return zero, c.suspend(ctx, time.Time{}, name, fmt.Sprintf("awaiting signal %q", name))
	})
}

// AwaitSignalFor is AwaitSignal with a timeout in ms from the first time the
// run reaches it: it yields the payload, or nil once the deadline passed with
// no signal. The deadline and the outcome (payload or timeout) are journalled.
func AwaitSignalFor[A any](c *Ctx, cd codec.Codec[A], name string, timeoutMs int64) task.Task[*A] {
	return task.From(func(ctx context.Context) (*A, error) {
		deadline, err := timer(ctx, c, "deadline:"+name, KindDeadline, timeoutMs)
		if err != nil {
			return nil, err
		}
		id := "signal:" + name
		prev, err := c.enter(ctx, id, KindSignal, KindTimeout)
		if err != nil {
			return nil, err
		}
		if prev != nil {
			if prev.Kind == KindTimeout {
				return nil, nil
			}
			a, err := replay(c, cd, *prev)
			return &a, err
		}
		defer c.finish()
		a, found, err := consume(ctx, c, cd, name, id)
		if err != nil {
			return nil, err
		}
		if found {
			return &a, nil
		}
		if !c.now().Before(deadline) {
			e := c.entry(id, KindTimeout, "null")
			if err := c.cross(BeforeCommit, e, false); err != nil {
				return nil, err
			}
			if err := c.write(ctx, c.e.db, e); err != nil {
				return nil, err
			}
			c.advance(e)
			return nil, c.cross(AfterCommit, e, false)
		}
		return nil, c.suspend(ctx, deadline, name, fmt.Sprintf("awaiting signal %q until %s", name, deadline.UTC().Format(time.RFC3339Nano)))
	})
}

// consume takes the undelivered signal name, if any, decoding its payload
// before it is marked delivered and journalled.
func consume[A any](ctx context.Context, c *Ctx, cd codec.Codec[A], name, id string) (A, bool, error) {
	var a A
	var sender string
	e := c.entry(id, KindSignal, "")
	found, err := c.e.store.ConsumeSignal(ctx, c.f, name, e, func(payload, traceContext string) (string, error) {
		sender = traceContext
		var err error
		if a, err = cd.Decode(payload); err != nil {
			return "", task.Errorf(task.Decode,
				"durable run %q: the payload of signal %q does not decode: %s; hint: correct the payload with `sky durable signal --replace %s %s JSON` (a repeated signal is ignored: the first one sent wins)",
				c.f.RunID, name, errText(err), c.f.RunID, name)
		}
		e.Result = payload
		return payload, c.cross(BeforeCommit, e, false)
	}, c.e.now())
	if err = c.fenced(err); err != nil || !found {
		return a, false, err
	}
	c.e.tel.linkSignal(ctx, name, sender)
	c.advance(e)
	return a, true, c.cross(AfterCommit, e, false)
}
