package store

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"skydurable/runtime/db"
)

// VersionTable records which migrations a database has: one row per
// applied migration, never updated or deleted.
const VersionTable = "_sky_durable_schema_version"

// Migration is one numbered, up-only schema change of a store.
type Migration struct {
	// Version is the number of the file, 1, 2, ...: migrations apply in
	// order and each exactly once.
	Version int
	// Name is the rest of the file name (0002_parent.sql: "parent").
	Name string
	// SQL is the file's text, run as one script.
	SQL string
}

// LoadMigrations reads the files NNNN_name.sql of dir in fsys. Their
// numbers must run 1, 2, 3, ... without gaps or repeats.
func LoadMigrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".sql")
		num, name, found := strings.Cut(base, "_")
		n, err := strconv.Atoi(num)
		if !ok || !found || err != nil || n < 1 || name == "" {
			return nil, fmt.Errorf("durable migrations: %q is not named NNNN_name.sql", path.Join(dir, e.Name()))
		}
		text, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: n, Name: name, SQL: string(text)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("durable migrations in %s: expected version %d, found %d (%s); numbers run 1, 2, 3, ... without gaps", dir, i+1, m.Version, m.Name)
		}
	}
	return out, nil
}

// Migrator applies a store's migrations. The dialect-specific parts are
// its statements; the procedure is the same for every store.
type Migrator struct {
	Migrations []Migration
	// CreateTable creates VersionTable if it does not exist.
	CreateTable string
	// TableExists counts VersionTable (0 or 1).
	TableExists string
	// Lock, when set, runs first in the migration transaction and
	// serialises migrators of several processes (PostgreSQL's advisory
	// lock; SQLite's write transaction already does).
	Lock string
	// Adopt, when set, runs in the migration transaction of a database
	// with no recorded version, before the baseline: what a database made
	// before versioned migrations needs that plain SQL cannot say.
	Adopt func(ctx context.Context, tx *db.DB) error
	Hook  StatementHook
	// LoadErr is the error LoadMigrations gave for Migrations: Setup and
	// Versions return it before touching the database.
	LoadErr error
}

// Setup migrates d to the newest version (Up); on a current schema it costs
// one statement and no DDL or writer lock, since an ALTER TABLE would queue
// every worker behind a `sky durable ls`. It is a store's Setup.
func (m Migrator) Setup(ctx context.Context, d *db.DB) error {
	if m.LoadErr != nil {
		return m.LoadErr
	}
	_, err := m.Up(ctx, d, 0)
	return err
}

// Versions reads d's schema version (Current) and the newest this code
// knows, writing nothing. It is a store's SchemaVersion.
func (m Migrator) Versions(ctx context.Context, d *db.DB) (current, latest int, err error) {
	if m.LoadErr != nil {
		return 0, 0, m.LoadErr
	}
	current, err = m.Current(ctx, d)
	return current, m.Latest(), err
}

// Latest is the version of the newest migration.
func (m Migrator) Latest() int { return len(m.Migrations) }

// Current reads the database's schema version: 0 when no migration was
// ever recorded (a new database, or one made before versioned migrations).
func (m Migrator) Current(ctx context.Context, q *db.DB) (int, error) {
	const sql = "SELECT COALESCE(MAX(version), 0) FROM " + VersionTable
	m.Hook("setup", sql)
	var v int64
	err := q.QueryRow(ctx, sql).Scan(&v)
	if err == nil {
		return int(v), nil
	}
	// The common case costs one statement; only a failure asks whether
	// the table is there at all.
	var n int64
	m.Hook("setup", m.TableExists)
	if err2 := q.QueryRow(ctx, m.TableExists).Scan(&n); err2 != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	// Another process created it between the two statements (Setups
	// racing: TestTriggersInstallOnceUnderConcurrency): read it now.
	m.Hook("setup", sql)
	if err := q.QueryRow(ctx, sql).Scan(&v); err != nil {
		return 0, err
	}
	return int(v), nil
}

// Up migrates the database to version target (0: the latest) in one
// transaction, and returns the migrations it applied. A database already at
// or past target is left alone and costs one statement; a database newer
// than this code knows (a rolling deploy's newer workers migrated it) is
// also left alone, since every migration is additive and older code keeps
// working on it.
func (m Migrator) Up(ctx context.Context, d *db.DB, target int) ([]Migration, error) {
	if target <= 0 || target > m.Latest() {
		target = m.Latest()
	}
	current, err := m.Current(ctx, d)
	if err != nil || current >= target {
		return nil, err
	}
	var applied []Migration
	err = d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		applied = nil
		if m.Lock != "" {
			m.Hook("setup", m.Lock)
			if _, err := tx.Exec(ctx, m.Lock); err != nil {
				return err
			}
		}
		m.Hook("setup", m.CreateTable)
		if _, err := tx.ExecRaw(ctx, m.CreateTable); err != nil {
			return err
		}
		// Another process may have migrated while this one waited.
		current, err := m.Current(ctx, tx)
		if err != nil {
			return err
		}
		if current == 0 && m.Adopt != nil {
			if err := m.Adopt(ctx, tx); err != nil {
				return err
			}
		}
		for _, mg := range m.Migrations[current:target] {
			m.Hook("setup", mg.SQL)
			if _, err := tx.ExecRaw(ctx, mg.SQL); err != nil {
				return fmt.Errorf("durable migration %04d_%s: %w", mg.Version, mg.Name, err)
			}
			const record = "INSERT INTO " + VersionTable + " (version, name) VALUES (?, ?)"
			m.Hook("setup", record)
			if _, err := tx.Exec(ctx, record, mg.Version, mg.Name); err != nil {
				return err
			}
			applied = append(applied, mg)
		}
		return nil
	})
	return applied, err
}
