package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store/storetest"
)

// claimKeyPlan is the claim key (pgClaimKey) as EXPLAIN prints it.
const claimKeyPlan = "(CASE WHEN ((status = 'running'::text) OR ((attempts = 0) AND (history_count = 0))) THEN 1 ELSE 0 END - (2 * (priority)::bigint))"

// claimBound is the claim's bound on the claim index: one level of the
// claim key, from its floor, due by the current time (pgClaimLevels).
const claimBound = "Index Cond: ((ROW(" + claimKeyPlan + ", wake_at) >= ROW(levels.k, levels.lo)) AND (ROW(" + claimKeyPlan + ", wake_at) <= ROW(levels.k, $"

// claimSorted is the plan sorting the picked runs by claim key and due
// time: every due run read for each claim (the plan the claim must not get).
const claimSorted = "2 * (r.priority)::bigint))), r.wake_at"

// TestEmptyPollIsAnIndexRangeOnPostgres checks the claim's plan: with many
// runs waiting and none due, the due index is bounded by the current time
// (an Index Cond on wake_at), so an empty poll reads no waiting run instead
// of filtering them all.
func TestEmptyPollIsAnIndexRangeOnPostgres(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	e := New(d, func(string, string) {})
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
				nil, storetest.Lease.Milliseconds(), nil, c.picks, "token", "worker")
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
		if !strings.Contains(p, claimBound) || strings.Contains(p, "Rows Removed by Join Filter") {
			t.Errorf("%s: the claim does not bound the due index by the time:\n%s", c.name, p)
		}
	}
}

// TestClaimPlanSurvivesABurstOnAFreshTable checks the claim's cached plan on
// a table PostgreSQL has no statistics for (new, or not analyzed since a
// burst of starts): the generic plan is made with 20 runs due, then 3,000
// more are started. The claim must still walk the due index in order and
// stop at the first claimable run; a bitmap scan and a sort would read all
// 3,020 due runs on every claim (5 ms each here, growing with the backlog).
//
// The batched claim (LIMIT 4) is not among them since migration 0004 (the
// priority levels): without statistics PostgreSQL guesses a level holds few
// due runs and sorts one level's due runs for a batch. With statistics (after
// autovacuum's first ANALYZE, which also replans cached statements) it walks
// the claim index in order (TestBatchedStatementsUseTheirIndexesOnPostgres).
func TestClaimPlanSurvivesABurstOnAFreshTable(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	due := func(from, to int) string {
		return fmt.Sprintf(`INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'due' || g, 'w', 'waiting', '""', now() - interval '1 hour' + g * interval '1 ms', now(), now()
    FROM generate_series(%d, %d) g;`, from, to)
	}
	if _, err := d.ExecRaw(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'done' || g, 'w', 'done', '""', now(), now(), now() FROM generate_series(1, 1400) g;`+due(1, 20)); err != nil {
		t.Fatal(err)
	}
	claims := []struct{ name, sql, args string }{
		{"by name", pgClaim, `NULL, 1000, NULL, '["w"]', 'token', 'B'`},
		{"pinned", pgClaimPinned, `NULL, 1000, NULL, '[{"w":"w","v":1}]', 'token', 'B'`},
		{"with a completion", pgCompleteClaimByVersion[0], `NULL, '""', 'none', 'token', 1000, NULL, 'none', '[{"w":"w","v":1}]', 'token', 'B'`},
		{"with completions", pgCompleteClaimBatch(pgPickByName, 2), `NULL, 'none', 't', NULL, '""', NULL, NULL, NULL, NULL, 'none2', 't', NULL, '""', NULL, NULL, NULL, NULL, 1000, NULL, '["w"]', '["a","b"]', 'B'`},
	}
	burst := func(tx *db.DB) error {
		_, err := tx.ExecRaw(ctx, due(100, 3099))
		return err
	}
	for _, c := range claims {
		plan, err := genericPlan(ctx, d, c.sql, c.args, burst)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !strings.Contains(plan, "Index Scan using _sky_durable_runs_claim on _sky_durable_runs r") || strings.Contains(plan, claimSorted) {
			t.Errorf("%s: the claim does not walk the due index in order:\n%s", c.name, plan)
		}
	}
}

// TestClaimPlanSurvivesABurstAfterAnalyze checks every claim statement's
// plan, generic and custom, on a table analyzed when every run was finished
// (100,000 done) and 2,000 runs started since (autovacuum's next ANALYZE is
// up to a minute away: a benchmark or a burst runs in that window). The
// statistics then say no run is live, so the claim and the due index look
// equally cheap; before migration 0010 PostgreSQL took the due index and
// sorted every due run on every claim (the slow mode of the 3-step
// benchmark, 2-3 ms a claim). Each claim must walk the claim index in order.
func TestClaimPlanSurvivesABurstAfterAnalyze(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'done' || g, 'w', 'done', '""', now(), now(), now() FROM generate_series(1, 100000) g;
ANALYZE _sky_durable_runs;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'due' || g, 'w', 'waiting', '""', now() - interval '1 hour' + g * interval '1 ms', now(), now()
    FROM generate_series(1, 2000) g;`); err != nil {
		t.Fatal(err)
	}
	const byName, pinned = `'["w"]'`, `'[{"w":"w","v":1}]'`
	claims := []struct{ name, sql, args string }{
		{"by name", pgClaim, `NULL, 1000, NULL, ` + byName + `, 'token', 'B'`},
		{"pinned", pgClaimPinned, `NULL, 1000, NULL, ` + pinned + `, 'token', 'B'`},
		{"batch", pgClaimWhere(pgPickByName, 8), `NULL, 1000, NULL, ` + byName + `, '["a","b","c","d","e","f","g","h"]', 'B'`},
		{"batch pinned", pgClaimWhere(pgPickByVersion, 8), `NULL, 1000, NULL, ` + pinned + `, '["a","b","c","d","e","f","g","h"]', 'B'`},
		{"with a completion", pgCompleteClaimByVersion[0], `NULL, '""', 'none', 'token', 1000, NULL, 'none', ` + pinned + `, 'token', 'B'`},
		{"with completions", pgCompleteClaimBatch(pgPickByVersion, 8), `NULL` + strings.Repeat(`, 'none', 't', NULL, '""', NULL, NULL, NULL, NULL`, 8) +
			`, 1000, NULL, ` + pinned + `, '["a","b","c","d","e","f","g","h"]', 'B'`},
		{"with limits", pgClaimAdmitted, `NULL, 1000, NULL, ` + byName + `, '[]', 'token', 'B'`},
		{"with limits, gated", pgClaimAdmittedGated, `NULL, 1000, '[]', 1000, NULL, TRUE, '[]', ` + byName + `, '[]', 'token', 'B', '[]'`},
	}
	for _, c := range claims {
		for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
			plan, err := preparedPlan(ctx, d, mode, c.sql, c.args, nil)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.name, mode, err)
			}
			if !strings.Contains(plan, "Index Scan using _sky_durable_runs_claim on _sky_durable_runs r") ||
				strings.Contains(plan, "Sort Key: ((- ") || strings.Contains(plan, "_sky_durable_runs_due") {
				t.Errorf("%s, %s: the claim does not walk the claim index in order:\n%s", c.name, mode, plan)
			}
		}
	}
}
