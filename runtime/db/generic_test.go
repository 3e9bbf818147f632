package db_test

import (
	"context"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestGenericPlanSetsThePlanModeForItsStatementOnly checks db.GenericPlan on
// PostgreSQL: the statement made with it sees plan_cache_mode
// force_generic_plan, the next statement on the same (only) connection
// sees the default again, and inside a transaction it changes nothing
// (the setting would outlast the statement there). Its rows, read whole or
// closed early, give the connection back; its errors are a plain
// statement's.
func TestGenericPlanSetsThePlanModeForItsStatementOnly(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "postgres", dbtest.URL(t, "generic")+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	generic := db.GenericPlan(ctx)
	mode := func(ctx context.Context, q *db.DB) string {
		t.Helper()
		var m string
		if err := q.QueryRow(ctx, "SELECT current_setting('plan_cache_mode')").Scan(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := mode(generic, d); got != "force_generic_plan" {
		t.Errorf("with GenericPlan: plan_cache_mode %q, want force_generic_plan", got)
	}
	if got := mode(ctx, d); got != "auto" {
		t.Errorf("the next statement: plan_cache_mode %q, want auto (the setting is the statement's own)", got)
	}
	if err := d.WithTransaction(generic, func(ctx context.Context, tx *db.DB) error {
		if got := mode(ctx, tx); got != "auto" {
			t.Errorf("in a transaction: plan_cache_mode %q, want auto", got)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	if _, err := d.Exec(ctx, "CREATE TABLE generic_t (v INT)"); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Exec(generic, "INSERT INTO generic_t SELECT generate_series(1, ?)", 3); err != nil || n != 3 {
		t.Fatalf("insert: %d rows, %v; want 3", n, err)
	}
	// Rows closed after the first: the one connection is free again.
	rows, err := d.Query(generic, "SELECT v FROM generic_t ORDER BY v")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	rows.Close()
	var sum int
	if err := d.QueryRow(generic, "SELECT SUM(v) FROM generic_t").Scan(&sum); err != nil || sum != 6 {
		t.Fatalf("sum %d, %v; want 6", sum, err)
	}
	if _, err := d.Exec(generic, "INSERT INTO generic_t VALUES (?)", "not a number"); err == nil || kindOf(t, err) != task.InvalidInput {
		t.Errorf("a bad value: %v; want an InvalidInput error", err)
	}
	if _, err := d.Query(generic, "SELECT nope FROM generic_t"); err == nil || kindOf(t, err) != task.InvalidInput {
		t.Errorf("a bad column: %v; want an InvalidInput error", err)
	}
	if got := mode(ctx, d); got != "auto" {
		t.Errorf("after the errors: plan_cache_mode %q, want auto", got)
	}
}

// TestGenericPlanChangesNothingOnSQLite checks that a context marked for
// generic plans runs SQLite's statements as before.
func TestGenericPlanChangesNothingOnSQLite(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	generic := db.GenericPlan(context.Background())
	if _, err := d.Exec(generic, "CREATE TABLE g (v INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if n, err := d.Exec(generic, "INSERT INTO g VALUES (?), (?)", 1, 2); err != nil || n != 2 {
		t.Fatalf("insert: %d rows, %v; want 2", n, err)
	}
	var sum int
	if err := d.QueryRow(generic, "SELECT SUM(v) FROM g").Scan(&sum); err != nil || sum != 3 {
		t.Fatalf("sum %d, %v; want 3", sum, err)
	}
}
