package sqlite

import (
	"context"

	"skydurable/runtime/db"
)

// Group commit on SQLite: SQLite has one writer, so the pollers of one
// Engine write one after another; the claims, journal writes and
// completions that are ready while a write is in flight wait for it and
// then share one transaction (store.GroupCommit), one commit and one
// write of the pages they change to the WAL instead of one each. A lone
// write never waits and runs as it did unbatched (so the counts of
// TestCostsAreCounted hold). In a shared transaction each write runs under
// a savepoint of its own: one that fails (a lost lease, a duplicate
// journal position) is rolled back alone and gets exactly the error it
// gets alone. A transaction that fails as a whole committed nothing, and
// each of its writes runs again alone.

// maxBatch bounds the writes of one shared transaction.
const maxBatch = 64

// write is one write waiting for its batch: run makes it on the database
// or the transaction its context carries; after, when set, runs once it
// committed (the done notification of a completion).
type write struct {
	run   func(ctx context.Context) error
	after func()
}

// do makes a write through group commit, or at once on the transaction
// ctx carries.
func (s *Store) do(ctx context.Context, w write) error {
	if s.d.JoinsTransaction(ctx) {
		return w.run(ctx)
	}
	return s.writes.Do(ctx, w)
}

// writeBatch runs a batch: one write alone; several in one transaction.
func (s *Store) writeBatch(ctx context.Context, batch []write) []error {
	errs := make([]error, len(batch))
	alone := func(i int) {
		if errs[i] = batch[i].run(ctx); errs[i] == nil && batch[i].after != nil {
			batch[i].after()
		}
	}
	if len(batch) == 1 {
		alone(0)
		return errs
	}
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		for i, w := range batch {
			var failed bool
			if failed, errs[i] = savepoint(ctx, tx, w.run); failed {
				return errs[i]
			}
		}
		return nil
	})
	for i, w := range batch {
		switch {
		case err != nil:
			alone(i) // the transaction committed nothing
		case errs[i] == nil && w.after != nil:
			w.after()
		}
	}
	return errs
}

// savepoint runs fn on tx under a savepoint, rolled back when fn fails;
// failed says the savepoint itself failed (the transaction is unusable).
func savepoint(ctx context.Context, tx *db.DB, fn func(ctx context.Context) error) (failed bool, err error) {
	if _, err := tx.ExecRaw(ctx, "SAVEPOINT sky_write"); err != nil {
		return true, err
	}
	if err = fn(ctx); err != nil {
		if _, rerr := tx.ExecRaw(ctx, "ROLLBACK TO sky_write"); rerr != nil {
			return true, rerr
		}
	}
	if _, rerr := tx.ExecRaw(ctx, "RELEASE sky_write"); rerr != nil {
		return true, rerr
	}
	return false, err
}
