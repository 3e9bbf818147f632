package durable

import (
	"context"
	"path/filepath"
	"testing"

	"skydurable/runtime/db"
)

// TestBindingEngineCacheSkipsTransactions checks that the Sky binding keeps
// one engine per database but none for the short-lived Db of a transaction,
// which would otherwise pile up in a worker that starts or signals runs
// inside Durable.transaction or Db.withTransaction.
func TestBindingEngineCacheSkipsTransactions(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := &binding{engines: map[*db.DB]*Engine{}}

	if first, again := b.engineFor(d), b.engineFor(d); first != again {
		t.Fatalf("two engines for one database: %p and %p", first, again)
	}
	for i := 0; i < 3; i++ {
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			if e := b.engineFor(tx); e.db != tx {
				t.Errorf("the engine of a transaction works on %p, want the transaction %p", e.db, tx)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(b.engines) != 1 {
		t.Fatalf("the binding caches %d engines after 3 transactions, want 1 (the database's own)", len(b.engines))
	}
}
