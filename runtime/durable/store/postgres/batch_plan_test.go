package postgres

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestBatchedStatementsUseTheirIndexesOnPostgres checks the generic plans
// (what a pooled connection runs after five executions) of the group-commit
// statements with 5,000 live runs among 50,000: the batched journal write
// and completion look each run up by its primary key, and the batched claim
// reads the due index in order and stops at its LIMIT, like the single
// claim. (Rows passed as a JSON parameter, or a LIMIT parameter, were
// planned as a hash join over every running run and a sort of every due
// run: 4-6 ms per statement here, growing with the table.)
func TestBatchedStatementsUseTheirIndexesOnPostgres(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	e := New(d, func(string, string) {})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, lease_token)
  SELECT 'r' || g, 'w', CASE WHEN g <= 40 THEN 'running' ELSE 'done' END, '""', now(), now(), now(), 't' || g
    FROM generate_series(1, 50000) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
  SELECT 'due' || g, 'w', 'waiting', '""', now() - interval '1 hour', now(), now() FROM generate_series(1, 5000) g;
INSERT INTO _sky_durable_flow (workflow, concurrency, per_key, updated_at) VALUES ('w', 1000, 1, now());
ANALYZE`); err != nil {
		t.Fatal(err)
	}
	byKey := []string{"Index Scan using _sky_durable_runs_pkey on _sky_durable_runs r"}
	notByKey := []string{"Seq Scan on _sky_durable_runs", "_sky_durable_runs_due on _sky_durable_runs r", "_sky_durable_runs_status_list"}
	row := func(id string) string { return "'" + id + "', 't" + strings.TrimPrefix(id, "r") + "', NULL" }
	cases := []struct {
		name, sql, args string
		want            []string
		not             []string
	}{
		{"append", pgAppendBatch(2), "NULL, " + row("r10") + ", 2, 'b', 'step', '1', " + row("r20") + ", 2, 'b', 'step', '1'",
			byKey, notByKey},
		{"append of 3 in 4", pgAppendBatch(4), "NULL, " + row("r10") + ", 2, 'b', 'step', '1', " + row("r20") + ", 2, 'b', 'step', '1', " +
			row("r30") + ", 2, 'b', 'step', '1'" + strings.Repeat(", NULL", 7), byKey, notByKey},
		{"complete", pgCompleteBatch(2), "NULL, " + row("r10") + ", '1', 2, 'b', 'step', '1', " + row("r20") + ", '1', NULL, NULL, NULL, NULL",
			byKey, notByKey},
		{"complete of 3 in 4", pgCompleteBatch(4), "NULL, " + row("r10") + ", '1', 2, 'b', 'step', '1', " + row("r20") + ", '1', NULL, NULL, NULL, NULL, " +
			row("r30") + ", '1', NULL, NULL, NULL, NULL" + strings.Repeat(", NULL", 8), byKey, notByKey},
		{"complete and claim", pgCompleteClaimBatch(pgPickByName, 2), "NULL, " + row("r10") + ", '1', 2, 'b', 'step', '1', " + row("r20") +
			`, '1', NULL, NULL, NULL, NULL, 1000, NULL, '["w"]', '["x","y"]', 'B'`,
			append([]string{"Index Scan using _sky_durable_runs_claim on _sky_durable_runs r", claimBound}, byKey...), append([]string{claimSorted}, notByKey[:1]...)},
		{"claim by name", pgClaimWhere(pgPickByName, 2), `NULL, 1000, NULL, '["w"]', '["x","y"]', 'B'`,
			[]string{"Index Scan using _sky_durable_runs_claim on _sky_durable_runs r", claimBound}, []string{claimSorted, "Hash Semi Join"}},
		{"claim pinned", pgClaimWhere(pgPickByVersion, 2), `NULL, 1000, NULL, '[{"w":"w","v":1}]', '["x","y"]', 'B'`,
			[]string{"Index Scan using _sky_durable_runs_claim on _sky_durable_runs r", claimBound}, []string{claimSorted, "Hash Semi Join"}},
		{"claim with limits", pgClaimAdmitted, `NULL, 1000, NULL, '["w"]', '["w"]', 'x', 'B'`,
			[]string{"Index Scan using _sky_durable_runs_claim on _sky_durable_runs r", claimBound}, []string{claimSorted, "Seq Scan on _sky_durable_runs"}},
		{"gated claim with limits", pgClaimAdmittedGated, `NULL, 1000, '["w"]', 1000, NULL, false, '["w"]', '["w"]', '["w"]', 'x', 'B', '["w"]'`,
			[]string{"Index Scan using _sky_durable_runs_claim on _sky_durable_runs r", claimBound, "Index Scan using _sky_durable_runs_running"},
			[]string{claimSorted, "Seq Scan on _sky_durable_runs"}},
	}
	for _, c := range cases {
		p, err := genericPlan(ctx, d, c.sql, c.args, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(p, w) {
				t.Errorf("%s: the generic plan lacks %q:\n%s", c.name, w, p)
			}
		}
		for _, n := range c.not {
			if strings.Contains(p, n) {
				t.Errorf("%s: the generic plan has %q:\n%s", c.name, n, p)
			}
		}
	}
}

// preparedNames numbers genericPlan's prepared statements.
var preparedNames atomic.Int64

// genericPlan returns the generic plan of sql (what a pooled connection
// runs after five executions) executed with args, with EXPLAIN (ANALYZE,
// COSTS OFF), in a transaction that is rolled back. When then is set, the
// plan is made and executed once first, then then runs, then the plan is
// explained: the cached plan meeting the data then changed.
func genericPlan(ctx context.Context, d *db.DB, sql, args string, then func(tx *db.DB) error) (string, error) {
	return preparedPlan(ctx, d, "force_generic_plan", sql, args, then)
}

// preparedPlan is genericPlan with the plan_cache_mode to prepare under
// (force_generic_plan or force_custom_plan).
func preparedPlan(ctx context.Context, d *db.DB, mode, sql, args string, then func(tx *db.DB) error) (string, error) {
	// A prepared statement outlives the transaction: each gets a new name.
	name := "generic" + strconv.FormatInt(preparedNames.Add(1), 10)
	var plan strings.Builder
	explain := func(tx *db.DB) error {
		plan.Reset()
		rows, err := tx.QueryMaps(ctx, "EXPLAIN (ANALYZE, COSTS OFF) EXECUTE "+name+"("+args+")")
		for _, r := range rows {
			plan.WriteString(r["QUERY PLAN"] + "\n")
		}
		return err
	}
	rollback := errors.New("rollback")
	err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if _, err := tx.ExecRaw(ctx, "SET LOCAL plan_cache_mode = "+mode+"; PREPARE "+name+" AS "+numbered(sql)); err != nil {
			return err
		}
		if then != nil {
			if err := explain(tx); err != nil {
				return err
			}
			if err := then(tx); err != nil {
				return err
			}
		}
		if err := explain(tx); err != nil {
			return err
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		return plan.String(), err
	}
	return plan.String(), nil
}

// numbered turns the store's ? placeholders into $1, $2, ... for PREPARE
// (the statements have no ? inside literals).
func numbered(sql string) string {
	var b strings.Builder
	n := 0
	for _, r := range sql {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TestFencedWritesUseTheKey checks the generic plans of a lease holder's
// writes (journal rows, completion, suspension, failure, the transactional
// step's lock; alone and batched) where few runs are running (40 among
// 50,000, analyzed when none was): they look each run up by its primary key. Testing the
// run's status as well made the planner read every 'running' entry of the
// status index (dead ones too) for each single write, and the whole due
// index (every waiting run: the backlog), hash-joined, for each batch.
func TestFencedWritesUseTheKey(t *testing.T) {
	ctx := context.Background()
	// 40 of 50,000 runs are running; the statistics were taken either then
	// or when none was running.
	states := map[string]string{
		"analyzed with 40 running": `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, lease_token)
  SELECT 'r' || g, 'w', CASE WHEN g <= 40 THEN 'running' ELSE 'done' END, '""', now(), now(), now(), 't' || g
    FROM generate_series(1, 50000) g;
