package db_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgconn"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A port nothing listens on: bind one, then release it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := l.Addr().(*net.TCPAddr).Port
	l.Close()
	deadURL := "postgres://sky:s3cret-pw@127.0.0.1:" + strconv.Itoa(deadPort) + "/app?connect_timeout=5"
	noDB, err := url.Parse(dbtest.ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	noDB.Path = "/sky_no_such_database"

	cases := []struct {
		name, driver, dsn string
		kind              task.Kind
		mention           []string
		mustNotMention    string
	}{
		{"unknown driver", "mysql", "x", task.InvalidInput, []string{`"mysql"`, `"postgres"`, `"sqlite"`}, ""},
		{"sqlite in-memory URI", "sqlite", "file:jobs.db?mode=memory&cache=shared", task.InvalidInput, []string{"mode=memory", "in-memory", `":memory:"`, "file path"}, ""},
		{"sqlite empty path", "sqlite", "", task.InvalidInput, []string{"file path"}, ""},
		{"postgres refusing", "postgres", deadURL, task.Unavailable, []string{"cannot connect to the server at 127.0.0.1:" + strconv.Itoa(deadPort), "connection refused"}, "s3cret-pw"},
		{"postgres bad dsn", "postgres", "postgres://%zz", task.InvalidInput, []string{"connection string"}, ""},
		// Each cause its own hint, on one line.
		{"postgres no such database", "postgres", noDB.String(), task.NotFound, []string{`database "sky_no_such_database" does not exist`, `; hint: create the database (CREATE DATABASE "sky_no_such_database") or fix its name in the URL`}, "\n"},
		{"postgres unknown host", "postgres", "postgres://sky:s3cret-pw@sky-no-such-host.invalid/app?connect_timeout=5", task.Unavailable, []string{"sky-no-such-host.invalid", "; hint: check the host name of the URL"}, "\n"},
		{"postgres refusing hint", "postgres", deadURL, task.Unavailable, []string{"; hint: is PostgreSQL running and does the database exist?"}, "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := db.Open(ctx, c.driver, c.dsn)
			if err == nil {
				d.Close()
				t.Fatalf("Open(%q, %q) succeeded; want an error", c.driver, c.dsn)
			}
			if got := kindOf(t, err); got != c.kind {
				t.Errorf("kind %v, want %v: %v", got, c.kind, err)
			}
			if !contains(err.Error(), c.mention...) {
				t.Errorf("error %q should mention %q", err, c.mention)
			}
			if c.mustNotMention != "" && strings.Contains(err.Error(), c.mustNotMention) {
				t.Errorf("error %q leaks %q", err, c.mustNotMention)
			}
		})
	}
}

// TestOpenSQLiteMemory: ":memory:" is one private database for the whole
// pool (a table made by one statement is there for the next, in and out of
// a transaction), and RefuseInMemory names it for the durable engine.
func TestOpenSQLiteMemory(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.InMemory() {
		t.Fatal("InMemory() is false for :memory:")
	}
	if _, err := d.ExecRaw(ctx, "CREATE TABLE t (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	err = d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		_, err := tx.Exec(ctx, "INSERT INTO t VALUES (?), (?)", 1, 2)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := d.QueryMaps(ctx, "SELECT count(*) AS c FROM t")
	if err != nil || len(rows) != 1 || rows[0]["c"] != "2" {
		t.Fatalf("count: got %v, %v; want one row c=2", rows, err)
	}
	refused := d.RefuseInMemory("durable.Setup")
	if kindOf(t, refused) != task.InvalidInput || !contains(refused.Error(), "durable.Setup", `":memory:"`, "file path", "DurableTest.run") {
		t.Errorf("RefuseInMemory: %v", refused)
	}
	file, err := db.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	if file.InMemory() || file.RefuseInMemory("x") != nil {
		t.Error("a file database reads as in memory")
	}
}

func TestOpenSQLiteCreatesDirectoriesAndSetsPragmas(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "nested", "dirs", "app.db")
	d, err := db.Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Dialect() != db.SQLite || d.Dialect().String() != "sqlite" {
		t.Errorf("Dialect = %v", d.Dialect())
	}
	got := map[string]string{}
	for _, p := range []string{"journal_mode", "foreign_keys", "synchronous", "busy_timeout", "temp_store", "wal_autocheckpoint"} {
		var v string
		// PRAGMA goes to the writer connection, the one that writes.
		if err := d.QueryRow(ctx, "PRAGMA "+p).Scan(&v); err != nil {
			t.Fatalf("PRAGMA %s: %v", p, err)
		}
		got[p] = v
	}
	want := map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "1", "busy_timeout": "10000", "temp_store": "2",
		"wal_autocheckpoint": "10000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pragmas (-want +got):\n%s", diff)
	}
	// Foreign keys are enforced.
	mustExec(t, d, "CREATE TABLE parent (id INT PRIMARY KEY)")
	mustExec(t, d, "CREATE TABLE child (pid INT REFERENCES parent(id))")
	if _, err := d.Exec(ctx, "INSERT INTO child VALUES (?)", 7); err == nil || kindOf(t, err) != task.InvalidInput {
		t.Errorf("orphan child insert: %v; want an InvalidInput foreign key error", err)
	}
}

