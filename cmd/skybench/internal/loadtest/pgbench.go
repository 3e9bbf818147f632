package loadtest

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
)

// pgbenchClients shapes the reference run: 8 clients (as the 8-poller
// load), one INSERT per transaction, for Config.PgbenchSeconds.
const pgbenchClients = 8

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

// PgbenchResult is one pgbench run.
type PgbenchResult struct {
	TPS     float64
	Command string
	// Server is the server's version and commit settings.
	Server string
}

// runPgbench measures the single-row INSERT commit rate of the server, on a
// fresh database, with pgbenchClients clients for seconds.
func (r *runner) runPgbench(ctx context.Context, seconds int) (res PgbenchResult, err error) {
	bin, err := findPgbench()
	if err != nil {
		return PgbenchResult{}, err
	}
	var cl cleanups
	defer cl.run()
	dsn, err := r.freshDatabase(ctx, &cl, "pgbench")
	if err != nil {
		return PgbenchResult{}, err
	}
	d, err := openPG(ctx, &cl, dsn, 1)
	if err != nil {
		return PgbenchResult{}, err
	}
	if _, err := d.Exec(ctx, `CREATE TABLE bench_insert (id BIGSERIAL PRIMARY KEY, v INT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now())`); err != nil {
		return PgbenchResult{}, err
	}
	var version, fsync, syncCommit string
	if err := d.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).Scan(&version, &fsync, &syncCommit); err != nil {
		return PgbenchResult{}, err
	}
	server := fmt.Sprintf("PostgreSQL %s, fsync=%s, synchronous_commit=%s", version, fsync, syncCommit)
	dir, err := tempDir(&cl)
	if err != nil {
		return PgbenchResult{}, err
	}
	script := filepath.Join(dir, "insert.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO bench_insert (v) VALUES (1);\n"), 0o644); err != nil {
		return PgbenchResult{}, err
	}
	args := []string{"-n", "-c", strconv.Itoa(pgbenchClients), "-j", "2", "-T", strconv.Itoa(seconds), "-f", script, dsn}
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	cmd := fmt.Sprintf("%s -n -c %d -j 2 -T %d -f insert.sql <db>   (insert.sql: INSERT INTO bench_insert (v) VALUES (1);)", filepath.Base(bin), pgbenchClients, seconds)
	if err != nil {
		return PgbenchResult{Command: cmd, Server: server}, fmt.Errorf("pgbench: %v\n%s", err, out)
	}
	m := pgbenchTPS.FindSubmatch(out)
	if m == nil {
		return PgbenchResult{Command: cmd, Server: server}, fmt.Errorf("pgbench printed no tps line:\n%s", out)
	}
	tps, err := strconv.ParseFloat(string(m[1]), 64)
	return PgbenchResult{TPS: tps, Command: cmd, Server: server}, err
}
