package postgres

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestMigrationsLoad: the embedded migration files are numbered 1..N.
func TestMigrationsLoad(t *testing.T) { storetest.CheckMigrationFiles(t, migrations, migrationsErr) }

// pgSeedUnversioned is a database of the oldest release: the spec's three
// tables alone, the due index of that time, no version table.
const pgSeedUnversioned = `
CREATE TABLE _sky_durable_runs (
  id TEXT PRIMARY KEY, workflow TEXT NOT NULL, status TEXT NOT NULL, input TEXT NOT NULL, output TEXT,
  attempts INT NOT NULL DEFAULT 0, wake_at TIMESTAMPTZ NOT NULL, waiting_signal TEXT,
  last_error TEXT NOT NULL DEFAULT '', claimed_at TIMESTAMPTZ, created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL);
CREATE INDEX _sky_durable_runs_due ON _sky_durable_runs (wake_at) WHERE status IN ('waiting','running','failed');
CREATE TABLE _sky_durable_journal (
  run_id TEXT NOT NULL, step_id TEXT NOT NULL, result TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (run_id, step_id));
CREATE TABLE _sky_durable_signals (
  run_id TEXT NOT NULL, name TEXT NOT NULL, payload TEXT NOT NULL, delivered BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL, PRIMARY KEY (run_id, name));
INSERT INTO _sky_durable_runs (id, workflow, status, input, output, wake_at, created_at, updated_at) VALUES
  ('old', 'w', 'waiting', '{"n":1}', NULL, '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z'),
  ('finished', 'w', 'done', '{"n":2}', '"ok"', '2030-01-01T00:00:00Z', '2029-12-31T00:00:00Z', '2029-12-31T00:00:00Z');
INSERT INTO _sky_durable_journal (run_id, step_id, result, created_at) VALUES
  ('old', 'b', '2', '2030-01-01T00:00:02Z'), ('old', 'a', '1', '2030-01-01T00:00:01Z');
INSERT INTO _sky_durable_signals (run_id, name, payload, created_at) VALUES ('old', 'go', 'true', '2030-01-01T00:00:00Z');
`

// pgSeedBaseline is the same data in the shape of version 1.
const pgSeedBaseline = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, wake_at, created_at, updated_at) VALUES
  ('old', 'w', 1, 'waiting', '{"n":1}', NULL, '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z'),
  ('finished', 'w', 1, 'done', '{"n":2}', '"ok"', '2030-01-01T00:00:00Z', '2029-12-31T00:00:00Z', '2029-12-31T00:00:00Z');
INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at) VALUES
  ('old', 1, 'a', 'step', '1', '2030-01-01T00:00:01Z'), ('old', 2, 'b', 'step', '2', '2030-01-01T00:00:02Z');
