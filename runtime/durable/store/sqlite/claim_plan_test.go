package sqlite

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestClaimWalksTheClaimIndexInOrder checks the claim's query plan on
// SQLite: every read of the runs table in it goes through the claim index
// (the levels, the run picked) and none sorts, so a claim reads neither the
// backlog nor the levels' runs (the claim key of migration 0015 is the
// index's expression, or SQLite would sort every due run of a level).
func TestClaimWalksTheClaimIndexInOrder(t *testing.T) {
	d := setUp(t)
	for name, sql := range map[string]string{"claim": sqliteClaim, "pinned": sqliteClaimPinned, "limited": sqliteClaimLimited} {
		text := strings.Join(queryPlan(t, d, sql), "\n")
		if strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, "USING INDEX _sky_durable_runs_claim (<expr>>?)") ||
			!strings.Contains(text, "SEARCH c USING INDEX _sky_durable_runs_claim (<expr>=? AND wake_at<?)") {
			t.Errorf("%s: the claim does not walk the claim index in order:\n%s", name, text)
		}
	}
}

// setUp opens a SQLite database of the test's own and migrates it.
func setUp(t *testing.T) *db.DB {
	t.Helper()
	d := dbtest.Open(t, "sqlite")
	if err := New(d, func(string, string) {}).Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

// queryPlan is SQLite's plan of sql, one line a step (NULL parameters
// unless args are given).
func queryPlan(t *testing.T, d *db.DB, sql string, args ...any) []string {
	t.Helper()
	if args == nil {
		args = make([]any, strings.Count(sql, "?"))
	}
	rows, err := d.QueryMaps(context.Background(), "EXPLAIN QUERY PLAN "+sql, args...)
	if err != nil {
		t.Fatalf("the plan of %s: %v", sql, err)
	}
	plan := make([]string, len(rows))
	for i, r := range rows {
		plan[i] = r["detail"]
	}
	return plan
}
