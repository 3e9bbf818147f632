// Package dbtest gives tests real, isolated databases: a fresh SQLite file or
// a fresh PostgreSQL database per call, dropped when the test ends (under
// Main in the background: Main waits for every drop before the process
// ends, and a failed drop fails the run). A missing
// PostgreSQL is a loud failure, never a skip: Main starts a private throwaway
// server when none answers and the PostgreSQL binaries are installed.
//
// It may import runtime/db, pgx and the standard library; only tests import
// it.
package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/db"
)

// EnvURL names the environment variable holding the PostgreSQL server URL
// tests use; DefaultURL is used when it is unset.
const (
	EnvURL     = "SKY_TEST_DATABASE_URL"
	DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// connectTimeout bounds each attempt to reach the server.
const connectTimeout = 10 * time.Second

// Drivers lists the drivers every conformance test runs on.
func Drivers() []string { return []string{"sqlite", "postgres"} }

// ServerURL is the PostgreSQL server tests use: $SKY_TEST_DATABASE_URL, else
// DefaultURL.
func ServerURL() string {
	if u := strings.TrimSpace(os.Getenv(EnvURL)); u != "" {
		return u
	}
	return DefaultURL
}

// Open returns a fresh, empty database of driver ("sqlite" or "postgres"),
// closed (and for PostgreSQL dropped) when t ends.
//
// In a package run by MainPrepared the database is a copy of the prepared
// template instead (OpenEmpty gives an empty one there).
func Open(t testing.TB, driver string) *db.DB {
	t.Helper()
	return openURL(t, driver, PreparedURL(t, driver))
}

// openURL opens dsn, closed when t ends.
func openURL(t testing.TB, driver, dsn string) *db.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	d, err := db.Open(ctx, driver, dsn)
	if err != nil {
		t.Fatalf("dbtest: open %s: %v", driver, err)
	}
	// Registered after URL's cleanup, so it runs first: close, then drop.
	t.Cleanup(func() { _ = d.Close() })
	return d
}

// ForEachDriver runs fn as one subtest per driver ("sqlite", "postgres"),
// each with its own fresh database (from Open).
func ForEachDriver(t *testing.T, fn func(t *testing.T, driver string, d *db.DB)) {
	t.Helper()
	forEachDriver(t, Open, fn)
}

// ForEachDriverEmpty is ForEachDriver on empty databases (OpenEmpty), for
// a test of a package run by MainPrepared that makes its own schema.
func ForEachDriverEmpty(t *testing.T, fn func(t *testing.T, driver string, d *db.DB)) {
	t.Helper()
	forEachDriver(t, OpenEmpty, fn)
}

func forEachDriver(t *testing.T, open func(testing.TB, string) *db.DB, fn func(t *testing.T, driver string, d *db.DB)) {
	t.Helper()
	for _, driver := range Drivers() {
		t.Run(driver, func(t *testing.T) {
			fn(t, driver, open(t, driver))
		})
	}
}

// URL returns a DSN for a fresh database, for tests that open their own pools
// or hand the DSN to another process. name "sqlite" gives a file path in
// t.TempDir(); any other name gives a fresh PostgreSQL database (its name
// includes name as a label) that is dropped, with its connections, when t
// ends.
func URL(t testing.TB, name string) string {
	t.Helper()
	if name == "sqlite" {
		return filepath.Join(t.TempDir(), "sky.db")
	}
	return createDatabase(t, name, "template0")
}

// createDatabase makes a PostgreSQL database named after name, a copy of
// the database from, dropped when t ends, and returns its DSN.
func createDatabase(t testing.TB, name, from string) string {
	t.Helper()
	server := ServerURL()
	dbName := "sky_t_" + label(name) + randomSuffix()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := adminExec(ctx, server, "CREATE DATABASE "+dbName+" TEMPLATE "+from); err != nil {
		t.Fatalf("dbtest: cannot create a PostgreSQL test database on %s: %v\n%s", redact(server), err, howToStart)
	}
	t.Cleanup(func() { drop(t, server, dbName) })
	u, err := withDatabase(server, dbName)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	return u
}

// drops are the test databases being dropped in the background (under
// Run, which waits for them: a test does not wait for its database to go);
// dropping bounds how many at once.
var (
	drops     sync.WaitGroup
	dropping  = make(chan struct{}, 4)
	dropMu    sync.Mutex
	dropErrs  []error
	dropLater atomic.Bool // Run is in charge: it waits for the drops
)

