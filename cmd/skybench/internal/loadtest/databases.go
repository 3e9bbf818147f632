package loadtest

// Every measurement gets its own database, created here and dropped when
// the measurement ends: a fresh PostgreSQL database on the server (named
// sky_bench_<label>_<random>, so the load run never touches a database it
// did not make) or a SQLite file in a fresh temporary directory.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/db"
)

// EnvURL names the environment variable holding the PostgreSQL server URL,
// the one the tests use (runtime/db/dbtest); DefaultURL is used when it is
// unset.
const (
	EnvURL     = "SKY_TEST_DATABASE_URL"
	DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
)

// ServerURL is $SKY_TEST_DATABASE_URL, else DefaultURL.
func ServerURL() string {
	if u := strings.TrimSpace(os.Getenv(EnvURL)); u != "" {
		return u
	}
	return DefaultURL
}

// adminTimeout bounds creating and dropping a database.
const adminTimeout = 30 * time.Second

// cleanups is a stack of teardown steps, run last first (as testing.TB's
// Cleanup runs them).
type cleanups []func()

func (c *cleanups) add(f func()) { *c = append(*c, f) }

func (c *cleanups) run() {
	for i := len(*c) - 1; i >= 0; i-- {
		(*c)[i]()
	}
	*c = nil
}

// freshDatabase creates a database on the server and returns its URL; cl
// drops it, with its connections, even after ctx is cancelled.
func (r *runner) freshDatabase(ctx context.Context, cl *cleanups, label string) (string, error) {
	server := r.cfg.ServerURL
	u, err := url.Parse(server)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("the database URL %q is not a postgres:// URL (the counting proxy needs one)", redact(server))
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := "sky_bench_" + labelUnsafe.ReplaceAllString(strings.ToLower(label), "") + "_" + hex.EncodeToString(b[:])
	actx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	if err := adminExec(actx, server, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
		return "", fmt.Errorf("cannot create a database on %s: %w\nhint: start PostgreSQL (e.g. `pg_ctlcluster 15 main start`) or pass -database (default $%s, else %s)",
			redact(server), err, EnvURL, DefaultURL)
	}
	cl.add(func() {
		ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
		defer cancel()
		if err := adminExec(ctx, server, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			fmt.Fprintf(r.cfg.Log, "skybench: cannot drop database %s: %v\n", name, err)
		}
	})
	u.Path = "/" + name
	return u.String(), nil
}

var labelUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

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

// tempDir makes a temporary directory that cl removes.
func tempDir(cl *cleanups) (string, error) {
	dir, err := os.MkdirTemp("", "skybench-")
	if err != nil {
		return "", err
	}
	cl.add(func() { os.RemoveAll(dir) })
	return dir, nil
}

// withParam adds key=value to the query of a PostgreSQL URL.
func withParam(dsn, key, value string) string {
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + value
}

// open opens a pool of driver on dsn that cl closes.
func open(ctx context.Context, cl *cleanups, driver, dsn string) (*db.DB, error) {
	d, err := db.Open(ctx, driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", driver, err)
	}
	cl.add(func() { d.Close() })
	return d, nil
}

// openPG opens a PostgreSQL pool of size n on dsn that cl closes.
func openPG(ctx context.Context, cl *cleanups, dsn string, n int) (*db.DB, error) {
	return open(ctx, cl, "postgres", withParam(dsn, "pool_max_conns", strconv.Itoa(n)))
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

// sqlitePath is a fresh SQLite file in a temporary directory that cl
// removes.
func sqlitePath(cl *cleanups) (string, error) {
	dir, err := tempDir(cl)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "sky.db"), nil
}
