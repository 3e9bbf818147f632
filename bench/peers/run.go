package main

// The parent: the private cluster, the rounds, one child process per
// engine, workload and store, each on a database of its own.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/db/dbtest"
)

// variant is one engine as measured: DBOS, or this engine with its
// pollers' MaxRuns, or its worker (workerMaxRuns).
type variant struct {
	Label   string
	Engine  string
	MaxRuns int
}

func (v variant) peer() bool { return v.Engine == engineDBOS }

// variants are the engines measured on workload, DBOS first.
func (cfg config) variants(workload string) []variant {
	vs := []variant{{Label: "DBOS-Go", Engine: engineDBOS}}
	if workload == oneByOne {
		// One run at a time: a poll finds one run, whatever its MaxRuns.
		return append(vs, variant{Label: "sky", Engine: engineSky, MaxRuns: 1})
	}
	for _, n := range cfg.MaxRuns {
		label := "sky Poll"
		if n > 1 {
			label = fmt.Sprintf("sky PollWith(%d)", n)
		}
		vs = append(vs, variant{Label: label, Engine: engineSky, MaxRuns: n})
	}
	if cfg.Work {
		vs = append(vs, variant{Label: "sky Work", Engine: engineSky, MaxRuns: workerMaxRuns})
	}
	return vs
}

// cluster is the private PostgreSQL server of a run.
type cluster struct {
	srv        *dbtest.Server
	admin      *pgx.Conn
	postmaster int
}

// runner is one run of the command.
type runner struct {
	cfg  config
	exe  string
	pg   *cluster // nil without postgres among the drivers
	runs []measurement
	// serverLog is the copy of the server's log kept with -explain-over.
	serverLog string
}

// measurement is one child's outcome.
type measurement struct {
	Round    int
	Driver   string
	Workload string
	Variant  variant
	Result   result
	Top      []statement
	// WALRecords is pg_waldump's table of the timed phase's WAL records
	// (-wal-records).
	WALRecords string
}

// runWith measures what cfg asks, printing as it goes, and returns the
// measurements.
func runWith(ctx context.Context, cfg config) (*runner, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, exe: exe}
	for _, d := range cfg.Drivers {
		if d == "postgres" {
			if r.pg, err = startCluster(ctx, cfg.Statements > 0, cfg.ExplainOver); err != nil {
				return nil, err
			}
			defer func() { r.serverLog = r.pg.stop(cfg.ExplainOver > 0) }()
		}
	}
	r.header(ctx)
	for round := 1; round <= cfg.Rounds; round++ {
		r.printf("\nround %d (%s)\n", round, loadAverage())
		for _, driver := range cfg.Drivers {
			for _, wl := range cfg.Workloads {
				var row []measurement
				for _, v := range cfg.variants(wl) {
					m, err := r.measure(ctx, round, driver, wl, v)
					if err != nil {
						return r, err
					}
					r.runs = append(r.runs, m)
					row = append(row, m)
					r.printMeasurement(m)
				}
				r.printRatios(row)
			}
		}
	}
	r.summary()
	r.targets()
	r.printf("\nfinished (%s)\n", loadAverage())
	return r, nil
}

// startCluster starts the private server with PostgreSQL's defaults (fsync
// and synchronous_commit on), with pg_stat_statements loaded when asked,
// and auto_explain logging the plans of statements slower than explainOver
// when that is positive.
func startCluster(ctx context.Context, statements bool, explainOver time.Duration) (*cluster, error) {
	var libs, settings []string
	if statements {
		libs = append(libs, "pg_stat_statements")
		settings = append(settings, "-c pg_stat_statements.max=1000", "-c pg_stat_statements.track_planning=on")
	}
	if explainOver > 0 {
		libs = append(libs, "auto_explain")
		// The prefix names the database, hence the engine and the cell.
		settings = append(settings, fmt.Sprintf("-c auto_explain.log_min_duration=%dus", explainOver.Microseconds()),
			"-c log_line_prefix=%m[%p]%d:")
	}
	if len(libs) > 0 {
		settings = append(settings, "-c shared_preload_libraries="+strings.Join(libs, ","))
	}
	srv, err := dbtest.StartServer(ctx, strings.Join(settings, " "))
	if err != nil {
		return nil, err
	}
	c := &cluster{srv: srv}
	if c.postmaster, err = srv.PID(); err == nil {
		c.admin, err = pgx.Connect(ctx, srv.URL())
	}
	if err == nil && statements {
		_, err = c.admin.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
	}
	if err != nil {
		c.stop(false)
		return nil, err
	}
	return c, nil
}

