package db

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/runtime/value"
)

// Db.open reads SKY_DB_POOLER as Db.connect does: a value that is not a
// mode fails the Task with a message naming it, before any connection.
func TestDbOpenReadsTheSkyDBPooler(t *testing.T) {
	env := map[string]string{"SKY_DB_POOLER": "statement"}
	ks := KernelsWith(Env{Getenv: func(k string) string { return env[k] }})
	path := filepath.Join(t.TempDir(), "x.db")
	v, err := ks["Db_open"].Fn([]value.Value{"sqlite", path})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(context.Background(), t, v); err == nil || !strings.Contains(err.Error(), `SKY_DB_POOLER="statement"`) {
		t.Fatalf("Db.open with SKY_DB_POOLER=statement: %v, want an error naming it", err)
	}
	env["SKY_DB_POOLER"] = "transaction" // ignored for SQLite
	v, _ = ks["Db_open"].Fn([]value.Value{"sqlite", path})
	if _, err := run(context.Background(), t, v); err != nil {
		t.Fatalf("Db.open on SQLite with SKY_DB_POOLER=transaction: %v", err)
	}
}
