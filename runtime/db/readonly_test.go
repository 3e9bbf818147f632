package db

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"skydurable/runtime/task"
)

// TestSQLiteReadOnlyWritesNothing: a SQLite file opened ReadOnly (a
// rollback-journal file, as another tool leaves it) is read without one
// byte written, no -wal or -shm file created; a write is PermissionDenied;
// a missing file is NotFound and not created.
func TestSQLiteReadOnlyWritesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	d, err := Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, "CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('kept'); PRAGMA journal_mode=DELETE;"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ro, err := OpenWith(ctx, "sqlite", path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var v string
	if err := ro.QueryRow(ctx, "SELECT v FROM t").Scan(&v); err != nil || v != "kept" {
		t.Fatalf("read %q, %v; want kept", v, err)
	}
	_, err = ro.Exec(ctx, "INSERT INTO t VALUES ('new')")
	if task.As(err).Kind != task.PermissionDenied {
		t.Errorf("a write on a read-only database = %v; want PermissionDenied", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("opening read-only changed the file")
	}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("opening read-only made %s", filepath.Base(path+suffix))
		}
	}

	missing := filepath.Join(t.TempDir(), "none", "app.db")
	if _, err := OpenWith(ctx, "sqlite", missing, Options{ReadOnly: true}); task.As(err).Kind != task.NotFound {
		t.Errorf("read-only open of a missing file = %v; want NotFound", err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); err == nil {
		t.Error("read-only open of a missing file made its directory")
	}
}