ANALYZE _sky_durable_runs`,
		"analyzed with none running": `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, lease_token)
  SELECT 'r' || g, 'w', 'done', '""', now(), now(), now(), NULL FROM generate_series(1, 50000) g;
ANALYZE _sky_durable_runs;
UPDATE _sky_durable_runs SET status = 'running', lease_token = 't' || substr(id, 2)
 WHERE id IN (SELECT 'r' || g FROM generate_series(1, 40) g)`,
	}
	row := func(id string) string { return "'" + id + "', 't" + strings.TrimPrefix(id, "r") + "', NULL" }
	cases := []struct{ name, sql, args string }{
		{"append", pgAppend, "NULL, 'r10', 't10', 2, 'b', 'step', '1'"},
		{"complete", pgComplete, "NULL, '1', 'r10', 't10'"},
		{"complete with the last step", pgCompleteWith, "NULL, '1', 'r10', 't10', 2, 'b', 'step', '1'"},
		{"suspend", pgSuspend, "NULL, NULL, NULL, NULL, NULL, 'r10', 't10', 'sleep'"},
		{"fail", pgFail, "NULL, 'failed', 'e', 1000, 'r10', 't10', 's'"},
		{"lock", pgLockRun, "'r10', 't10'"},
		{"append of 3 in 4", pgAppendBatch(4), "NULL, " + row("r10") + ", 2, 'b', 'step', '1', " + row("r20") + ", 2, 'b', 'step', '1', " +
			row("r30") + ", 2, 'b', 'step', '1'" + strings.Repeat(", NULL", 7)},
		{"complete of 3 in 4", pgCompleteBatch(4), "NULL, " + row("r10") + ", '1', 2, 'b', 'step', '1', " + row("r20") + ", '1', NULL, NULL, NULL, NULL, " +
			row("r30") + ", '1', NULL, NULL, NULL, NULL" + strings.Repeat(", NULL", 8)},
		{"complete of 3 in 4 and claim", pgCompleteClaimBatch(pgPickByVersion, 4), "NULL, " + row("r10") + ", '1', 2, 'b', 'step', '1', " + row("r20") + ", '1', NULL, NULL, NULL, NULL, " +
			row("r30") + ", '1', NULL, NULL, NULL, NULL" + strings.Repeat(", NULL", 8) + `, 1000, NULL, '[{"w":"w","v":1}]', '["x","y","z"]', 'B'`},
	}
	for state, data := range states {
		d := dbtest.Open(t, "postgres")
		if err := New(d, func(string, string) {}).Setup(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := d.ExecRaw(ctx, data); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			plan, err := genericPlan(ctx, d, c.sql, c.args, nil)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if !strings.Contains(plan, "using _sky_durable_runs_pkey on _sky_durable_runs") ||
				strings.Contains(plan, "_sky_durable_runs_status_list") || strings.Contains(plan, "_sky_durable_runs_due on _sky_durable_runs r") {
				t.Errorf("%s, %s: the generic plan does not look the run up by key:\n%s", state, c.name, plan)
			}
		}
	}
}
