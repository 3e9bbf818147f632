package sqlite

import (
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestStoreConformance runs the shared store suite on SQLite.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
		d := dbtest.Open(t, "sqlite")
		return New(d, func(string, string) {}), d
	})
}
