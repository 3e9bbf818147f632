package durable

import (
	"context"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// This file holds the operator's bulk actions (`sky durable retry|cancel|
// release` with filters, the dashboard's action on a filtered list): the
// single-run Retry, Cancel and Release applied to every run a filter
// selects, in batches of one statement each.

// BulkAction is an action an operator applies to many runs at once.
type BulkAction string

// The bulk actions; each applies to the statuses its single-run call
// accepts (BulkAction.Statuses).
const (
	BulkRetry   BulkAction = "retry"   // as Retry: failed and dead runs
	BulkCancel  BulkAction = "cancel"  // as Cancel: waiting, running and failed runs, with their unfinished descendants
	BulkRelease BulkAction = "release" // as Release: running runs
)

var bulkOps = map[BulkAction]store.Op{BulkRetry: store.OpRetry, BulkCancel: store.OpCancel, BulkRelease: store.OpRelease}

// Statuses lists the statuses a takes runs from, in AllStatuses order.
func (a BulkAction) Statuses() []Status { return store.From(bulkOps[a]) }

// BulkFilter selects the runs of a bulk action; zero fields select every
// run the action applies to.
type BulkFilter struct {
	// Statuses keeps the runs in these statuses, each one the action
	// applies to (default: all of those).
	Statuses []Status
	// Workflow keeps the runs of this workflow; Parent the children of
	// this run.
	Workflow, Parent string
	// CreatedAfter keeps the runs created at or after it, CreatedBefore
	// those created before it (zero: no bound).
	CreatedAfter, CreatedBefore time.Time
	// ErrorContains keeps the runs whose last error contains it
	// (case-sensitive).
	ErrorContains string
}

// DefaultBulkBatch is how many runs one statement of a bulk action changes.
const DefaultBulkBatch = 500

// BulkOptions tune Bulk.
type BulkOptions struct {
	// BatchSize is how many runs one statement changes (default
	// DefaultBulkBatch).
	BatchSize int
	// OnBatch, when set, is called after each batch with the runs it
	// changed so far.
	OnBatch func(changed int64)
}

// BulkResult sums a bulk action.
type BulkResult struct {
	// Changed is how many runs it changed (a run that moved meanwhile to a
	// status the action does not take is left as it is, and not counted).
	Changed int64
	// Batches is how many statements it sent.
	Batches int
}

// checkBulk validates a and f and returns the statuses to walk.
func checkBulk(a BulkAction, f BulkFilter) ([]Status, error) {
	op, ok := bulkOps[a]
	if !ok {
		return nil, task.Errorf(task.InvalidInput, "durable: %q is not a bulk action; hint: retry, cancel or release", a)
	}
	valid := store.From(op)
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = valid
	}
	for _, st := range statuses {
		if !slices.Contains(valid, st) {
			return nil, task.Errorf(task.InvalidInput, "durable: %s applies to %s runs, not %q; hint: a status among %s, or none for all of them",
				a, statusWords(valid, " and "), st, statusWords(valid, ", "))
		}
	}
	if err := checkErrorText(f.ErrorContains); err != nil {
		return nil, err
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		return nil, task.Errorf(task.InvalidInput, "durable: no run is created after %s and before %s; hint: the after bound must be the earlier one",
			f.CreatedAfter.UTC().Format(time.RFC3339), f.CreatedBefore.UTC().Format(time.RFC3339))
	}
	return statuses, nil
}

// checkErrorText refuses an error text to filter by that no stored error
// holds (errors are stored as valid UTF-8 without NUL, storableText) and
// PostgreSQL would refuse as a parameter, as store.CheckSearch does.
func checkErrorText(text string) error {
	switch {
	case !utf8.ValidString(text):
		return task.Errorf(task.InvalidInput, "durable: the error text %q is not UTF-8 (byte %d); hint: filter by text as it appears in a run's last error", text, invalidUTF8At(text))
	case strings.ContainsRune(text, 0):
		return task.Errorf(task.InvalidInput, "durable: the error text %q holds a NUL character, which no stored error does; hint: leave it out (a NUL in an error is stored as \\x00)", text)
	}
	return nil
}

// statusWords joins statuses with sep before the last one ("failed and
// dead") or everywhere.
func statusWords(statuses []Status, sep string) string {
	words := make([]string, len(statuses))
	for i, s := range statuses {
		words[i] = string(s)
	}
	if sep == ", " || len(words) < 2 {
		return strings.Join(words, sep)
	}
	return strings.Join(words[:len(words)-1], ", ") + sep + words[len(words)-1]
}

func (f BulkFilter) of(st Status) store.BulkFilter {
	return store.BulkFilter{Status: st, Workflow: f.Workflow, Parent: f.Parent, CreatedAfter: f.CreatedAfter,
		CreatedBefore: f.CreatedBefore, ErrorContains: f.ErrorContains}
}

// CountBulk counts the runs a would apply to under f now (one count on an
// index per status): what `sky durable retry --dry-run` prints.
func (e *Engine) CountBulk(ctx context.Context, a BulkAction, f BulkFilter) (int64, error) {
	statuses, err := checkBulk(a, f)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, st := range statuses {
		c, err := e.store.CountRuns(ctx, f.of(st))
		if err != nil {
			return n, err
		}
		n += c
	}
	return n, nil
}

// Bulk applies a to every run f selects, oldest first, in batches of one
// statement each (BulkOptions.BatchSize runs), each with the effect of the
// single-run call (Retry, Cancel, Release) and its status rules. Each batch
// starts after the last run the one before selected, so a run is taken at
// most once however its status moves meanwhile, and the walk ends. A
// failed batch ends the walk: the batches before it stay done, and the same
// call again takes up the runs left.
func (e *Engine) Bulk(ctx context.Context, a BulkAction, f BulkFilter, opts BulkOptions) (BulkResult, error) {
	var res BulkResult
	statuses, err := checkBulk(a, f)
	if err != nil {
		return res, err
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBulkBatch
	}
	for _, st := range statuses {
		sf := f.of(st)
		from := store.Cursor{CreatedAt: f.CreatedAfter}
		for {
			if err := ctx.Err(); err != nil {
				return res, task.As(err)
			}
			b, err := e.store.BulkAct(ctx, bulkOps[a], sf, from, opts.BatchSize, e.now())
			if err != nil {
				return res, err
			}
			res.Batches++
			res.Changed += int64(b.Changed)
			if opts.OnBatch != nil {
				opts.OnBatch(res.Changed)
			}
			if b.Selected < opts.BatchSize {
				break
			}
			from = b.Last
		}
	}
	e.log.Info("durable runs changed in bulk", "action", string(a), "runs", res.Changed, "batches", res.Batches)
	return res, nil
}
