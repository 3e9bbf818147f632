package durable

import (
	"context"
	"fmt"
	"time"

	"skydurable/runtime/task"
)

// This file holds the operator-facing calls that work on many runs at once:
// filtered listing (`sky durable ls`) and batched compaction (`sky durable
// compact`, Sky's Durable.compact).

// ListRuns reads runs newest first (by creation time, then id), filtered in
// the database on an index: (created_at, id), (status, created_at, id) or
// (workflow, created_at, id), so it answers from the first rows of an index
// scan whatever the table size.
func (e *Engine) ListRuns(ctx context.Context, f ListFilter) ([]Run, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, task.Errorf(task.InvalidInput,
			"durable: unknown run status %q; hint: one of waiting, running, done, failed, dead, cancelled, timed_out", f.Status)
	}
	return e.store.ListRuns(ctx, f)
}

// Signals reads the signal mailbox of runID, oldest first: the signals
// sent to it, delivered or not. An unknown run has an empty mailbox unless
// signals were sent before it started.
func (e *Engine) Signals(ctx context.Context, runID string) ([]SignalInfo, error) {
	return e.store.ListSignals(ctx, runID)
}

// StatsWindow is how many minutes the per-minute series of Stats cover.
const StatsWindow = 60

// Stats reads the figures of the dashboard's overview and `sky durable
// stats`: runs per workflow and status, runs started and finished in each of
// the last StatsWindow minutes, the run due longest, and the running runs
// whose lease (this engine's held lease, see Options.Heartbeat) ended
// without renewal.
func (e *Engine) Stats(ctx context.Context) (Stats, error) {
	return e.store.Stats(ctx, e.now(), StatsWindow, e.heldLease(), ownNamespace)
}

// DefaultCompactBatch is how many runs one compaction transaction handles.
const DefaultCompactBatch = 1000

// CompactOptions tune CompactOlderThan.
type CompactOptions struct {
	// BatchSize is how many runs one short transaction compacts (default
	// DefaultCompactBatch). Each batch locks only its own runs' rows, with
	// SKIP LOCKED on PostgreSQL, and commits before the next begins.
	BatchSize int
	// OnBatch, when set, is called after each committed batch.
	OnBatch func(CompactBatch)
}

// CompactBatch is what one compaction transaction did.
type CompactBatch struct {
	// Runs is how many runs it compacted; Rows how many journal and signal
	// rows it deleted.
	Runs, Rows int64
	// Took is the wall time of the transaction, from its first statement
	// to its commit: the longest any of its row locks was held.
	Took time.Duration
}

// CompactResult sums a compaction.
type CompactResult struct {
	// Runs is how many runs were compacted; Rows how many journal and
	// signal rows were deleted.
	Runs, Rows int64
	// Batches is the number of transactions; LongestBatch the longest one.
	Batches      int
	LongestBatch time.Duration
}

// CompactOlderThan deletes the journal and signals of every done or cancelled
// run last updated more than olderThan ago, keeping the run rows (status,
// input, output) and stamping them compacted_at. It works in batches of
// short transactions, so it never holds locks for long, and it never touches
// a run that is waiting, running, failed or dead: a failed or dead run keeps
// its journal so Retry does not re-run journalled steps (cancel it first to
// make it compactable). Runs already compacted are skipped on an index.
func (e *Engine) CompactOlderThan(ctx context.Context, olderThan time.Duration, opts CompactOptions) (CompactResult, error) {
	var res CompactResult
	if olderThan < 0 {
		return res, task.Errorf(task.InvalidInput, "durable: a retention of %s is negative; hint: pass how old a finished run must be, e.g. 720h", olderThan)
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultCompactBatch
	}
	var from time.Time
	for {
		if err := ctx.Err(); err != nil {
			return res, task.As(err)
		}
		began := time.Now()
		runs, rows, last, err := e.store.CompactBatch(ctx, olderThan, opts.BatchSize, from, e.now(), ownNamespace)
		from = last
		took := time.Since(began)
		if err != nil {
			return res, err
		}
		if runs == 0 {
			break
		}
		res.Runs += runs
		res.Rows += rows
		res.Batches++
		res.LongestBatch = max(res.LongestBatch, took)
		if opts.OnBatch != nil {
			opts.OnBatch(CompactBatch{Runs: runs, Rows: rows, Took: took})
		}
		e.log.Info("durable runs compacted", "runs", runs, "rows", rows, "took", took, "older_than", olderThan)
		if runs < int64(opts.BatchSize) {
			break
		}
	}
	return res, nil
}

// describeVersions renders the versions a worker has of one workflow.
func describeVersions(vs []int) string {
	s := ""
	for _, v := range vs {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprint(v)
	}
	if s == "" {
		return "none"
	}
	return s
}
