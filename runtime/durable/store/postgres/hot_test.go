package postgres

import (
	"context"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
)

// TestJournalledStepIsAHotUpdate: the lease renewal of a journalled step
// (pgAppend, pgAppendBatch) changes no indexed column (claimed_at only, not
// updated_at, which the finished index holds), so PostgreSQL rewrites the
// run's row in place (a HOT update) and adds no entry to its dozen indexes.
// Counted in the writing transaction (pg_stat_get_xact_tuples_hot_updated).
func TestJournalledStepIsAHotUpdate(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	s := New(d, func(string, string) {})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, claimed_at, lease_token)
  SELECT 'r' || g, 'w', 'running', '""', now(), now(), now(), now(), 't' || g FROM generate_series(1, 3) g`); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		sql  string
		args []any
		rows int64
	}{
		{"one step", pgAppend, []any{nil, "r1", "t1", 1, "a", string(store.KindStep), `1`}, 1},
		{"a batch of two", pgAppendBatch(2), []any{nil, "r2", "t2", nil, 1, "a", string(store.KindStep), `1`, "r3", "t3", nil, 1, "a", string(store.KindStep), `1`}, 2},
	}
	for _, c := range cases {
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			// The counts of the session not yet reported are included: the
			// statement's are the difference.
			counts := func() (updated, hot int64, err error) {
				err = tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_updated(CAST('_sky_durable_runs' AS regclass)),
       pg_stat_get_xact_tuples_hot_updated(CAST('_sky_durable_runs' AS regclass))`).Scan(&updated, &hot)
				return updated, hot, err
			}
			updated0, hot0, err := counts()
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, c.sql, c.args...); err != nil {
				return err
			}
			updated, hot, err := counts()
			if err != nil {
				return err
			}
			if updated, hot = updated-updated0, hot-hot0; updated != c.rows || hot != c.rows {
				t.Errorf("%s: %d run rows updated, %d of them HOT; want %d, all HOT", c.name, updated, hot, c.rows)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// TestRunUpdatesTakeNoRowLock: the runs table has no BEFORE ROW UPDATE
// trigger. With one, PostgreSQL locks each row an UPDATE changes before it
// changes it (whatever the trigger's WHEN or column list), a row lock and a
// WAL record more for every step's lease renewal, completion and claim;
// migration 0018 made the last such trigger (the key queue's unqueue) an
// AFTER trigger. The pg_trigger type bits: 1 row, 2 before, 16 update.
func TestRunUpdatesTakeNoRowLock(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := d.QueryMaps(ctx, `SELECT tgname FROM pg_trigger
 WHERE tgrelid = CAST('_sky_durable_runs' AS regclass) AND NOT tgisinternal AND tgtype & 19 = 19`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		t.Errorf("BEFORE ROW UPDATE trigger %s on the runs: every UPDATE of a run would lock the row first", r["tgname"])
	}
	var after int
	if err := d.QueryRow(ctx, `SELECT COUNT(*) FROM pg_trigger
 WHERE tgrelid = CAST('_sky_durable_runs' AS regclass) AND tgname = '_sky_durable_runs_key_unqueue' AND tgtype & 19 = 17`).Scan(&after); err != nil || after != 1 {
		t.Errorf("the AFTER ROW UPDATE trigger _sky_durable_runs_key_unqueue: %d found, %v; want 1", after, err)
	}
}
