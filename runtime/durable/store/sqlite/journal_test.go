package sqlite

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestJournalIsKeyedByItsOrder: a journal row is in two b-trees (migration
// 0018), the table keyed by (run_id, seq) and the step index, and a replay
// reads the run's entries from the table in order, without a sort.
func TestJournalIsKeyedByItsOrder(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "sqlite")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	rows, err := d.QueryMaps(ctx, `SELECT type, name, sql FROM sqlite_schema
		WHERE tbl_name = '_sky_durable_journal' AND rootpage > 0 ORDER BY type DESC, name`)
	if err != nil {
		t.Fatal(err)
	}
	var trees []string
	for _, r := range rows {
		trees = append(trees, r["type"]+" "+r["name"])
	}
	if got, want := strings.Join(trees, ", "), "table _sky_durable_journal, index _sky_durable_journal_step"; got != want {
		t.Errorf("the journal's b-trees: got %s, want %s", got, want)
	}
	if len(rows) == 0 || !strings.Contains(rows[0]["sql"], "WITHOUT ROWID") {
		t.Errorf("the journal is not a WITHOUT ROWID table: %v", rows)
	}
	plan, err := d.QueryMaps(ctx, "EXPLAIN QUERY PLAN "+sqliteLoadJournal, "r")
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, r := range plan {
		steps = append(steps, r["detail"])
	}
	if got, want := strings.Join(steps, "\n"), "SEARCH _sky_durable_journal USING PRIMARY KEY (run_id=?)"; got != want {
		t.Errorf("a replay's plan:\n%s\nwant:\n%s", got, want)
	}
}
