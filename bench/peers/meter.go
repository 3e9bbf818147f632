package main

// What a child measures around its timed phase: its own CPU (getrusage),
// the CPU of the private server's processes (/proc), the transactions
// committed in its database (pg_stat_database.xact_commit) and the WAL the
// server wrote (pg_current_wal_lsn).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 per
// second on Linux).
const clockTick = 10 * time.Millisecond

// reading is one sample of every counter.
type reading struct {
	at      time.Time
	proc    time.Duration // this process: user + system CPU
	server  time.Duration // the server's processes (0 on SQLite)
	commits int64         // xact_commit of the measured database (0 on SQLite)
	wal     int64         // the server's WAL position in bytes (0 on SQLite)
}

// meter reads the counters of one child. On SQLite, where there is no
// server, it reads the process CPU and the clock only.
type meter struct {
	postmaster int       // the private server's postmaster; 0 on SQLite
	admin      *pgx.Conn // a connection to another database of the server
	database   string
	statements bool      // reset pg_stat_statements at begin
	perf       string    // the profile's file, when profiling (spec.Perf)
	profiler   *exec.Cmd // perf record, between begin and end
	// flush makes every connection of the engine's pool publish its
	// pending statistics (PostgreSQL publishes a backend's counts at most
	// once a second, or when it exits) and returns how many transactions
	// it committed to do so and how many connections the pool holds.
	flush func(ctx context.Context) (flushed, open int, err error)
}

// settleTimeout bounds the wait for closed connections' backends to exit.
const settleTimeout = 30 * time.Second

// newMeter connects to the server's admin database (PostgreSQL) for the
// statistics of database.
func newMeter(ctx context.Context, sp spec) (*meter, error) {
	m := &meter{postmaster: sp.Postmaster, database: sp.Database, statements: sp.Statements, perf: sp.Perf}
	if sp.Driver != "postgres" {
		return m, nil
	}
	conn, err := pgx.Connect(ctx, sp.AdminURL)
	if err != nil {
		return nil, fmt.Errorf("stats connection: %w", err)
	}
	m.admin = conn
	return m, nil
}

func (m *meter) close() {
	if m.admin != nil {
		m.admin.Close(context.Background())
	}
}

// begin flushes the pool's statistics (and resets pg_stat_statements when
// asked), then reads every counter.
func (m *meter) begin(ctx context.Context) (reading, error) {
	if _, err := m.publish(ctx); err != nil {
		return reading{}, err
	}
	if m.statements && m.admin != nil {
		if _, err := m.admin.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
			return reading{}, fmt.Errorf("reset pg_stat_statements: %w", err)
		}
	}
	r := reading{}
	var err error
	if r.commits, err = m.commits(ctx); err != nil {
		return r, err
	}
	if r.wal, err = m.walPosition(ctx); err != nil {
		return r, err
	}
	if r.server, err = serverCPU(m.postmaster); err != nil {
		return r, err
	}
	if m.perf != "" {
		m.profiler = exec.Command("perf", "record", "--quiet", "-a", "-g", "-F", "999", "-o", m.perf)
		if err := m.profiler.Start(); err != nil {
			return r, fmt.Errorf("perf record (Debian's linux-perf): %w", err)
		}
	}
	r.proc = processCPU()
	r.at = time.Now()
	return r, nil
}

// end reads the clock and the CPU counters at once, then runs stop (which
// ends the engine's background work), flushes the pool's statistics and
// reads the commits, less those of the flush itself.
func (m *meter) end(ctx context.Context, stop func() error) (reading, error) {
	r := reading{at: time.Now()}
	r.proc = processCPU()
	var err error
	if r.server, err = serverCPU(m.postmaster); err != nil {
		return r, err
	}
	if m.profiler != nil {
		// perf record writes its file when interrupted, and then exits
		// with status 130: the file says whether it worked.
		if err := m.profiler.Process.Signal(os.Interrupt); err != nil {
			return r, err
		}
		waitErr := m.profiler.Wait()
		if st, err := os.Stat(m.perf); err != nil || st.Size() == 0 {
			return r, fmt.Errorf("perf record wrote no profile to %s (%v): %v", m.perf, waitErr, err)
		}
	}
	if stop != nil {
		if err := stop(); err != nil {
			return r, err
		}
	}
	flushed, err := m.publish(ctx)
	if err != nil {
		return r, err
	}
	if r.commits, err = m.commits(ctx); err != nil {
		return r, err
	}
	r.commits -= int64(flushed)
	r.wal, err = m.walPosition(ctx)
	return r, err
}

