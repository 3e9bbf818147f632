package sqlite

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestClaimWalksTheClaimIndexInOrder checks the claim's query plan on
// SQLite: every read of the runs table in it goes through the claim index
// (the levels, the run picked) and none sorts, so a claim reads neither the
// backlog nor the levels' runs (the claim key of migration 0015 is the
// index's expression, or SQLite would sort every due run of a level).
func TestClaimWalksTheClaimIndexInOrder(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "sqlite")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	for name, sql := range map[string]string{"claim": sqliteClaim, "pinned": sqliteClaimPinned, "limited": sqliteClaimLimited} {
		rows, err := d.QueryMaps(ctx, "EXPLAIN QUERY PLAN "+sql, make([]any, strings.Count(sql, "?"))...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for _, r := range rows {
			plan = append(plan, r["detail"])
		}
		text := strings.Join(plan, "\n")
		if strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, "USING INDEX _sky_durable_runs_claim (<expr>>?)") ||
			!strings.Contains(text, "SEARCH c USING INDEX _sky_durable_runs_claim (<expr>=? AND wake_at<?)") {
			t.Errorf("%s: the claim does not walk the claim index in order:\n%s", name, text)
		}
	}
}
