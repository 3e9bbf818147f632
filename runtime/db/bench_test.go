package db_test

import (
	"context"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// benchDrivers runs fn once per driver on a fresh database with a table
// bench(id INTEGER PRIMARY KEY, v TEXT).
func benchDrivers(b *testing.B, fn func(b *testing.B, d *db.DB)) {
	for _, driver := range dbtest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			d := dbtest.Open(b, driver)
			if _, err := d.Exec(context.Background(), "CREATE TABLE bench (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			fn(b, d)
		})
	}
}

// One autocommitted INSERT: one round trip, one commit.
func BenchmarkExecInsert(b *testing.B) {
	benchDrivers(b, func(b *testing.B, d *db.DB) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			if _, err := d.Exec(ctx, "INSERT INTO bench (id, v) VALUES (?, ?)", i, "value"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A point read by primary key.
func BenchmarkQueryRow(b *testing.B) {
	benchDrivers(b, func(b *testing.B, d *db.DB) {
		ctx := context.Background()
		if _, err := d.Exec(ctx, "INSERT INTO bench (id, v) VALUES (?, ?)", 1, "value"); err != nil {
			b.Fatal(err)
		}
		var v string
		for b.Loop() {
			if err := d.QueryRow(ctx, "SELECT v FROM bench WHERE id = ?", 1).Scan(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A lazy transaction with two writes, committed: the shape of a journalled
// step that also writes its own row.
func BenchmarkLazyTxTwoWrites(b *testing.B) {
	benchDrivers(b, func(b *testing.B, d *db.DB) {
		ctx := context.Background()
		for i := 0; b.Loop(); i++ {
			lctx, l := db.WithLazyTx(ctx, d)
			if _, err := d.Exec(lctx, "INSERT INTO bench (id, v) VALUES (?, ?)", 2*i, "effect"); err != nil {
				b.Fatal(err)
			}
			if _, err := d.Exec(lctx, "INSERT INTO bench (id, v) VALUES (?, ?)", 2*i+1, "journal"); err != nil {
				b.Fatal(err)
			}
			if err := l.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