// TestSQLiteCheckpointsInTheBackground: a writable SQLite file is
// checkpointed by its background checkpointer, not by the writer's commits
// (those checkpoint only past 10,000 pages of log): after a few hundred
// pages of writes, far below that, the database file grows, which only a
// checkpoint does.
func TestSQLiteCheckpointsInTheBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	d, err := db.Open(ctx, "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	before := size()
	mustExec(t, d, "CREATE TABLE notes (body TEXT)")
	for range 200 {
		mustExec(t, d, "INSERT INTO notes VALUES (?)", strings.Repeat("x", 2000))
	}
	deadline := time.Now().Add(30 * time.Second)
	for size() <= before+200*2000 {
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes 30 s after 200 rows of 2,000 bytes were committed (it was %d): no checkpoint copied them", size(), before)
		}
		time.Sleep(10 * time.Millisecond) // polling the file: no event says a checkpoint ran
	}
}

func TestPostgresSearchPathFromDSN(t *testing.T) {
	ctx := context.Background()
	url := dbtest.URL(t, "postgres")
	setup, err := db.Open(ctx, "postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer setup.Close()
	if _, err := setup.ExecRaw(ctx, "CREATE SCHEMA tenant_a; CREATE TABLE tenant_a.items (name TEXT); INSERT INTO tenant_a.items VALUES ('in schema')"); err != nil {
		t.Fatal(err)
	}
	d, err := db.Open(ctx, "postgres", url+"&search_path=tenant_a")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var name string
	if err := d.QueryRow(ctx, "SELECT name FROM items").Scan(&name); err != nil || name != "in schema" {
		t.Errorf("unqualified table through search_path: %q, %v", name, err)
	}
	mustExec(t, d, "CREATE TABLE made_here (k INT)")
	var schema string
	if err := setup.QueryRow(ctx, "SELECT table_schema FROM information_schema.tables WHERE table_name = ?", "made_here").Scan(&schema); err != nil || schema != "tenant_a" {
		t.Errorf("table created in schema %q (%v), want tenant_a", schema, err)
	}
}

func TestPostgresValuesAsText(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	got, err := d.QueryMaps(context.Background(), `SELECT 1.50::numeric AS num,
		'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::uuid AS u,
		'{"b":1, "a":[1,2]}'::json AS j, '{"b":1}'::jsonb AS jb,
		'2026-03-04'::date AS dt, '2026-03-04 05:06:07'::timestamp AS ts,
		3::smallint AS sm, 1.5::real AS r, 0.1::real AS r2, ARRAY[1,2] AS arr`)
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{
		"num": "1.50", "u": "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
		"j": `{"b":1, "a":[1,2]}`, "jb": `{"b": 1}`,
		"dt": "2026-03-04", "ts": "2026-03-04T05:06:07.000000000Z",
		"sm": "3", "r": "1.5", "r2": "0.1", "arr": "[1,2]",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("text of PostgreSQL values (-want +got):\n%s", diff)
	}
}

// TestTimeIntoTextColumn: a time.Time argument stored in a TEXT column has the
// same text on both drivers.
func TestTimeIntoTextColumn(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 123456000, time.UTC)
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		mustExec(t, d, "CREATE TABLE tt (s TEXT)")
		mustExec(t, d, "INSERT INTO tt VALUES (?)", at)
		var s string
		var back time.Time
		if err := d.QueryRow(context.Background(), "SELECT s, s FROM tt").Scan(&s, &back); err != nil {
			t.Fatal(err)
		}
		if s != "2026-12-02T10:00:00.123456000Z" || !back.Equal(at) {
			t.Errorf("stored %q, read back %v; want 2026-12-02T10:00:00.123456000Z and %v", s, back, at)
		}
	})
}