// stop stops the server, first copying its log to a file it returns and
// names on stderr when keepLog is set (Stop removes the cluster's
// directory).
func (c *cluster) stop(keepLog bool) string {
	if c.admin != nil {
		c.admin.Close(context.Background())
	}
	kept := ""
	if keepLog {
		var err error
		if kept, err = c.keepLog(); err != nil {
			fmt.Fprintln(os.Stderr, "peers: keep the server log:", err)
		}
	}
	if err := c.srv.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
	}
	return kept
}

func (c *cluster) keepLog() (string, error) {
	b, err := os.ReadFile(filepath.Join(c.srv.Dir(), "server.log"))
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "peers-server-*.log")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return "", err
	}
	fmt.Fprintln(os.Stderr, "peers: the server's log, with the plans auto_explain logged:", f.Name())
	return f.Name(), f.Close()
}

// measure runs one child on a fresh database and reads what it made.
func (r *runner) measure(ctx context.Context, round int, driver, workload string, v variant) (measurement, error) {
	m := measurement{Round: round, Driver: driver, Workload: workload, Variant: v}
	sp := spec{
		Engine: v.Engine, MaxRuns: v.MaxRuns, Driver: driver, Workload: workload,
		Workflows: r.cfg.Workflows, Pollers: r.cfg.Pollers, Warm: r.cfg.Warm, Serial: r.cfg.Serial,
		DBOSPoll: r.cfg.DBOSPoll, Statements: r.cfg.Statements > 0, SkySQL: r.cfg.SkySQL,
	}
	if r.cfg.Perf != "" {
		sp.Perf = filepath.Join(r.cfg.Perf, fmt.Sprintf("r%d_%s_%d_%s_%s.data", round, v.Engine, v.MaxRuns, driver, workload))
	}
	switch driver {
	case "postgres":
		name := fmt.Sprintf("peers_r%d_%s_%s_%d", round, v.Engine, workload, v.MaxRuns)
		if _, err := r.pg.admin.Exec(ctx, "CREATE DATABASE "+name+" TEMPLATE template0"); err != nil {
			return m, err
		}
		defer func() {
			if _, err := r.pg.admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				fmt.Fprintln(os.Stderr, "peers: drop", name+":", err)
			}
		}()
		// Every run starts from a clean checkpoint: none is pending from
		// the run before.
		if _, err := r.pg.admin.Exec(ctx, "CHECKPOINT"); err != nil {
			return m, err
		}
		sp.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s", r.pg.srv.Port(), name)
		sp.Database, sp.AdminURL, sp.Postmaster = name, r.pg.srv.URL(), r.pg.postmaster
	case "sqlite":
		dir, err := os.MkdirTemp("", "peers-sqlite-")
		if err != nil {
			return m, err
		}
		defer os.RemoveAll(dir)
		sp.DSN = filepath.Join(dir, "peers.db")
	}
	res, err := r.child(ctx, sp)
	if err != nil {
		return m, err
	}
	m.Result = res
	if driver == "postgres" && r.cfg.Statements > 0 {
		if m.Top, err = r.pg.topStatements(ctx, sp.Database, r.cfg.Statements); err != nil {
			return m, err
		}
	}
	if driver == "postgres" && r.cfg.WALRecords {
		if m.WALRecords, err = r.pg.walRecords(ctx, res.WALFrom, res.WALFrom+res.WAL); err != nil {
			return m, err
		}
	}
	return m, nil
}

// walRecords is pg_waldump's statistics (--stats=record) of the WAL
// between two positions, in bytes: the records by kind, their count and
// size. pg_waldump is the one beside the running server's postgres.
func (c *cluster) walRecords(ctx context.Context, from, to int64) (string, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", c.postmaster))
	if err != nil {
		return "", fmt.Errorf("the server's executable: %w", err)
	}
	lsn := func(n int64) string { return fmt.Sprintf("%X/%X", n>>32, n&0xffffffff) }
	out, err := exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), "pg_waldump"), "--stats=record",
		"-p", filepath.Join(c.srv.Dir(), "data", "pg_wal"), "-s", lsn(from), "-e", lsn(to)).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("pg_waldump: %w\n%s", err, out)
	}
	return string(out), nil
}

