package dbtest_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestPrivateServer starts a real throwaway cluster, uses it, stops it and
// checks nothing is left behind.
func TestPrivateServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := dbtest.StartPrivateServer(ctx)
	if err != nil {
		t.Fatalf("StartPrivateServer: %v", err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			srv.Stop()
		}
	})
	d, err := db.Open(ctx, "postgres", srv.URL())
	if err != nil {
		t.Fatalf("open private server: %v", err)
	}
	if _, err := d.ExecRaw(ctx, "CREATE TABLE probe (n INT); INSERT INTO probe VALUES (41), (1)"); err != nil {
		t.Fatalf("create table: %v", err)
	}
	var sum int64
	if err := d.QueryRow(ctx, "SELECT SUM(n) FROM probe").Scan(&sum); err != nil || sum != 42 {
		t.Fatalf("SUM = %d, %v; want 42", sum, err)
	}
	defer d.Close()
	dir := srv.Dir()
	stopped = true
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// The pool outlived its server: calls fail as Unavailable (retryable).
	_, err = d.Exec(ctx, "INSERT INTO probe VALUES (?)", 1)
	t.Logf("after stop: %v", err)
	var te *task.Error
	if !errors.As(err, &te) || te.Kind != task.Unavailable || !te.Retryable() {
		t.Errorf("Exec after the server stopped: %v; want a retryable Unavailable error", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory %s still exists after Stop (stat: %v)", dir, err)
	}
	short, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if err := dbtest.Answers(short, srv.URL()); err == nil {
		t.Errorf("server at %s still answers after Stop", srv.URL())
	}
}

// TestStartServerKeepsDefaultsAndNamesItsPostmaster starts a cluster with
// PostgreSQL's default settings (the peer benchmark's): fsync and
// synchronous_commit stay on, and PID names the parent of the backend
// serving the connection.
func TestStartServerKeepsDefaultsAndNamesItsPostmaster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := dbtest.StartServer(ctx, "")
	if err != nil {
		t.Fatalf("StartServer: %v", err)
	}
	t.Cleanup(func() { srv.Stop() })
	d, err := db.Open(ctx, "postgres", srv.URL())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer d.Close()
	for _, name := range []string{"fsync", "synchronous_commit"} {
		var v string
		if err := d.QueryRow(ctx, "SELECT current_setting(?)", name).Scan(&v); err != nil || v != "on" {
			t.Errorf("%s = %q (%v), want on", name, v, err)
		}
	}
	pid, err := srv.PID()
	if err != nil {
		t.Fatal(err)
	}
	var backend int64
	if err := d.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		t.Fatal(err)
	}
	stat, err := os.ReadFile("/proc/" + strconv.FormatInt(backend, 10) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
	_, rest, _ := strings.Cut(string(stat), ") ")
	if f := strings.Fields(rest); len(f) < 2 || f[1] != strconv.Itoa(pid) {
		t.Errorf("backend %d's /proc stat %q: want parent %d", backend, stat, pid)
	}
}

// TestOpenIsolatedAndDropped checks each Open is a fresh database and that
// the PostgreSQL one is dropped once its test ended.
func TestOpenIsolatedAndDropped(t *testing.T) {
	var pgName string
	t.Run("inner", func(t *testing.T) {
		dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
			ctx := context.Background()
			if got := d.Dialect().String(); got != driver {
				t.Fatalf("Dialect = %q, want %q", got, driver)
			}
			if _, err := d.Exec(ctx, "CREATE TABLE only_here (id INT)"); err != nil {
				t.Fatalf("a fresh database must not have the table yet: %v", err)
			}
			if driver == "postgres" {
				if err := d.QueryRow(ctx, "SELECT current_database()").Scan(&pgName); err != nil {
					t.Fatal(err)
				}
			}
		})
	})
	if !strings.HasPrefix(pgName, "sky_t_") {
		t.Fatalf("test database name %q, want prefix sky_t_", pgName)
	}
	if err := dbtest.AwaitDrops(); err != nil { // under Main the drops run in the background
		t.Fatal(err)
	}
	admin := dbtest.Open(t, "postgres")
	var n int64
	if err := admin.QueryRow(context.Background(), "SELECT COUNT(*) FROM pg_database WHERE datname = ?", pgName).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test ended", pgName)
	}
}

func TestURLGivesDistinctDatabases(t *testing.T) {
	a, b := dbtest.URL(t, "postgres"), dbtest.URL(t, "worker")
	if a == b {
		t.Fatalf("URL returned the same DSN twice: %s", a)
	}
	if !strings.Contains(b, "sky_t_worker_") {
		t.Errorf("URL(t, \"worker\") = %s, want the label in the database name", b)
	}
	if p := dbtest.URL(t, "sqlite"); !strings.HasSuffix(p, ".db") {
		t.Errorf("URL(t, \"sqlite\") = %s, want a .db file path", p)
	}
}