// TestSchemaChangeUnderCachedStatements: after ALTER TABLE, statements whose
// result shape changed keep working (PostgreSQL caches prepared plans per
// connection; SQLite re-prepares by itself).
func TestSchemaChangeUnderCachedStatements(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.URL(t, driver)
			var pools [2]*db.DB
			for i := range pools {
				d, err := db.Open(ctx, driver, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { d.Close() })
				pools[i] = d
			}
			a, other := pools[0], pools[1]
			mustExec(t, a, "CREATE TABLE shape (id INT PRIMARY KEY, v TEXT)")
			mustExec(t, a, "INSERT INTO shape VALUES (1, 'x')")
			if _, err := a.QueryMaps(ctx, "SELECT * FROM shape WHERE id = ?", 1); err != nil {
				t.Fatal(err)
			}
			if _, err := other.Exec(ctx, "UPDATE shape SET v = ? WHERE id = ? RETURNING *", "y", 1); err != nil {
				t.Fatal(err)
			}
			// The same pool alters the table: its own cached statements must not go stale.
			mustExec(t, a, "ALTER TABLE shape ADD COLUMN extra TEXT")
			rows, err := a.QueryMaps(ctx, "SELECT * FROM shape WHERE id = ?", 1)
			if err != nil || len(rows) != 1 || len(rows[0]) != 3 {
				t.Fatalf("SELECT * after ALTER on the same pool: %v, %v; want one row of 3 columns", rows, err)
			}
			// Another pool's cached UPDATE ... RETURNING * is retried transparently.
			if n, err := other.Exec(ctx, "UPDATE shape SET v = ? WHERE id = ? RETURNING *", "z", 1); err != nil || n != 1 {
				t.Fatalf("Exec with a stale cached plan: %d, %v; want 1 row, no error", n, err)
			}
		})
	}
}

// TestPostgresConnectTimeout: a server that accepts and never answers fails
// the open after connect_timeout, with an error naming the address and the
// timeout.
func TestPostgresConnectTimeout(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never answered
		}
	}()
	defer func() {
		l.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	}()
	addr := l.Addr().String()
	d, err := db.Open(context.Background(), "postgres", "postgres://sky@"+addr+"/app?connect_timeout=1&sslmode=disable")
	if err == nil {
		d.Close()
		t.Fatal("Open succeeded against a server that never answers")
	}
	if kindOf(t, err) == task.InvalidInput || !contains(err.Error(), addr, "within 1s (connect_timeout)") {
		t.Errorf("error %v (kind %v); want one naming %s and the 1s connect_timeout", err, kindOf(t, err), addr)
	}
}

// TestPostgresURLWithoutHost: a postgres:// URL that names no host is
// refused with a hint rather than connecting to libpq's defaults.
func TestPostgresURLWithoutHost(t *testing.T) {
	t.Setenv("PGHOST", "")
	for _, dsn := range []string{"postgres://", "postgres:///app", "postgresql://sky:s3cret-pw@/app"} {
		d, err := db.Open(context.Background(), "postgres", dsn)
		if err == nil {
			d.Close()
			t.Errorf("Open(%q) succeeded; want a refusal", dsn)
			continue
		}
		if kindOf(t, err) != task.InvalidInput || !contains(err.Error(), "names no host", "hint", "postgres://user@localhost:5432/dbname") || strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("Open(%q): %v; want an InvalidInput naming the URL (no password) with a hint", dsn, err)
		}
	}
}

// TestPostgresStatementTimeout: Options.StatementTimeout sets
// statement_timeout on every connection; one in the URL wins.
func TestPostgresStatementTimeout(t *testing.T) {
	ctx := context.Background()
	url := dbtest.URL(t, "postgres")
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	for _, c := range []struct{ dsn, want string }{
		{url, "1234ms"},
		{url + sep + "statement_timeout=5000", "5s"},
	} {
		d, err := db.OpenWith(ctx, "postgres", c.dsn, db.Options{StatementTimeout: 1234 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		err = d.QueryRow(ctx, "SHOW statement_timeout").Scan(&got)
		d.Close()
		if err != nil || got != c.want {
			t.Errorf("statement_timeout = %q, %v; want %q", got, err, c.want)
		}
	}
}

// TestDefaultConnectTimeout: a URL without connect_timeout gets the 10 s
// default; connect_timeout in the URL, or PGCONNECT_TIMEOUT, wins.
func TestDefaultConnectTimeout(t *testing.T) {
	for _, c := range []struct {
		dsn, env string
		want     time.Duration
	}{
		{"postgres://sky@127.0.0.1:5432/app", "", db.DefaultConnectTimeout},
		{"postgres://sky@127.0.0.1:5432/app?connect_timeout=3", "", 3 * time.Second},
		{"postgres://sky@127.0.0.1:5432/app", "4", 4 * time.Second},
	} {
		t.Setenv("PGCONNECT_TIMEOUT", c.env)
		cfg, err := pgconn.ParseConfig(c.dsn)
		if err != nil {
			t.Fatal(err)
		}
		db.SetDefaultConnectTimeout(cfg, c.dsn)
		if cfg.ConnectTimeout != c.want {
			t.Errorf("%s with PGCONNECT_TIMEOUT=%q: connect timeout %v, want %v", c.dsn, c.env, cfg.ConnectTimeout, c.want)
		}
	}
}
