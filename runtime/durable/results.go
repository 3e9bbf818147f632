package durable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// This file is what callers outside a workflow read of a run (Sky's
// Durable.result, awaitResult, getEvent), the events a run publishes
// (Durable.setEvent) and Durable.signalWithStart.

// Result reads the output of run runID of def: nil while the run is not
// finished (waiting, running, failed and due for a retry). A run that is
// dead or cancelled will never yield one by itself: that is an Unavailable
// error with its last error; an unknown id is NotFound, a run of another
// workflow a Conflict.
func Result[I, O any](ctx context.Context, e *Engine, def Def[I, O], runID string) (*O, error) {
	r, err := e.store.ReadRun(ctx, runID)
	if err == store.ErrRunNotFound {
		return nil, runNotFound(runID)
	}
	if err != nil {
		return nil, err
	}
	return resultOf(e, def, r)
}

// resultOf is Result's answer for run r as read (RunNow's for the run it
// advanced).
func resultOf[I, O any](e *Engine, def Def[I, O], r Run) (*O, error) {
	if r.Workflow != def.name {
		return nil, task.Errorf(task.Conflict, "durable: run %q is a run of workflow %q, not %q; hint: read it with the WorkflowDef it was started with", r.ID, r.Workflow, def.name)
	}
	switch r.Status {
	case StatusDone:
		if err := e.sealed.stillSealed(r.ID, placeOutput, r.Output); err != nil {
			return nil, err
		}
		out, err := def.out.Decode(r.Output)
		if err != nil {
			return nil, task.Errorf(task.Decode, "durable: the output %s of run %q does not decode: %s; hint: the workflow's output codec changed since it finished", codec.Preview(r.Output), r.ID, errText(err))
		}
		return &out, nil
	case StatusDead, StatusCancelled, StatusTimedOut:
		return nil, task.Errorf(task.Unavailable, "durable: run %q (workflow %q) is %s and has no result (last error: %s); hint: `sky durable show %s`",
			r.ID, r.Workflow, r.Status, orNone(r.LastError), r.ID)
	}
	return nil, nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// AwaitResult is Result that waits up to timeout for the run to finish (a
// zero or negative timeout reads once). It watches the run's finish
// (store.Notifier: on PostgreSQL the process's one LISTEN session per
// database, shared by every waiter; its trigger is installed on first use,
// so databases whose callers never wait pay nothing) and only then reads,
// so a finish committed between the two is either read or heard; a notice
// that the listener was reconnected makes it read again. Where the watch
// does not hear every finish (SQLite hears this process's only) it also
// polls, backing off from 5ms to 200ms; where the database cannot notify
// at all (through a transaction pooler), or the watch cannot start (the
// listening session cannot be opened), it only polls.
func AwaitResult[I, O any](ctx context.Context, e *Engine, def Def[I, O], runID string, timeout time.Duration) (*O, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	heard := make(chan struct{}, 1)
	w := store.Watch{Partial: true}
	if timeout > 0 {
		var err error
		w, err = e.store.WatchDone(ctx, runID, func(store.Notice) {
			select {
			case heard <- struct{}{}:
			default:
			}
		})
		switch {
		case err == nil:
			defer w.Stop()
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default: // no notifications here (or none now): poll
			w = store.Watch{Partial: true}
		}
	}
	wait := 5 * time.Millisecond
	for {
		out, err := Result(ctx, e, def, runID)
		if out != nil || err != nil || timeout <= 0 {
			return out, err
		}
		var polled <-chan time.Time
		if w.Partial {
			polled = time.After(wait)
			wait = min(2*wait, 200*time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			timeout = 0 // read once more, and return
		case <-heard:
		case <-polled:
		}
	}
}

// SetEvent publishes value a under key for callers outside the run to read
// with GetEvent (Sky's Durable.setEvent); a later SetEvent of the key
// replaces it. It is a journalled step ("event:<key>", then
// "event:<key>#2", ... for the key's later ones) whose transaction writes
// the value, so a replay does not write it again.
func SetEvent[A any](c *Ctx, cd codec.Codec[A], key string, a A) task.Task[struct{}] {
	return task.From(func(ctx context.Context) (struct{}, error) {
		if key == "" {
			return struct{}{}, task.Errorf(task.InvalidInput, "durable run %q: Durable.setEvent with an empty key; hint: name what it reports, e.g. \"progress\"", c.RunID())
		}
		return task.Run(ctx, Transaction(c, codec.Unit, c.nextOccurrence("event:"+key), func(ctx context.Context, tx *db.DB) (struct{}, error) {
			js, err := cd.Encode(a)
			if err != nil {
				return struct{}{}, task.Errorf(task.InvalidInput, "durable run %q: the value of event %q does not encode: %s", c.RunID(), key, errText(err))
			}
			if err := c.checkPayload(func() string { return fmt.Sprintf("the value of event %q", key) }, js); err != nil {
				return struct{}{}, err
			}
			return struct{}{}, c.e.store.PutEvent(ctx, tx, c.RunID(), key, js, c.e.now())
		}))
	})
}

// nextOccurrence is id the first time the body reaches it, then id#2, ...:
// the seen ids are those the body reached so far, in journal order, so the
// numbering is the same on every replay.
func (c *Ctx) nextOccurrence(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.seen[id] {
		return id
	}
	for n := 2; ; n++ {
		if next := fmt.Sprintf("%s#%d", id, n); !c.seen[next] {
			return next
		}
	}
}

// GetEvent reads the latest value run runID set under key (Sky's
// Durable.getEvent): nil when none was set (or the run does not exist).
func GetEvent[A any](ctx context.Context, e *Engine, runID, key string, cd codec.Codec[A]) (*A, error) {
	if err := checkName("the event key", key, func() string { return fmt.Sprintf(" of run %q", runID) }, "the key the run set, e.g. \"progress\""); err != nil {
		return nil, err
	}
	js, found, err := e.store.GetEvent(ctx, runID, key)
	if err != nil || !found {
		return nil, err
	}
	a, err := cd.Decode(js)
	if err != nil {
		return nil, task.Errorf(task.Decode, "durable: the value %s of event %q of run %q does not decode: %s; hint: read it with the codec it was set with",
			codec.Preview(js), key, runID, errText(err))
	}
	return &a, nil
}

// SignalWithStart starts run runID of def with input (idempotent, as Start)
// and sends it signal name with payload a, in one transaction (Sky's
// Durable.signalWithStart): the signal is never stored for a run that
// failed to start, and a run started by it finds the signal at once.
func SignalWithStart[I, O, A any](ctx context.Context, e *Engine, def Def[I, O], runID string, input I, name string, cd codec.Codec[A], a A) error {
	in, err := def.encodeInput(runID, input)
	if err != nil {
		return err
	}
	payload, err := cd.Encode(a)
	if err != nil {
		return task.Errorf(task.InvalidInput, "durable: the payload of signal %q to run %q does not encode: %s", name, runID, errText(err))
	}
	if strings.TrimSpace(name) == "" {
		return task.Errorf(task.InvalidInput, "durable: Durable.signalWithStart to run %q with an empty signal name; hint: name the signal the workflow awaits, e.g. \"approved\"", runID)
	}
	return e.db.WithTransaction(ctx, func(ctx context.Context, _ *db.DB) error {
		if err := e.start(ctx, def.name, def.version, runID, in, runOptions{limits: def.limits}); err != nil {
			return err
		}
		return e.Signal(ctx, runID, name, payload)
	})
}