// walPosition is the server's current WAL write position in bytes (0 on
// SQLite). The cluster serves one child at a time, so the difference over
// a timed phase is that child's WAL, with the little the server writes by
// itself (autovacuum, checkpoints) and the statistics flush of publish.
func (m *meter) walPosition(ctx context.Context) (int64, error) {
	if m.admin == nil {
		return 0, nil
	}
	var n int64
	if err := m.admin.QueryRow(ctx, `SELECT CAST(pg_current_wal_lsn() - CAST('0/0' AS pg_lsn) AS BIGINT)`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read the WAL position: %w", err)
	}
	return n, nil
}

// publish makes every backend of the database publish its statistics: the
// pool's connections by flush, and those the engine closed (a query
// cancelled by a shutdown closes its connection) by exiting, which
// PostgreSQL does before it drops the backend from pg_stat_activity. So it
// waits until the database has no client backend beyond the pool's. It
// returns the transactions the flush committed.
func (m *meter) publish(ctx context.Context) (int, error) {
	if m.flush == nil {
		return 0, nil
	}
	flushed, open, err := m.flush(ctx)
	if err != nil {
		return 0, err
	}
	deadline := time.Now().Add(settleTimeout)
	for {
		var n int
		err := m.admin.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend'`, m.database).Scan(&n)
		if err != nil {
			return 0, fmt.Errorf("count the backends of %s: %w", m.database, err)
		}
		if n <= open {
			return flushed, nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%s still has %d client backends %s after the flush, and its pool %d", m.database, n, settleTimeout, open)
		}
		time.Sleep(5 * time.Millisecond) // a backend's exit cannot be awaited from another session
	}
}

// commits is the database's xact_commit (0 on SQLite).
func (m *meter) commits(ctx context.Context) (int64, error) {
	if m.admin == nil {
		return 0, nil
	}
	var n int64
	err := m.admin.QueryRow(ctx, `SELECT xact_commit FROM pg_stat_database WHERE datname = $1`, m.database).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("read xact_commit of %s: %w", m.database, err)
	}
	return n, nil
}

// processCPU is this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU sums the CPU time of a PostgreSQL server: the postmaster's own
// and that of its children it has reaped (cutime, cstime: backends and
// workers that exited), plus that of its children alive now. 0 when
// postmaster is 0.
func serverCPU(postmaster int) (time.Duration, error) {
	if postmaster == 0 {
		return 0, nil
	}
	f, err := procStat(postmaster)
	if err != nil {
		return 0, fmt.Errorf("server CPU: %w", err)
	}
	// Fields after "pid (comm)": state(0) ppid(1) ... utime(11) stime(12)
	// cutime(13) cstime(14).
	ticks := f[11] + f[12] + f[13] + f[14]
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil {
			continue
		}
		c, err := procStat(pid)
		if err != nil || c[1] != int64(postmaster) {
			continue // gone since the listing, or not the server's
		}
		ticks += c[11] + c[12]
	}
	return time.Duration(ticks) * clockTick, nil
}

// procStat reads the numeric fields of /proc/pid/stat after the command
// name (which may hold spaces); fields that are not numbers read as 0.
func procStat(pid int) ([]int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(b[i+1:]))
	if len(fields) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	out := make([]int64, len(fields))
	for j, s := range fields {
		out[j], _ = strconv.ParseInt(s, 10, 64)
	}
	return out, nil
}
