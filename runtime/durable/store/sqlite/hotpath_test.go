package sqlite

import (
	"context"
	"strings"
	"testing"
)

// TestJournalIsKeyedByItsPrimaryKey: a journal row is in two b-trees
// (migration 0018), the table keyed by its primary key (run_id, step_id)
// and the order index (run_id, seq), and a replay reads the run's entries
// in order on that index, without a sort.
func TestJournalIsKeyedByItsPrimaryKey(t *testing.T) {
	ctx := context.Background()
	d := setUp(t)
	rows, err := d.QueryMaps(ctx, `SELECT type, name, sql FROM sqlite_schema
		WHERE tbl_name = '_sky_durable_journal' AND rootpage > 0 ORDER BY type DESC, name`)
	if err != nil {
		t.Fatal(err)
	}
	var trees []string
	for _, r := range rows {
		trees = append(trees, r["type"]+" "+r["name"])
	}
	if got, want := strings.Join(trees, ", "), "table _sky_durable_journal, index _sky_durable_journal_order"; got != want {
		t.Errorf("the journal's b-trees: got %s, want %s", got, want)
	}
	if len(rows) == 0 || !strings.Contains(rows[0]["sql"], "WITHOUT ROWID") {
		t.Errorf("the journal is not a WITHOUT ROWID table: %v", rows)
	}
	if got, want := strings.Join(queryPlan(t, d, sqliteLoadJournal, "r"), "\n"), "SEARCH _sky_durable_journal USING INDEX _sky_durable_journal_order (run_id=?)"; got != want {
		t.Errorf("a replay's plan:\n%s\nwant:\n%s", got, want)
	}
}

// TestRunningIndexHoldsKeysOnly: a running run without a limit key writes
// no entry in the index of running runs (migration 0019), and the limit
// checks count a workflow's running runs on its status list and a key's on
// that index, never scanning the runs.
func TestRunningIndexHoldsKeysOnly(t *testing.T) {
	ctx := context.Background()
	d := setUp(t)
	if _, err := d.ExecRaw(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, limit_key) VALUES
		('keyed', 'w', 'running', '{}', 1, 1, 1, 'k'), ('keyless', 'w', 'running', '{}', 1, 1, 1, NULL), ('done', 'w', 'done', '{}', 1, 1, 1, 'k')`); err != nil {
		t.Fatal(err)
	}
	var entries int
	if err := d.QueryRow(ctx, `SELECT sum(ncell) FROM dbstat WHERE name = '_sky_durable_runs_running_keys'`).Scan(&entries); err != nil {
		t.Fatal(err)
	}
	if entries != 1 {
		t.Errorf("entries in the running keys' index: got %d, want 1 (the running run with a key)", entries)
	}
	counts := []string{"USING INDEX _sky_durable_runs_workflow_status_list (workflow=? AND status=?)", "USING INDEX _sky_durable_runs_running_keys"}
	for _, c := range []struct {
		name, sql string
		want      []string
	}{
		{"limited claim", sqliteClaimLimited, counts},
		{"stats due", sqliteStatsDue, counts},
		{"stats held", sqliteStatsHeldCount, counts},
		{"flow states", sqliteFlowStates, []string{"USING INDEX _sky_durable_runs_status_list (status=?)"}},
	} {
		plan := queryPlan(t, d, c.sql)
		for _, step := range plan {
			switch step {
			case "SCAN r", "SCAN y", "SCAN c", "SCAN x", "SCAN _sky_durable_runs":
				t.Errorf("%s scans the runs: %s", c.name, step)
			}
		}
		text := strings.Join(plan, "\n")
		for _, want := range c.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not read %s:\n%s", c.name, want, text)
			}
		}
	}
}
