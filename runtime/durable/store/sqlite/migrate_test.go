package sqlite

import (
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestMigrationsLoad: the embedded migration files are numbered 1..N.
func TestMigrationsLoad(t *testing.T) { storetest.CheckMigrationFiles(t, migrations, migrationsErr) }

// sqliteSeedUnversioned is a database of the oldest release: the spec's
// three tables without the columns added since (times in epoch ms).
const sqliteSeedUnversioned = `
CREATE TABLE _sky_durable_runs (
  id TEXT PRIMARY KEY, workflow TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('waiting','running','done','failed','dead','cancelled')),
  input TEXT NOT NULL, output TEXT, attempts INTEGER NOT NULL DEFAULT 0, wake_at INTEGER NOT NULL,
  waiting_signal TEXT, last_error TEXT NOT NULL DEFAULT '', claimed_at INTEGER,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE _sky_durable_journal (
  run_id TEXT NOT NULL, step_id TEXT NOT NULL, result TEXT NOT NULL, created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_id));
CREATE TABLE _sky_durable_signals (
  run_id TEXT NOT NULL, name TEXT NOT NULL, payload TEXT NOT NULL, delivered BOOLEAN NOT NULL DEFAULT FALSE,
  created_at INTEGER NOT NULL, PRIMARY KEY (run_id, name));
INSERT INTO _sky_durable_runs (id, workflow, status, input, output, wake_at, created_at, updated_at) VALUES
  ('old', 'w', 'waiting', '{"n":1}', NULL, 1893456000000, 1893456000000, 1893456000000),
  ('finished', 'w', 'done', '{"n":2}', '"ok"', 1893456000000, 1893369600000, 1893369600000);
INSERT INTO _sky_durable_journal (run_id, step_id, result, created_at) VALUES
  ('old', 'b', '2', 1893456002000), ('old', 'a', '1', 1893456001000);
INSERT INTO _sky_durable_signals (run_id, name, payload, created_at) VALUES ('old', 'go', 'true', 1893456000000);
`

// sqliteSeedBaseline is the same data in the shape of version 1.
const sqliteSeedBaseline = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, wake_at, created_at, updated_at) VALUES
  ('old', 'w', 1, 'waiting', '{"n":1}', NULL, 1893456000000, 1893456000000, 1893456000000),
  ('finished', 'w', 1, 'done', '{"n":2}', '"ok"', 1893456000000, 1893369600000, 1893369600000);
INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at) VALUES
  ('old', 1, 'a', 'step', '1', 1893456001000), ('old', 2, 'b', 'step', '2', 1893456002000);
INSERT INTO _sky_durable_signals (run_id, name, payload, created_at) VALUES ('old', 'go', 'true', 1893456000000);
`

// TestMigrations migrates SQLite databases holding data from every earlier
// version to the newest.
func TestMigrations(t *testing.T) {
	open := func(t *testing.T) (store.Store, store.Migrator, *db.DB) {
		d := dbtest.Open(t, "sqlite")
		s := New(d, func(string, string) {})
		return s, s.migrator(), d
	}
	storetest.RunMigrations(t, open, []storetest.MigrationStep{
		// Every path widens the status CHECK of SQLite's stored table
		// definition (0004), so each checks it (and what 0006 added).
		{From: 0, Seed: sqliteSeedUnversioned, Check: storetest.CheckLatestMigrations},
		{From: 1, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},
		{From: 2, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0002 added only a NULL column
		{From: 3, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0003 added only a NULL column
		{From: 4, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0004 added deadline_at and timed_out
		{From: 5, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0005 added child_group and the events table
		{From: 6, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0006 added the flow tables and the rate trigger
		{From: 7, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0007 added the finished runs' index
		{From: 8, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0008 added the rate window
		{From: 9, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations},  // 0009 added the turns table and the signals' time index
		{From: 10, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0010 added the fork columns
		{From: 11, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0011 added the history
		{From: 12, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0012 added the key queue
		{From: 13, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0014 added the namespace index
		{From: 14, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0015 rebuilt the claim index
		{From: 15, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0016 moved the search index to a backlog
		{From: 16, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0017 dropped the step's lease trigger
		{From: 17, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0018 rebuilt the journal keyed by its primary key
		{From: 18, Seed: sqliteSeedBaseline, Check: storetest.CheckLatestMigrations}, // 0019 the running index for keys only
	})
}

// TestSetupOnACurrentSchemaSendsOneStatement: Setup on a migrated database
// reads the version and sends no DDL.
func TestSetupOnACurrentSchemaSendsOneStatement(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	storetest.CheckSetupOnACurrentSchema(t, func(hook store.StatementHook) store.Store { return New(d, hook) })
}
