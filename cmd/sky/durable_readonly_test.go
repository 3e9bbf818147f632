package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestDurableInspectionWritesNothing: ls, show, stats, signals, schedules,
// namespaces and diff read a SQLite file without writing one byte to it (read-only,
// no schema made or migrated), also a rollback-journal file another tool
// left; on an empty file ls says there are no runs and leaves it empty; on
// PostgreSQL ls on a database without the tables creates none.
func TestDurableInspectionWritesNothing(t *testing.T) {
	ctx := context.Background()
	cli := func(dsn string, args ...string) (int, string) { return runDurableOn(dsn, "", args...) }

	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	d, err := db.Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	w := durable.Register("w", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "a", task.Succeed(in))
	})
	for _, id := range []string{"r1", "r2"} {
		if err := durable.Start(ctx, e, w, id, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Poll(ctx, []durable.Workflow{w.Erase()}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// A rollback-journal file, as another tool leaves it (a fresh handle:
	// no reader holds the WAL).
	if d, err = db.Open(ctx, "sqlite", path); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"ls"}, {"show", "r1"}, {"stats"}, {"signals", "--orphans"}, {"schedules"}, {"namespaces"}, {"diff", "r1", "r2"}} {
		if code, out := cli(path, args...); code != exitOK {
			t.Errorf("sky durable %v = %d: %s", args, code, out)
		}
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("inspecting the database changed its file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("inspecting the database left files beside it: %v", entries)
	}

	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out := cli(empty, "ls"); code != exitOK || !strings.Contains(out, "no runs (the database has no durable tables yet)") {
		t.Errorf("ls on an empty file = %d: %s", code, out)
	}
	if code, out := cli(empty, "show", "r1"); code != exitFailure || !strings.Contains(out, "the database has no durable tables yet") {
		t.Errorf("show on an empty file = %d: %s", code, out)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Size() != 0 {
		t.Errorf("the empty file after ls and show: %v, %v; want it still empty", fi, err)
	}

	pg := dbtest.URL(t, "postgres")
	if code, out := cli(pg, "ls"); code != exitOK || !strings.Contains(out, "no runs") {
		t.Errorf("ls on an empty PostgreSQL database = %d: %s", code, out)
	}
	pd, err := db.Open(ctx, "postgres", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer pd.Close()
	var tables int64
	if err := pd.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename LIKE '\\_sky\\_durable%'").Scan(&tables); err != nil || tables != 0 {
		t.Errorf("durable tables after ls on PostgreSQL: %d, %v; want none made", tables, err)
	}
}
