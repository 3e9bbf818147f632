package postgres

import (
	"context"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// TestMain gives every test a migrated database (a copy of a template
// Setup ran on once); the migration tests take empty ones (OpenEmpty).
func TestMain(m *testing.M) {
	dbtest.MainPrepared(m, func(ctx context.Context, d *db.DB) error { return New(d, nil).Setup(ctx) })
}
