package main

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// scriptCommands are the custom testscript commands the durable stories use.
//
//	bigjson FILE N        write FILE: a JSON string of N x's (a payload too big for an argument)
//	pgdb                  point DATABASE_URL at a fresh PostgreSQL database (dropped after the tests)
//	waitstep DSN RUN STEP wait (up to 60 s) until RUN's journal holds STEP
//	waitstatus DSN RUN S  wait (up to 60 s) until RUN's status is S (script_worker_test.go)
//
// waitstep lets a script kill a background `sky run` at a known point: right
// after a step's result has been committed.
func scriptCommands(t *testing.T) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"spans": spansCmd,
		"bigjson": func(ts *testscript.TestScript, neg bool, args []string) {
			n, err := strconv.Atoi(args[len(args)-1])
			if neg || len(args) != 2 || err != nil {
				ts.Fatalf("usage: bigjson FILE N")
			}
			ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(`"`+strings.Repeat("x", n)+`"`), 0o644))
		},
		"pgbouncer": pgbouncerCommand(t),
		"pgdb": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 0 {
				ts.Fatalf("usage: pgdb")
			}
			ts.Setenv("DATABASE_URL", dbtest.URL(t, "script"))
		},
		"waitstatus": waitStatus,
		"waitstep": func(ts *testscript.TestScript, neg bool, args []string) {
			if neg || len(args) != 3 {
				ts.Fatalf("usage: waitstep DSN RUN STEP")
			}
			dsn, runID, step := args[0], args[1], args[2]
			if !strings.Contains(dsn, "://") {
				dsn = ts.MkAbs(dsn)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for {
				if journalHas(ctx, dsn, runID, step) {
					return
				}
				select {
				case <-ctx.Done():
					ts.Fatalf("waitstep: run %s never journalled step %s", runID, step)
				case <-time.After(20 * time.Millisecond):
				}
			}
		},
	}
}

// journalHas reports whether the run's journal holds step; a database or
// run that does not exist yet reads as false.
func journalHas(ctx context.Context, dsn, runID, step string) bool {
	driver := "sqlite"
	if strings.Contains(dsn, "://") {
		driver = "postgres"
	}
	d, err := db.Open(ctx, driver, dsn)
	if err != nil {
		return false
	}
	defer d.Close()
	_, journal, err := durable.New(d, durable.Options{}).Describe(ctx, runID)
	if err != nil {
		return false
	}
	for _, e := range journal {
		if e.StepID == step {
			return true
		}
	}
	return false
}
