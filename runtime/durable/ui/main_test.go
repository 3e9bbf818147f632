package ui

import (
	"context"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// TestMain starts a private PostgreSQL when none answers at
// dbtest.ServerURL, so the dashboard's PostgreSQL subtests run on a machine
// with the binaries but no server, and gives every test a migrated
// database (a copy of a template the engine's Setup ran on once).
func TestMain(m *testing.M) {
	dbtest.MainPrepared(m, func(ctx context.Context, d *db.DB) error { return durable.New(d, durable.Options{}).Setup(ctx) })
}
