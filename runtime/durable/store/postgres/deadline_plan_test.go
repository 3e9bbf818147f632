package postgres

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestTimeOutRunsReadsTheDeadlineIndex: the sweep Poll runs once a second
// reads the partial deadline index, never the runs without a deadline or
// the finished ones, then the overdue runs by key and their children on the
// parent index, in its generic (cached) plan, also on a table without
// statistics.
func TestTimeOutRunsReadsTheDeadlineIndex(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, nil).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'open' || g, 'w', 'waiting', '""', now(), now(), now() FROM generate_series(1, 3000) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, deadline_at)
  SELECT 'done' || g, 'w', 'done', '""', now(), now(), now(), now() - interval '1 hour' FROM generate_series(1, 3000) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, deadline_at)
  SELECT 'late' || g, 'w', 'waiting', '""', 'infinity', now(), now(), now() - interval '1 minute' FROM generate_series(1, 5) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, parent_id)
  SELECT 'late1/' || g, 'w', 'waiting', '""', now(), now(), now(), 'late1' FROM generate_series(1, 2) g;`); err != nil {
		t.Fatal(err)
	}
	plan, err := genericPlan(ctx, d, pgTimeOutRuns, `NULL, 1000`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "_sky_durable_runs_deadline on _sky_durable_runs r") || strings.Contains(plan, "Seq Scan on _sky_durable_runs") ||
		strings.Contains(plan, "_sky_durable_runs_status_list") || !strings.Contains(plan, "Index Scan on _sky_durable_runs_parent") {
		t.Errorf("the sweep does not read the deadline index:\n%s", plan)
	}
	if !strings.Contains(plan, "rows=5 ") || !strings.Contains(plan, "CTE Scan on children (actual time=") || !strings.Contains(plan, "rows=2 ") {
		t.Errorf("the sweep's plan does not show the 5 overdue runs and 2 children:\n%s", plan)
	}
}
