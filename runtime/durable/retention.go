package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Retention: finished runs compacted and orphan signals expired by the
// workers themselves (Options.Retention, Options.OrphanSignalTTL), so a
// database does not grow without an operator. Each engine asks at most
// every RetentionEvery; the store gives the turn to one of them per period
// across the cluster (Store.TakeTurn), which then does a bounded amount of
// work: at most retentionBatches batches of each kind, each one short
// transaction.

const (
	// RetentionEvery is how often the cluster does its retention work.
	RetentionEvery = time.Minute
	// RetentionBatch is how many runs (or signals) one retention batch
	// handles.
	RetentionBatch = 500
	// DefaultOrphanSignalTTL is how long a signal to an unknown run id is
	// kept by default.
	DefaultOrphanSignalTTL = 7 * 24 * time.Hour
	// retentionBatches bounds the batches of one turn, so a worker with
	// a large backlog to compact goes back to its runs; the next turn
	// goes on.
	retentionBatches = 20
	// retentionRunsJob and retentionSignalsJob name the two jobs in the
	// store's turns.
	retentionRunsJob    = "retention: runs"
	retentionSignalsJob = "retention: orphan signals"
)

// retention is an engine's retention settings and its local throttle.
type retention struct {
	runs, orphans time.Duration // Options.Retention, Options.OrphanSignalTTL (<0: keep)

	mu   sync.Mutex
	next time.Time // when this engine asks for the turn again
}

// due reports whether this engine should ask for the retention turn at
// now, and if so moves its next ask on. The first ask comes one period
// after the engine's first poll: starting a worker (or a short program)
// costs no retention work.
func (r *retention) due(now time.Time) bool {
	if r.runs <= 0 && r.orphans <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next.IsZero() {
		r.next = now.Add(RetentionEvery)
		return false
	}
	if now.Before(r.next) {
		return false
	}
	r.next = now.Add(RetentionEvery)
	return true
}

// RetentionResult is what one turn of retention work did.
type RetentionResult struct {
	// Turn is false when another worker had the turn of each job this
	// engine has (nothing was done).
	Turn bool
	// Runs is the finished runs compacted, Signals the orphan signals
	// deleted.
	Runs, Signals int64
}

// RunRetention does one turn of retention work now, if the cluster's turn
// is due, whatever this engine's throttle says (Poll and Work call it
// every RetentionEvery; tests and `sky durable` may call it directly).
func (e *Engine) RunRetention(ctx context.Context) (RetentionResult, error) {
	var res RetentionResult
	// Two jobs, each turn to an engine that has the setting: a worker
	// without a retention (say an app that polls) never takes the turn
	// of one that has it.
	if e.retain.runs > 0 {
		turn, err := e.store.TakeTurn(ctx, retentionRunsJob, RetentionEvery, e.now())
		if err != nil {
			return res, wrapRetention(err)
		}
		res.Turn = turn
		var from time.Time
		for i := 0; turn && i < retentionBatches; i++ {
			runs, _, last, err := e.store.CompactBatch(ctx, e.retain.runs, RetentionBatch, from, e.now(), store.Scope{}) // every namespace's
			if err != nil {
				return res, wrapRetention(err)
			}
			res.Runs += runs
			from = last
			if runs < RetentionBatch {
				break
			}
		}
	}
	if e.retain.orphans > 0 {
		turn, err := e.store.TakeTurn(ctx, retentionSignalsJob, RetentionEvery, e.now())
		if err != nil {
			return res, wrapRetention(err)
		}
		res.Turn = res.Turn || turn
		for i := 0; turn && i < retentionBatches; i++ {
			n, err := e.store.ExpireOrphanSignals(ctx, e.retain.orphans, RetentionBatch, e.now())
			if err != nil {
				return res, wrapRetention(err)
			}
			res.Signals += n
			if n < RetentionBatch {
				break
			}
		}
	}
	if res.Runs > 0 || res.Signals > 0 {
		e.log.Info("durable retention", "runs_compacted", res.Runs, "orphan_signals_deleted", res.Signals,
			"retention", e.retain.runs, "orphan_signal_ttl", e.retain.orphans, "worker", e.worker)
	}
	return res, nil
}

func wrapRetention(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("durable: retention: %w", err)
}

// retentionDue reports whether this engine should do its retention work
// now (Options.Retention, Options.OrphanSignalTTL), and takes it.
func (e *Engine) retentionDue() bool {
	at := e.now()
	if at.IsZero() {
		at = time.Now() // the database clock decides the turn; this only throttles
	}
	return e.retain.due(at)
}

// OrphanSignal is a signal sent to a run id no run has: delivered if a run
// with that id starts within Options.OrphanSignalTTL, deleted after.
type OrphanSignal struct {
	RunID, Name string
	// Bytes is the size of its payload.
	Bytes int
	// SentAt is when it was (last) sent.
	SentAt time.Time
}

// OrphanSignals lists up to limit signals sent to run ids no run has,
// oldest first.
func (e *Engine) OrphanSignals(ctx context.Context, limit int) ([]OrphanSignal, error) {
	if limit <= 0 {
		return nil, task.Errorf(task.InvalidInput, "durable: a limit of %d orphan signals; hint: pass 1 or more", limit)
	}
	found, err := e.store.ListOrphanSignals(ctx, limit, ownNamespace)
	if err != nil {
		return nil, err
	}
	out := make([]OrphanSignal, len(found))
	for i, o := range found {
		out[i] = OrphanSignal{RunID: o.RunID, Name: o.Name, Bytes: o.Bytes, SentAt: o.CreatedAt}
	}
	return out, nil
}

// maxDays is the most days a time.Duration holds.
const maxDays = math.MaxInt64 / int64(24*time.Hour)

// ParseAge reads an age such as a retention: a Go duration ("720h",
// "90m") or whole days ("30d"), not negative and not beyond what a
// time.Duration holds (about 292 years: a longer one would wrap around).
// what names the setting in errors ("--older-than", "[durable] retention").
func ParseAge(what, text string) (time.Duration, error) {
	const hint = "hint: a Go duration such as 720h or 90m, or days such as 30d, at most 106751d (about 292 years)"
	text = strings.TrimSpace(text)
	if text == "" {
		return 0, task.Errorf(task.InvalidInput, "%s is empty; %s", what, hint)
	}
	if days, ok := strings.CutSuffix(text, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		switch {
		case err == nil && n >= 0 && n <= maxDays:
			return time.Duration(n) * 24 * time.Hour, nil
		case err == nil && n > maxDays, errors.Is(err, strconv.ErrRange):
			return 0, task.Errorf(task.InvalidInput, "%s %q is too long; %s", what, text, hint)
		}
	} else if d, err := time.ParseDuration(text); err == nil && d >= 0 {
		return d, nil
	}
	return 0, task.Errorf(task.InvalidInput, "%s %q is not a duration (or is negative or too long); %s", what, text, hint)
}
