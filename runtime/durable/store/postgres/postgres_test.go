package postgres

import (
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestStoreConformance runs the shared store suite on PostgreSQL.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
		d := dbtest.Open(t, "postgres")
		return New(d, func(string, string) {}), d
	})
}