// drop drops the test database dbName of server: in the background under
// Run, which reports a failure and fails the run; else at once, failing t.
func drop(t testing.TB, server, dbName string) {
	if dropLater.Load() {
		dropInBackground(server, dbName, "test "+t.Name())
		return
	}
	if err := dropDatabase(server, dbName, "test "+t.Name()); err != nil {
		t.Error(err)
	}
}

// dropInBackground drops dbName (owner says whose it was) while the tests
// go on; awaitDrops waits for it.
func dropInBackground(server, dbName, owner string) {
	drops.Add(1)
	go func() {
		defer drops.Done()
		dropping <- struct{}{}
		defer func() { <-dropping }()
		if err := dropDatabase(server, dbName, owner); err != nil {
			dropMu.Lock()
			dropErrs = append(dropErrs, err)
			dropMu.Unlock()
		}
	}()
}

// dropDatabase drops dbName, with its connections.
func dropDatabase(server, dbName, owner string) error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if err := adminExec(ctx, server, "DROP DATABASE IF EXISTS "+dbName+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("dbtest: cannot drop test database %s (%s): %w", dbName, owner, err)
	}
	return nil
}

// awaitDrops waits for the background drops and returns their errors.
func awaitDrops() error {
	drops.Wait()
	dropMu.Lock()
	defer dropMu.Unlock()
	return errors.Join(dropErrs...)
}

const howToStart = "hint: start PostgreSQL (e.g. `pg_ctlcluster 15 main start`), or set " + EnvURL +
	" to a server URL, or call dbtest.Main from TestMain so a private server is started from the " +
	"PostgreSQL binaries (apt-get install postgresql)"

var labelUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// label turns name into a short identifier fragment for a database name.
func label(name string) string {
	s := labelUnsafe.ReplaceAllString(strings.ToLower(name), "")
	if len(s) > 16 {
		s = s[:16]
	}
	if s == "" || s == "postgres" || s == "postgresql" {
		return ""
	}
	return s + "_"
}

// randomSuffix makes a database name unique (crypto/rand.Read never fails).
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// adminExec runs one statement on the server's own database.
func adminExec(ctx context.Context, server, sql string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns server with its database replaced by name.
func withDatabase(server, name string) (string, error) {
	if strings.HasPrefix(server, "postgres://") || strings.HasPrefix(server, "postgresql://") {
		u, err := url.Parse(server)
		if err != nil {
			return "", fmt.Errorf("%s is not a valid URL: %w", EnvURL, err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	return server + " dbname=" + name, nil
}

// redact hides a password in a server URL for messages.
func redact(server string) string {
	u, err := url.Parse(server)
	if err != nil || u.User == nil {
		return server
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Answers reports whether a PostgreSQL server accepts connections at server.
func Answers(ctx context.Context, server string) error {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	return conn.Ping(ctx)
}

// Main runs a package's tests (call it from TestMain). When no PostgreSQL
// answers at ServerURL it starts a private server from the installed binaries
// for the whole test process, points SKY_TEST_DATABASE_URL at it and removes
// it afterwards. With neither a server nor binaries it exits with status 1
// and says how to start PostgreSQL.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Run is Main without the exit: it returns m.Run's status. It serves test
// harnesses that wrap testing.M themselves (testscript.Main takes any
// `Run() int`).
func Run(m interface{ Run() int }) int {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	err := Answers(ctx, ServerURL())
	cancel()
	if err != nil {
		srv, startErr := StartPrivateServer(context.Background())
		if startErr != nil {
			fmt.Fprintf(os.Stderr, "dbtest: PostgreSQL does not answer at %s (%v) and a private server could not be started: %v\n%s\n",
				redact(ServerURL()), err, startErr, howToStart)
			return 1
		}
		defer func() {
			if err := srv.Stop(); err != nil {
				fmt.Fprintf(os.Stderr, "dbtest: stopping the private PostgreSQL server: %v\n", err)
			}
		}()
		os.Setenv(EnvURL, srv.URL())
	}
	dropLater.Store(true)
	status := m.Run()
	spares.stop()
	if err := awaitDrops(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		status = max(status, 1)
	}
	if err := dropTemplates(); err != nil {
		fmt.Fprintf(os.Stderr, "dbtest: %v\n", err)
	}
	return status
}
