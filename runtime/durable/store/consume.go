package store

import (
	"context"
	"time"

	"skydurable/runtime/db"
)

// ConsumeSQL is a dialect's statements and steps for Store.ConsumeSignal;
// its ConsumeSignal is the one procedure both stores follow.
type ConsumeSQL struct {
	DB   *db.DB
	Hook StatementHook
	// Lock, when set, locks the run f fences in tx before the signal is
	// read, so the signal row cannot change under the read (PostgreSQL;
	// SQLite's one writer needs none). It fails with ErrLeaseLost when the
	// lease is not f's.
	Lock func(ctx context.Context, tx *db.DB, f Fence) error
	// Append journals e in tx, fenced by f.
	Append func(ctx context.Context, tx *db.DB, f Fence, e JournalEntry, now time.Time) error
	// Read takes (run id, name) and gives the undelivered signal's payload
	// and trace context; Mark takes (run id, name) and marks it delivered.
	Read, Mark string
}

// ConsumeSignal is Store.ConsumeSignal over c, in one transaction.
func (c ConsumeSQL) ConsumeSignal(ctx context.Context, f Fence, name string, e JournalEntry, accept func(payload, traceContext string) (string, error), now time.Time) (bool, error) {
	found := false
	err := c.DB.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if c.Lock != nil {
			if err := c.Lock(ctx, tx, f); err != nil {
				return err
			}
		}
		var payload, traceContext string
		c.Hook("signal", c.Read)
		err := tx.QueryRow(ctx, c.Read, f.RunID, name).Scan(&payload, &traceContext)
		if IsNoRows(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if e.Result, err = accept(payload, traceContext); err != nil {
			return err
		}
		if err := c.Append(ctx, tx, f, e, now); err != nil {
			return err
		}
		c.Hook("signal", c.Mark)
		if _, err := tx.Exec(ctx, c.Mark, f.RunID, name); err != nil {
			return err
		}
		found = true
		return nil
	})
	return found, err
}
