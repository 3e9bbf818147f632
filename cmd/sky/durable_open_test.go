package main

import (
	"context"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestDurableCLIStatementTimeout: `sky durable` (but worker) opens
// PostgreSQL with a 30 s statement_timeout (one in the URL wins:
// runtime/db's TestPostgresStatementTimeout).
func TestDurableCLIStatementTimeout(t *testing.T) {
	ctx := context.Background()
	d, err := openDurableDB(ctx, dbtest.URL(t, "cli"), "", durableStatementTimeout, false, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var got string
	if err := d.QueryRow(ctx, "SHOW statement_timeout").Scan(&got); err != nil || got != "30s" {
		t.Errorf("statement_timeout = %q, %v; want 30s", got, err)
	}
}