// child runs sp in a child process and decodes the result it prints.
func (r *runner) child(ctx context.Context, sp spec) (result, error) {
	arg, err := json.Marshal(sp)
	if err != nil {
		return result{}, err
	}
	cmd := exec.CommandContext(ctx, r.exe, "-child", string(arg))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.MultiWriter(os.Stderr, &errOut)
	if err := cmd.Run(); err != nil {
		// The child says why on its last line of stderr.
		lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
		return result{}, fmt.Errorf("%s on %s, %s: %w: %s", sp.Engine, sp.Driver, sp.Workload, err, lines[len(lines)-1])
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return result{}, fmt.Errorf("%s on %s, %s printed %q: %w", sp.Engine, sp.Driver, sp.Workload, out.String(), err)
	}
	return res, nil
}

// statement is one line of pg_stat_statements.
type statement struct {
	Calls           int64
	TotalMs, MeanMs float64
	Rows            int64
	Query           string
	// BlocksHit and BlocksRead are the shared buffers it read from the
	// cache and from outside it, per call.
	BlocksHit, BlocksRead float64
	// Plans and PlanMs are its plannings and their total time; JITFunctions
	// and JITMs what JIT compiled and the time that took.
	Plans        int64
	PlanMs       float64
	JITFunctions int64
	JITMs        float64
}

// topStatements are database's n statements by total execution time since
// the child's timed phase began (the child resets the view then).
func (c *cluster) topStatements(ctx context.Context, database string, n int) ([]statement, error) {
	rows, err := c.admin.Query(ctx, `
		SELECT s.calls, s.total_exec_time, s.mean_exec_time, s.rows,
		       s.shared_blks_hit::float8 / s.calls, s.shared_blks_read::float8 / s.calls,
		       s.plans, s.total_plan_time, s.jit_functions,
		       s.jit_generation_time + s.jit_inlining_time + s.jit_optimization_time + s.jit_emission_time,
		       left(regexp_replace(s.query, '\s+', ' ', 'g'), 200)
		FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
		WHERE d.datname = $1
		ORDER BY s.total_exec_time DESC LIMIT $2`, database, n)
	if err != nil {
		return nil, fmt.Errorf("pg_stat_statements: %w", err)
	}
	defer rows.Close()
	var out []statement
	for rows.Next() {
		var s statement
		if err := rows.Scan(&s.Calls, &s.TotalMs, &s.MeanMs, &s.Rows, &s.BlocksHit, &s.BlocksRead,
			&s.Plans, &s.PlanMs, &s.JITFunctions, &s.JITMs, &s.Query); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// header prints the machine, the versions and the settings.
func (r *runner) header(ctx context.Context) {
	dbosVersion := "?"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/dbos-inc/dbos-transact-golang" {
				dbosVersion = d.Version
			}
		}
	}
	r.printf("peers: DBOS Transact Go %s vs this engine; %d CPUs (%s), %s, %s\n",
		dbosVersion, runtime.NumCPU(), cpuModel(), runtime.Version(), loadAverage())
	r.printf("every cell has a peer: DBOS-Go runs on PostgreSQL and on SQLite (its sqlite: URLs)\n")
	r.printf("cells: %s on %s; %d rounds; %d workflows all at once (after %d warm-up per poller), %d one at a time; %d pollers (DBOS: queue worker concurrency %d, polling every %s)\n",
		strings.Join(r.cfg.Workloads, ", "), strings.Join(r.cfg.Drivers, ", "), r.cfg.Rounds, r.cfg.Workflows, r.cfg.Warm, r.cfg.Serial, r.cfg.Pollers, r.cfg.Pollers, r.cfg.DBOSPoll)
	if r.pg != nil {
		var version, fsync, sync string
		err := r.pg.admin.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')").Scan(&version, &fsync, &sync)
		if err != nil {
			version = err.Error()
		}
		r.printf("PostgreSQL %s, private cluster on port %d (fsync=%s, synchronous_commit=%s, otherwise defaults%s)\n",
			version, r.pg.srv.Port(), fsync, sync, map[bool]string{true: ", pg_stat_statements loaded", false: ""}[r.cfg.Statements > 0])
	}
}

func (r *runner) printf(format string, args ...any) { fmt.Fprintf(r.cfg.Out, format, args...) }

// cpuModel is the CPU's model name from /proc/cpuinfo.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// loadAverage is the machine's load averages, as uptime prints them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return "load average " + strings.Join(f[:3], ", ")
}
