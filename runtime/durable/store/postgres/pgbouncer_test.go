package postgres

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestStoreConformanceThroughPgBouncer runs the shared store suite through
// PgBouncer in transaction pooling mode (a private pgbouncer started by the
// harness, four server connections per database), with the pool in
// db.PoolerTransaction mode: no named prepared statements, no session state.
func TestStoreConformanceThroughPgBouncer(t *testing.T) {
	bouncer := dbtest.StartPgBouncer(t)
	storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
		d := openThrough(t, bouncer, db.PoolerTransaction)
		return New(d, func(string, string) {}), d
	})
}

// openThrough opens a fresh (migrated) database through bouncer with
// pooler.
func openThrough(t *testing.T, bouncer *dbtest.PgBouncer, pooler db.Pooler) *db.DB {
	t.Helper()
	d, err := db.OpenWith(context.Background(), "postgres", bouncer.Route(t, dbtest.PreparedURL(t, "postgres")), db.Options{Pooler: pooler})
	if err != nil {
		t.Fatalf("open through pgbouncer: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestPreparedStatementsThroughPgBouncerSayWhatToSet shows why the pooler
// mode exists: two pools in the default mode, one after the other, prepare
// the same statement on the one server connection PgBouncer hands both,
// and the second fails with a hint naming SKY_DB_POOLER.
func TestPreparedStatementsThroughPgBouncerSayWhatToSet(t *testing.T) {
	bouncer := dbtest.StartPgBouncer(t)
	url := bouncer.Route(t, dbtest.URL(t, "prepared"))
	var errs []error
	for range 2 {
		d, err := db.OpenWith(context.Background(), "postgres", url, db.Options{Pooler: db.PoolerNone})
		if err != nil {
			t.Fatalf("open through pgbouncer: %v", err)
		}
		var n int64
		errs = append(errs, d.QueryRow(context.Background(), `SELECT CAST(? AS BIGINT) + 1`, int64(1)).Scan(&n))
		d.Close()
	}
	if errs[0] != nil {
		t.Fatalf("first pool: %v", errs[0])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "SKY_DB_POOLER=transaction") {
		t.Fatalf("second pool: %v, want the prepared-statement error with a hint naming SKY_DB_POOLER=transaction", errs[1])
	}
}
