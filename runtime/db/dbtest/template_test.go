package dbtest

import (
	"context"
	"testing"

	"skydurable/runtime/db"
)

// TestOpenCopiesThePreparedTemplate: with a Prepare set (as MainPrepared
// sets it), Open gives each test its own copy of a database prepared once,
// OpenEmpty an empty one, and the template is dropped at the end.
func TestOpenCopiesThePreparedTemplate(t *testing.T) {
	prepared := 0
	template.prepare = func(ctx context.Context, d *db.DB) error {
		prepared++
		_, err := d.Exec(ctx, "CREATE TABLE made_once (n INT)")
		return err
	}
	defer func() {
		if err := dropTemplates(); err != nil {
			t.Error(err)
		}
		template.prepare, template.made, template.dir = nil, nil, ""
	}()
	ctx := context.Background()
	for _, round := range []string{"first", "second"} {
		t.Run(round, func(t *testing.T) {
			ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
				if _, err := d.Exec(ctx, "INSERT INTO made_once (n) VALUES (1)"); err != nil {
					t.Fatalf("the copy lacks the prepared table: %v", err)
				}
				var n int64
				if err := d.QueryRow(ctx, "SELECT COUNT(*) FROM made_once").Scan(&n); err != nil || n != 1 {
					t.Fatalf("%d rows (err %v), want 1: a copy must not see another test's rows", n, err)
				}
			})
		})
	}
	if prepared != 2 {
		t.Errorf("prepare ran %d times, want 2 (once per driver)", prepared)
	}
	t.Run("empty", func(t *testing.T) {
		ForEachDriverEmpty(t, func(t *testing.T, driver string, d *db.DB) {
			if _, err := d.Exec(ctx, "CREATE TABLE made_once (n INT)"); err != nil {
				t.Fatalf("OpenEmpty's database is not empty: %v", err)
			}
		})
	})
	name := template.made["postgres"]
	if err := dropTemplates(); err != nil {
		t.Fatal(err)
	}
	admin := OpenEmpty(t, "postgres")
	var n int64
	if err := admin.QueryRow(ctx, "SELECT COUNT(*) FROM pg_database WHERE datname = ?", name).Scan(&n); err != nil || n != 0 {
		t.Errorf("the template %s is still there (%d, %v) after dropTemplates", name, n, err)
	}
}