INSERT INTO _sky_durable_signals (run_id, name, payload, created_at) VALUES ('old', 'go', 'true', '2030-01-01T00:00:00Z');
`

// TestMigrations migrates PostgreSQL databases holding data from every
// earlier version to the newest.
func TestMigrations(t *testing.T) {
	open := func(t *testing.T) (store.Store, store.Migrator, *db.DB) {
		d := dbtest.OpenEmpty(t, "postgres")
		s := New(d, func(string, string) {})
		return s, s.migrator(), d
	}
	storetest.RunMigrations(t, open, []storetest.MigrationStep{
		{From: 0, Seed: pgSeedUnversioned, Check: func(t *testing.T, _ store.Store, d *db.DB) {
			// The baseline replaced the oldest release's due index (and
			// 0010 made the claim unable to use it).
			var def string
			if err := d.QueryRow(context.Background(), `SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND indexname = '_sky_durable_runs_due'`).Scan(&def); err != nil {
				t.Fatal(err)
			}
			if want := "WHERE ((status <> ALL (ARRAY['done'::text, 'dead'::text, 'cancelled'::text])) AND (wake_at IS NOT NULL))"; !strings.HasSuffix(def, want) {
				t.Errorf("the due index after migrating is\n%s\nwant it to end with %s", def, want)
			}
		}},
		{From: 1, Seed: pgSeedBaseline},
		{From: 2, Seed: pgSeedBaseline},                                          // 0002 added only a NULL column
		{From: 3, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0003 added only a NULL column
		{From: 4, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0004 added deadline_at and timed_out
		{From: 5, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0005 added child_group and the events table
		{From: 6, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0006 added the flow tables and the gate functions
		{From: 7, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0007 replaced the gate by the admission function
		{From: 8, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0008 added the finished runs' index
		{From: 9, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0009 added the rate window
		{From: 10, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0010 rebuilt the due index
		{From: 11, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0011 added the turns table and the signals' time index
		{From: 12, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0012 added the fork columns
		{From: 13, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0013 added the history
		{From: 14, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0014 added the key queue
		{From: 15, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0016 added the namespace index
		{From: 16, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0017 rebuilt the claim index
		{From: 17, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0018 made the unqueue trigger an AFTER one
		{From: 18, Seed: pgSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0019 set the runs' fillfactor
	})
}

// TestSetupOnACurrentSchemaSendsOneStatement: Setup on a migrated database
// reads the version and sends no DDL.
func TestSetupOnACurrentSchemaSendsOneStatement(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	storetest.CheckSetupOnACurrentSchema(t, func(hook store.StatementHook) store.Store { return New(d, hook) })
}

// TestSetupNamesTheMissingExtension: a role that may not create pg_trgm
// (no CREATE on the database) gets a set-up error naming the extension and
// how to install it, and nothing is migrated; once a superuser created it,
// the same role's set-up succeeds and searches.
func TestSetupNamesTheMissingExtension(t *testing.T) {
	ctx := context.Background()
	admin := dbtest.OpenEmpty(t, "postgres")
	role := fmt.Sprintf("sky_t_trgm_%d", time.Now().UnixNano())
	if _, err := admin.ExecRaw(ctx, "CREATE ROLE "+role+"; GRANT CREATE ON SCHEMA public TO "+role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The database is dropped first (its cleanup was registered
		// before this one); then the role owns nothing.
		_, _ = admin.ExecRaw(context.Background(), "REASSIGN OWNED BY "+role+" TO CURRENT_USER; DROP OWNED BY "+role+"; DROP ROLE "+role)
	})
	var dbName string
	if err := admin.QueryRow(ctx, "SELECT current_database()").Scan(&dbName); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + dbName
	// The session acts as the role (SET ROLE at connection start).
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += "options=-c%20role%3D" + role
	d, err := db.Open(ctx, "postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	s := New(d, func(string, string) {})
	if _, err := s.migrator().Up(ctx, d, 14); err != nil {
		t.Fatalf("migrating to 14 as %s: %v", role, err)
	}
	err = s.Setup(ctx)
	if err == nil || !strings.Contains(err.Error(), `extension "pg_trgm"`) || !strings.Contains(err.Error(), "hint: ") ||
		!strings.Contains(err.Error(), "CREATE EXTENSION pg_trgm") {
		t.Fatalf("Setup as a role that cannot create pg_trgm = %v; want the extension named, with the hint", err)
	}
	if current, _, err := s.SchemaVersion(ctx); err != nil || current != 14 {
		t.Errorf("after the refused set-up the schema is at %d (%v), want 14", current, err)
	}
	if _, err := admin.ExecRaw(ctx, "CREATE EXTENSION pg_trgm"); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatalf("Setup once pg_trgm exists: %v", err)
	}
	if runs, err := s.ListRuns(ctx, store.ListFilter{Search: "anything", Limit: 1}); err != nil || len(runs) != 0 {
		t.Errorf("search after the set-up = %v, %v", runs, err)
	}
}

// TestSearchIndexBuiltBeforehand: the search index an operator builds
// without blocking writes, with the statement docs/durable.md gives, is the
// one migration 0015 would build, and the migration then skips it. The
// extension sits in a schema off the search_path, so set-up first fails
// with the hint saying so, and the statement names that schema.
func TestSearchIndexBuiltBeforehand(t *testing.T) {
	ctx := context.Background()
	d := dbtest.OpenEmpty(t, "postgres")
	s := New(d, func(string, string) {})
	if _, err := s.migrator().Up(ctx, d, 14); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, "CREATE SCHEMA sky_ext; CREATE EXTENSION pg_trgm SCHEMA sky_ext"); err != nil {
		t.Fatal(err)
	}
	if err := s.Setup(ctx); err == nil || !strings.Contains(err.Error(), "search_path") || !strings.Contains(err.Error(), "hint: ") {
		t.Fatalf("Setup with pg_trgm off the search_path = %v; want the hint naming the search_path", err)
	}
	doc, err := os.ReadFile("../../../../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "CREATE INDEX CONCURRENTLY")
	block, _, ok2 := strings.Cut(block, ";")
	if !ok || !ok2 {
		t.Fatal("docs/durable.md has no CREATE INDEX CONCURRENTLY statement")
	}
	build := "CREATE INDEX CONCURRENTLY" + strings.ReplaceAll(block, "gin_trgm_ops", "sky_ext.gin_trgm_ops")
	if _, err := d.ExecRaw(ctx, build); err != nil {
		t.Fatalf("the docs' statement: %v\n%s", err, build)
	}
	if err := s.Setup(ctx); err != nil {
		t.Fatalf("Setup over the index built beforehand: %v", err)
	}
	var n int
	if err := d.QueryRow(ctx, "SELECT COUNT(*) FROM pg_indexes WHERE tablename = '_sky_durable_runs' AND indexname = '_sky_durable_runs_search'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("search indexes = %d (%v), want 1", n, err)
	}
	if current, latest, err := s.SchemaVersion(ctx); err != nil || current != latest {
		t.Errorf("schema at %d of %d (%v)", current, latest, err)
	}
	if _, err := s.ListRuns(ctx, store.ListFilter{Search: "anything", Limit: 1}); err != nil {
		t.Errorf("search after the set-up: %v", err)
	}
}
