package durable

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/value"
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

// TestRetryPolicyArgClampsHugeBackoff checks that a RetryPolicy from Sky with
// backoffs too long for a time.Duration keeps a huge backoff instead of
// overflowing to a negative one that silently became the 5-minute default.
func TestRetryPolicyArgClampsHugeBackoff(t *testing.T) {
	p, err := retryPolicyArg(value.NewRecord(map[string]value.Value{
		"maxAttempts":      int64(3),
		"initialBackoffMs": int64(math.MaxInt64),
		"maxBackoffMs":     int64(math.MaxInt64),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if century := 100 * 365 * 24 * time.Hour; p.InitialBackoff < century || p.MaxBackoff < century || p.MaxAttempts != 3 {
		t.Fatalf("policy %+v, want 3 attempts and backoffs over a century", p)
	}
}
