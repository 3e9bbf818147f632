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
	ctx, d := runningRuns(t, 3)
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
			updated, hot, err := runUpdates(ctx, tx, func() error {
				_, err := tx.Exec(ctx, c.sql, c.args...)
				return err
			})
			if err == nil && (updated != c.rows || hot != c.rows) {
				t.Errorf("%s: %d run rows updated, %d of them HOT; want %d, all HOT", c.name, updated, hot, c.rows)
			}
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
}

// runningRuns is a PostgreSQL store's database holding n running runs,
// r1..rn, leased with tokens t1..tn, written in one statement (so on as
// few pages as they fit in).
func runningRuns(t *testing.T, n int) (context.Context, *db.DB) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, claimed_at, lease_token)
  SELECT 'r' || g, 'w', 'running', '""', now(), now(), now(), now(), 't' || g FROM generate_series(1, CAST(? AS INT)) g`, n); err != nil {
		t.Fatal(err)
	}
	return ctx, d
}

// runUpdates runs write in tx and returns how many run rows it updated and
// how many of those updates were HOT (pg_stat_get_xact_tuples_*: the
// session's counts not yet reported are included, so write's are the
// difference).
func runUpdates(ctx context.Context, tx *db.DB, write func() error) (updated, hot int64, err error) {
	counts := func() (updated, hot int64, err error) {
		err = tx.QueryRow(ctx, `SELECT pg_stat_get_xact_tuples_updated(CAST('_sky_durable_runs' AS regclass)),
       pg_stat_get_xact_tuples_hot_updated(CAST('_sky_durable_runs' AS regclass))`).Scan(&updated, &hot)
		return updated, hot, err
	}
	updated0, hot0, err := counts()
	if err != nil {
		return 0, 0, err
	}
	if err := write(); err != nil {
		return 0, 0, err
	}
	updated, hot, err = counts()
	return updated - updated0, hot - hot0, err
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
	ctx, d := runningRuns(t, 400)
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
		updated, hot, err := runUpdates(ctx, tx, func() error {
			for _, id := range first {
				if _, err := tx.Exec(ctx, pgAppend, nil, id, "t"+strings.TrimPrefix(id, "r"), 1, "a", string(store.KindStep), `1`); err != nil {
					return err
				}
			}
			return nil
		})
		if err == nil && (updated != 8 || hot != 8) {
			t.Errorf("8 renewals of runs on a full page: %d run rows updated, %d of them HOT; want all HOT", updated, hot)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAQueuedRunLeavesTheQueueInOneWrite: a cancel of a run queued behind
// its key's head clears key_queued in the row version it writes (one
// update of the row, where migration 0018's AFTER trigger would add a
// second); any other statement that takes a queued run out of 'waiting' is
// caught by that trigger.
func TestAQueuedRunLeavesTheQueueInOneWrite(t *testing.T) {
	ctx, d := runningRuns(t, 0)
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, limit_key, key_queued)
  SELECT 'q' || g, 'w', 'waiting', '""', 'infinity', now(), now(), 'k', TRUE FROM generate_series(1, 2) g`); err != nil {
		t.Fatal(err)
	}
	s := New(d, func(string, string) {})
	queued := func(id string) bool {
		var q bool
		if err := d.QueryRow(ctx, `SELECT key_queued FROM _sky_durable_runs WHERE id = ?`, id).Scan(&q); err != nil {
			t.Fatal(err)
		}
		return q
	}
	err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		updated, _, err := runUpdates(ctx, tx, func() error {
			var n int64
			return tx.QueryRow(ctx, pgCancel, nil, "q1", "operator").Scan(&n)
		})
		if err == nil && updated != 1 {
			t.Errorf("the cancel of a queued run updated its row %d times, want 1", updated)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.ReadRun(ctx, "q1"); err != nil || r.Status != store.StatusCancelled || queued("q1") {
		t.Errorf("q1: %s, key_queued %v (%v); want cancelled and out of the queue", r.Status, queued("q1"), err)
	}
	if _, err := d.Exec(ctx, `UPDATE _sky_durable_runs SET status = 'dead' WHERE id = 'q2'`); err != nil {
		t.Fatal(err)
	}
	if queued("q2") {
		t.Error("q2, made dead by a statement that left key_queued set, is still queued: the trigger did not clear it")
	}
}
