package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"skydurable/runtime/db/dbtest"
)

// pgbouncerCommand is the testscript command `pgbouncer`: after `pgdb`, it
// starts a private PgBouncer (transaction pooling) in front of the
// server, points DATABASE_URL at the same database through it and keeps
// the direct URL in DIRECT_URL. It stops when the test ends.
func pgbouncerCommand(t *testing.T) func(ts *testscript.TestScript, neg bool, args []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		direct := ts.Getenv("DATABASE_URL")
		if neg || len(args) != 0 || direct == "" {
			ts.Fatalf("usage: pgbouncer (after pgdb)")
		}
		bouncer := dbtest.StartPgBouncer(t)
		ts.Setenv("DIRECT_URL", direct)
		ts.Setenv("DATABASE_URL", bouncer.Route(t, direct))
	}
}
