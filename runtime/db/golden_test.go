package db_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/errors.golden")

// TestErrorMessagesGolden pins the wording of the errors this package writes
// itself (driver texts vary by server version and are not pinned).
func TestErrorMessagesGolden(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "sqlite")
	mustExec(t, d, "CREATE TABLE g (id INT, s TEXT)")
	mustExec(t, d, "INSERT INTO g VALUES (1, NULL)")
	var s string
	var leaked *db.DB
	_ = d.WithTransaction(ctx, func(_ context.Context, tx *db.DB) error { leaked = tx; return nil })
	lctx, l := db.WithLazyTx(ctx, d)
	_ = l.Commit(ctx)

	cases := []struct {
		name string
		err  func() error
	}{
		{"unknown driver", func() error { _, err := db.Open(ctx, "oracle", "x"); return err }},
		{"sqlite memory URI", func() error { _, err := db.Open(ctx, "sqlite", "file::memory:?cache=shared"); return err }},
		{"argument count", func() error { _, err := d.Exec(ctx, "UPDATE g SET s = ?\n  WHERE id = ?", "x"); return err }},
		{"argument type", func() error { _, err := d.Exec(ctx, "UPDATE g SET s = ?", []string{"x"}); return err }},
		{"null into string", func() error { return d.QueryRow(ctx, "SELECT s FROM g").Scan(&s) }},
		{"scan arity", func() error { return d.QueryRow(ctx, "SELECT id, s FROM g").Scan(&s) }},
		{"scan type", func() error { var f float32; return d.QueryRow(ctx, "SELECT id FROM g").Scan(&f) }},
		{"not an integer", func() error { var n int64; return d.QueryRow(ctx, "SELECT 'abc'").Scan(&n) }},
		{"no rows", func() error { return d.QueryRow(ctx, "SELECT s FROM g WHERE id = ?", 2).Scan(&s) }},
		{"finished transaction", func() error { _, err := leaked.Exec(ctx, "SELECT 1"); return err }},
		{"finished lazy transaction", func() error { _, err := d.Exec(lctx, "SELECT 1"); return err }},
		{"closed", func() error { d.Close(); _, err := d.Exec(ctx, "SELECT 1"); return err }},
	}
	var b strings.Builder
	for _, c := range cases {
		err := c.err()
		if err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		b.WriteString(c.name + ": " + err.Error() + "\n")
	}
	path := filepath.Join("testdata", "errors.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("error messages changed (-golden +got); rerun with -update if intended:\n%s", diff)
	}
}
