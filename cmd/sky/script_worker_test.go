package main

import (
	"context"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

// waitStatus is the testscript command `waitstatus DSN RUN STATUS`: wait
// (up to 60 s) until run RUN has status STATUS, so a script can stop a
// background worker once it has done its work.
func waitStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: waitstatus DSN RUN STATUS")
	}
	dsn, runID, want := args[0], args[1], durable.Status(args[2])
	driver := "postgres"
	if !strings.Contains(dsn, "://") {
		dsn, driver = ts.MkAbs(dsn), "sqlite"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	last := durable.Status("(no such run)")
	for {
		if d, err := db.Open(ctx, driver, dsn); err == nil {
			r, _, err := durable.New(d, durable.Options{}).Describe(ctx, runID)
			d.Close()
			if err == nil {
				last = r.Status
			}
		}
		if last == want {
			return
		}
		select {
		case <-ctx.Done():
			ts.Fatalf("waitstatus: run %s is %s, never %s", runID, last, want)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
