package durable

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestEmptyPollIsAnIndexRangeOnPostgres checks the claim's plan: with many
// runs waiting and none due, the due index is bounded by the current time
// (an Index Cond on wake_at), so an empty poll reads no waiting run instead
// of filtering them all.
func TestEmptyPollIsAnIndexRangeOnPostgres(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	e := New(d, Options{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
		SELECT 'r' || g, 'w', 'waiting', '1', now() + interval '1 day', now(), now() FROM generate_series(1, 5000) g`); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, "ANALYZE _sky_durable_runs"); err != nil {
		t.Fatal(err)
	}
	claims := []struct{ name, sql, picks string }{
		{"by name", pgClaim, `["w"]`},
		{"pinned", pgClaimPinned, `[{"w":"w","v":1}]`},
	}
	for _, c := range claims {
		var plan strings.Builder
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			rows, err := tx.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+c.sql,
				nil, DefaultLease.Milliseconds(), c.picks, "token", "worker")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var line string
				if err := rows.Scan(&line); err != nil {
					return err
				}
				plan.WriteString(line + "\n")
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := plan.String()
		if !strings.Contains(p, "Index Cond: (wake_at <= $") || strings.Contains(p, "Rows Removed by Join Filter") {
			t.Errorf("%s: the claim does not bound the due index by the time:\n%s", c.name, p)
		}
	}
}
