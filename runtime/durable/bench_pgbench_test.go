package durable_test

// The reference figure of the load run: the single-row-insert commit rate of
// the same PostgreSQL server, measured with pgbench.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// pgbenchClients and pgbenchSeconds shape the reference run: 8 clients
// (as the 8-poller load), one INSERT per transaction.
const (
	pgbenchClients = 8
	pgbenchSeconds = 5
)

// findPgbench looks for pgbench on PATH, then among the installed
// PostgreSQL versions (newest first).
func findPgbench() (string, error) {
	if p, err := exec.LookPath("pgbench"); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pgbench")
	sort.Sort(sort.Reverse(sort.StringSlice(dirs)))
	if len(dirs) > 0 {
		return dirs[0], nil
	}
	return "", fmt.Errorf("pgbench not found on PATH nor in /usr/lib/postgresql/*/bin; hint: apt-get install postgresql-contrib (or postgresql)")
}

var pgbenchTPS = regexp.MustCompile(`(?m)^tps = ([0-9.]+)`)

// pgbenchResult is one pgbench run.
type pgbenchResult struct {
	TPS     float64
	Command string
	// Server is the server's version and commit settings.
	Server string
}

// runPgbench measures the single-row INSERT commit rate of the server tests
// use, on a fresh database, with pgbenchClients clients for pgbenchSeconds.
func runPgbench(b *testing.B) (pgbenchResult, error) {
	bin, err := findPgbench()
	if err != nil {
		return pgbenchResult{}, err
	}
	dsn := dbtest.URL(b, "pgbench")
	d := openPG(b, dsn, 1)
	if _, err := d.Exec(context.Background(), `CREATE TABLE bench_insert (id BIGSERIAL PRIMARY KEY, v INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return pgbenchResult{}, err
	}
	var version, fsync, syncCommit string
	if err := d.QueryRow(context.Background(), `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&version, &fsync, &syncCommit); err != nil {
		return pgbenchResult{}, err
	}
	server := fmt.Sprintf("PostgreSQL %s, fsync=%s, synchronous_commit=%s", version, fsync, syncCommit)
	script := filepath.Join(b.TempDir(), "insert.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO bench_insert (v) VALUES (1);\n"), 0o644); err != nil {
		return pgbenchResult{}, err
	}
	args := []string{"-n", "-c", strconv.Itoa(pgbenchClients), "-j", "2", "-T", strconv.Itoa(pgbenchSeconds), "-f", script, dsn}
	out, err := exec.Command(bin, args...).CombinedOutput()
	cmd := fmt.Sprintf("%s -n -c %d -j 2 -T %d -f insert.sql <db>   (insert.sql: INSERT INTO bench_insert (v) VALUES (1);)", filepath.Base(bin), pgbenchClients, pgbenchSeconds)
	if err != nil {
		return pgbenchResult{Command: cmd, Server: server}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		return pgbenchResult{Command: cmd, Server: server}, fmt.Errorf("pgbench printed no tps line:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	return pgbenchResult{TPS: tps, Command: cmd, Server: server}, err
}
