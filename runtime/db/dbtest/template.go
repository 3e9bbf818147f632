package dbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"skydurable/runtime/db"
)

// Prepare is what a package's tests do to every fresh database before
// using it (the engine's Setup: its migrations). MainPrepared runs it once
// per driver per test process, on a template that Open then copies.
type Prepare func(ctx context.Context, d *db.DB) error

// template is this process's prepared database per driver: a PostgreSQL
// database that CREATE DATABASE … TEMPLATE copies, or a SQLite file that
// is copied byte for byte.
var template struct {
	prepare Prepare
	mu      sync.Mutex
	made    map[string]string // driver -> template database name or file
	dir     string            // the SQLite template's directory
}

// MainPrepared is Main for a package whose tests prepare each database the
// same way: Open returns a copy of a database prepare ran on once, so the
// migrations are paid once per test process, not once per test. A test
// that needs a database nothing was done to calls OpenEmpty.
func MainPrepared(m *testing.M, prepare Prepare) {
	template.prepare = prepare
	Main(m)
}

// OpenEmpty returns a fresh, empty database of driver, as Open does in a
// package run by Main: for the tests of a package run by MainPrepared that
// need one (the migrations themselves, a schema check).
func OpenEmpty(t testing.TB, driver string) *db.DB {
	t.Helper()
	return openURL(t, driver, URL(t, driver))
}

// PreparedURL is URL for a database prepared as Open's are: a fresh copy
// of the template in a package run by MainPrepared (for a test that opens
// its own pool, through a pooler say), an empty database elsewhere.
func PreparedURL(t testing.TB, driver string) string {
	t.Helper()
	if dsn := preparedURL(t, driver); dsn != "" {
		return dsn
	}
	return URL(t, driver)
}

// preparedURL returns a DSN for a fresh copy of driver's template, making
// the template first; "" when no Prepare was given.
func preparedURL(t testing.TB, driver string) string {
	t.Helper()
	if template.prepare == nil {
		return ""
	}
	name, err := madeTemplate(t, driver)
	if err != nil {
		t.Fatalf("dbtest: preparing the %s template: %v", driver, err)
	}
	if driver == "sqlite" {
		file := filepath.Join(t.TempDir(), "sky.db")
		b, err := os.ReadFile(name)
		if err == nil {
			err = os.WriteFile(file, b, 0o600)
		}
		if err != nil {
			t.Fatalf("dbtest: copying the SQLite template: %v", err)
		}
		return file
	}
	if dsn, ok := spares.take(t, name); ok {
		return dsn
	}
	return createDatabase(t, driver, name)
}

// madeTemplate returns driver's template, making it on first use; the
// copies are made outside the lock, so tests running at once copy at once.
func madeTemplate(t testing.TB, driver string) (string, error) {
	template.mu.Lock()
	defer template.mu.Unlock()
	if template.made == nil {
		template.made = map[string]string{}
	}
	if name, ok := template.made[driver]; ok {
		return name, nil
	}
	name, err := makeTemplate(t, driver)
	if err != nil {
		return "", err
	}
	template.made[driver] = name
	return name, nil
}

// makeTemplate makes and prepares driver's template, closed when it
// returns (a PostgreSQL template must have no session to be copied).
func makeTemplate(t testing.TB, driver string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	var name, dsn string
	if driver == "sqlite" {
		dir, err := os.MkdirTemp("", "sky-template-")
		if err != nil {
			return "", err
		}
		template.dir = dir
		name = filepath.Join(dir, "template.db")
		dsn = name
	} else {
		name = "sky_template_" + randomSuffix()
		if err := adminExec(ctx, ServerURL(), "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
			return "", err
		}
		var err error
		if dsn, err = withDatabase(ServerURL(), name); err != nil {
			return "", err
		}
	}
	d, err := db.Open(ctx, driver, dsn)
	if err != nil {
		return "", err
	}
	err = template.prepare(ctx, d)
	if closeErr := d.Close(); err == nil {
		err = closeErr
	}
	return name, err
}

// dropTemplates removes the templates this process made (Run calls it
// when the tests are over).
func dropTemplates() error {
	template.mu.Lock()
	defer template.mu.Unlock()
	if template.dir != "" {
		os.RemoveAll(template.dir)
	}
	if name, ok := template.made["postgres"]; ok {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		defer cancel()
		if err := adminExec(ctx, ServerURL(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("cannot drop the template database %s: %w", name, err)
		}
	}
	return nil
}
