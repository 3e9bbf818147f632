package postgres

import (
	"context"
	"strings"
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

// TestStepsStayHotOnAFullPage: the runs table leaves room on its pages
// (fillfactor 80, migration 0019), so the lease renewals of steps of runs
// on a page filled by a burst of starts are still HOT updates: with pages
// filled to the brim, the first renewal's new version found no room beside
// the old one and went to another page, with an entry in every index.
// Here 400 runs fill the first pages; 8 runs of the first page each renew
// their lease in one transaction (so no version is pruned in between).
func TestStepsStayHotOnAFullPage(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	s := New(d, func(string, string) {})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, claimed_at, lease_token)
  SELECT 'r' || g, 'w', 'running', '""', now(), now(), now(), now(), 't' || g FROM generate_series(1, 400) g`); err != nil {
		t.Fatal(err)
	}
	var first []string
	rows, err := d.QueryMaps(ctx, `SELECT id FROM _sky_durable_runs WHERE (ctid::text::point)[0] = 0 ORDER BY id LIMIT 8`)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		first = append(first, r["id"])
	}
	var pages int
	if err := d.QueryRow(ctx, `SELECT COUNT(DISTINCT (ctid::text::point)[0]) FROM _sky_durable_runs`).Scan(&pages); err != nil || pages < 2 || len(first) != 8 {
		t.Fatalf("the runs fill %d pages (%v), %d runs on the first; want the first page full", pages, err, len(first))
	}
	err = d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		for _, id := range first {
			if _, err := tx.Exec(ctx, pgAppend, nil, id, "t"+strings.TrimPrefix(id, "r"), 1, "a", string(store.KindStep), `1`); err != nil {
				return err
			}
		}
		var updated, hot int64
		if err := tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_updated(CAST('_sky_durable_runs' AS regclass)),
       pg_stat_get_xact_tuples_hot_updated(CAST('_sky_durable_runs' AS regclass))`).Scan(&updated, &hot); err != nil {
			return err
		}
		if updated != 8 || hot != 8 {
			t.Errorf("8 renewals of runs on a full page: %d run rows updated, %d of them HOT; want all HOT", updated, hot)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
