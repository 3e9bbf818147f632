package worker_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// openURL opens url for the test's own queries.
func openURL(t *testing.T, url string) *db.DB {
	t.Helper()
	d, err := db.Open(context.Background(), "postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// count runs a SELECT returning one integer.
func count(t *testing.T, d *db.DB, sql string) int64 {
	t.Helper()
	var n int64
	if err := d.QueryRow(context.Background(), sql).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// awaitCount polls sql until it returns want.
func awaitCount(t *testing.T, d *db.DB, sql string, want int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		n := count(t, d, sql)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s gave %d, want %d, after %v", sql, n, want, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var advancedLine = regexp.MustCompile(`(?m)^advanced (\d+) runs`)

// advanced is the last count a worker printed.
func advanced(t *testing.T, p *process) int {
	t.Helper()
	out, errOut := p.output()
	m := advancedLine.FindAllStringSubmatch(out, -1)
	if len(m) == 0 {
		t.Fatalf("the worker printed no count\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// startWorkers starts n copies of examples/worker and waits until each has
// printed its first view.
func startWorkers(t *testing.T, n int, env []string) []*process {
	t.Helper()
	ws := make([]*process, n)
	for i := range ws {
		ws[i] = startSky(t, "", env)
	}
	for _, w := range ws {
		w.await(t, "advanced 0 runs", 30*time.Second)
	}
	return ws
}

// stopWorkers sends SIGTERM to each worker and waits for a clean exit.
func stopWorkers(t *testing.T, ws []*process) {
	t.Helper()
	for _, w := range ws {
		if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range ws {
		w.wait(t, 30*time.Second)
	}
}

// TestThreeWorkersShareAThousandRuns runs three examples/worker processes on
// one PostgreSQL while a separate `sky run src/Start.sky` starts 1,000 greet
// runs: every run ends done after one claim, every step ran and was
// journalled exactly once, and all three workers did some of the work.
func TestThreeWorkersShareAThousandRuns(t *testing.T) {
	const runs = 1000
	url := dbtest.URL(t, "workers")
	env := []string{"DATABASE_URL=" + url}
	d := openURL(t, url)
	ws := startWorkers(t, 3, env)
	starter := startSky(t, fmt.Sprintf("greet %d g\n", runs), env, "src/Start.sky")
	starter.wait(t, 2*time.Minute)
	if out, _ := starter.output(); !regexp.MustCompile(`(?m)^started 1000 greet runs$`).MatchString(out) {
		t.Fatalf("starter printed:\n%s", out)
	}
	awaitCount(t, d, `SELECT count(*) FROM _sky_durable_runs WHERE status = 'done'`, runs, 3*time.Minute)
	stopWorkers(t, ws)

	total := 0
	for i, w := range ws {
		n := advanced(t, w)
		if n == 0 {
			t.Errorf("worker %d advanced no run: the work is not shared", i+1)
		}
		total += n
		t.Logf("worker %d advanced %d runs", i+1, n)
	}
	if total != runs {
		t.Errorf("the workers advanced %d runs in all, want %d (each greet run takes one poll)", total, runs)
	}
	for sql, want := range map[string]int64{
		`SELECT count(*) FROM _sky_durable_runs`:                                          runs,
		`SELECT count(*) FROM _sky_durable_runs WHERE status <> 'done' OR attempts <> 1`:  0,
		`SELECT count(*) FROM _sky_durable_journal WHERE step_id = 'greet'`:               runs,
		`SELECT count(DISTINCT run_id) FROM _sky_durable_journal WHERE step_id = 'greet'`: runs,
		`SELECT count(*) FROM _sky_durable_journal WHERE step_id <> 'greet'`:              0,
		`SELECT count(*) FROM worker_greeted`:                                             runs,
		`SELECT count(DISTINCT run_id) FROM worker_greeted`:                               runs,
	} {
		if n := count(t, d, sql); n != want {
			t.Errorf("%s = %d, want %d", sql, n, want)
		}
	}
}
