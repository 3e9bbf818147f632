package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/runtime/db"
)

// TestOpenNamesAMissingStore: this package's tests import no store, so
// Open must refuse with the dialect and the import that registers it, and
// work once one is registered.
func TestOpenNamesAMissingStore(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = Open(d, Config{})
	if err == nil || !strings.Contains(err.Error(), "sqlite") || !strings.Contains(err.Error(), "store/stores") {
		t.Fatalf("Open without a registered store = %v, want an error naming sqlite and store/stores", err)
	}
	var got Config
	Register(db.SQLite, func(_ *db.DB, c Config) Store { got = c; return nil })
	defer func() {
		openers.Lock()
		delete(openers.by, db.SQLite)
		openers.Unlock()
	}()
	hook := func(string, string) {}
	if _, err := Open(d, Config{Hook: hook, Beats: true}); err != nil || got.Hook == nil || !got.Beats {
		t.Fatalf("Open with a registered store: err %v, config passed %+v", err, got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register for sqlite did not panic")
		}
	}()
	Register(db.SQLite, func(*db.DB, Config) Store { return nil })
}
