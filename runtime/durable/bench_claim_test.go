package durable_test

// Claim latency and the cost of an empty poll with many waiting runs in the
// table (bulk-inserted in one statement), and the claim query's plan.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

// claimFigures is the outcome of one claim measurement.
type claimFigures struct {
	driver             string
	waiting            int
	claimP50, claimP99 time.Duration
	emptyPoll          time.Duration // median
	emptyCost          costs         // per empty poll
	plan               string        // the claim's plan with one due run
	emptyPlan          string        // the claim's plan when nothing is due
}

const (
	claimDueRuns = 300 // claimed one by one and timed
	emptyPolls   = 50  // timed
	countedPolls = 20  // counted through the proxy
)

// parkRuns bulk-inserts n runs of workflow that wait for a day (not due), in
// one statement.
func parkRuns(b *testing.B, bd *benchDB, workflow string, n int) {
	b.Helper()
	ctx := context.Background()
	var err error
	if bd.driver == "postgres" {
		_, err = bd.d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at)
SELECT 'parked-' || g, ?, 'waiting', '"x"', 0, now() + INTERVAL '1 day', '', now(), now() FROM generate_series(1, ?) g`, workflow, n)
		if err == nil {
			_, err = bd.d.Exec(ctx, `ANALYZE _sky_durable_runs`)
		}
	} else {
		now := time.Now().UnixMilli()
		_, err = bd.d.Exec(ctx, `WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ?)
INSERT INTO _sky_durable_runs (id, workflow, status, input, attempts, wake_at, last_error, created_at, updated_at)
SELECT 'parked-' || n, ?, 'waiting', '"x"', 0, ?, '', ?, ? FROM g`, n, workflow, now+int64(24*time.Hour/time.Millisecond), now, now)
		if err == nil {
			_, err = bd.d.Exec(ctx, `ANALYZE`)
		}
	}
	if err != nil {
		b.Fatalf("park %d runs: %v", n, err)
	}
}

// measureClaim parks waiting runs, then times claimDueRuns claims of due
// runs one by one (from the engine's statement hook: the claim statement,
// which also reads the journal, is announced, and the next statement, the
// completion of the 0-step run, follows its answer),
// then emptyPolls empty polls.
func measureClaim(b *testing.B, driver string, waiting int) claimFigures {
	bd := openBenchDB(b, driver, 3)
	const workflow = "bench.claim"
	parkRuns(b, bd, workflow, waiting)
	def := stepsWorkflow(workflow, 0, false, &latencies{})
	defs := []durable.Workflow{def.Erase()}
	e := bd.engine("claimer")
	startRuns(b, e, def, "due", claimDueRuns)
	ctx := context.Background()
	for i := 0; i < 5; i++ { // warm the connection's statement cache
		if _, err := e.Poll(ctx, defs); err != nil {
			b.Fatal(err)
		}
	}
	bd.mu.Lock()
	bd.tracing, bd.trace = true, nil
	bd.mu.Unlock()
	for {
		worked, err := e.Poll(ctx, defs)
		if err != nil {
			b.Fatal(err)
		}
		if !worked {
			break
		}
	}
	bd.mu.Lock()
	trace := bd.trace
	bd.tracing, bd.trace = false, nil
	bd.mu.Unlock()
	var claims []time.Duration
	for i := 0; i+1 < len(trace); i++ {
		if trace[i].op == "claim" && trace[i+1].op == "complete" {
			claims = append(claims, trace[i+1].at.Sub(trace[i].at))
		}
	}
	if len(claims) != claimDueRuns-5 {
		b.Fatalf("timed %d claims, want %d", len(claims), claimDueRuns-5)
	}

	var empties []time.Duration
	for i := 0; i < emptyPolls; i++ {
		t0 := time.Now()
		worked, err := e.Poll(ctx, defs)
		empties = append(empties, time.Since(t0))
		if err != nil || worked {
			b.Fatalf("empty poll = %v, %v; want false, nil", worked, err)
		}
	}
	counting := bd.countingEngine("counted-claimer")
	if _, err := counting.Poll(ctx, defs); err != nil { // warm
		b.Fatal(err)
	}
	before := bd.counters()
	for i := 0; i < countedPolls; i++ {
		if worked, err := counting.Poll(ctx, defs); err != nil || worked {
			b.Fatalf("empty poll = %v, %v; want false, nil", worked, err)
		}
	}
	emptyCost := bd.counters().sub(before).per(countedPolls)

	emptyPlan := explainClaim(bd, workflow)
	startRuns(b, e, def, "explain", 1)
	return claimFigures{
		driver: driver, waiting: waiting,
		claimP50: quantileOf(claims, 0.5), claimP99: quantileOf(claims, 0.99),
		emptyPoll: quantileOf(empties, 0.5), emptyCost: emptyCost,
		plan: explainClaim(bd, workflow), emptyPlan: emptyPlan,
	}
}

// errRollback ends the EXPLAIN ANALYZE transaction without committing.
var errRollback = errors.New("rollback")

// explainClaim shows the plan of the engine's claim statement (as announced
// to the statement hook) on the database as it is, executed in a
// transaction that is rolled back. The arguments follow the engine's current
// claim (clock, lease, workflow names, token, worker); if that changes, the
// plan is replaced by the error.
func explainClaim(bd *benchDB, workflow string) string {
	bd.mu.Lock()
	sql := bd.claimSQL
	bd.mu.Unlock()
	if sql == "" {
		return "(no claim statement seen)"
	}
	// The claim picks by workflow name, or by (workflow, version) pairs.
	names := `["` + workflow + `"]`
	if strings.Contains(sql, "jsonb_to_recordset") || strings.Contains(sql, "$.w") {
		names = `[{"w":"` + workflow + `","v":1}]`
	}
	var lines []string
	ctx := context.Background()
	err := bd.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		var rows []map[string]string
		var err error
		if bd.driver == "postgres" {
			rows, err = tx.QueryMaps(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+sql,
				nil, durable.DefaultLease.Milliseconds(), names, "explain-token", "explain")
		} else {
			now := time.Now().UnixMilli()
			rows, err = tx.QueryMaps(ctx, "EXPLAIN QUERY PLAN "+sql,
				now, now, now+durable.DefaultLease.Milliseconds(), "explain-token", "explain", now, now-durable.DefaultLease.Milliseconds(), names)
		}
		if err != nil {
			return err
		}
		for _, r := range rows {
			if p, ok := r["QUERY PLAN"]; ok {
				lines = append(lines, p)
			} else {
				lines = append(lines, r["detail"])
			}
		}
		return errRollback
	})
	if err != nil && !errors.Is(err, errRollback) {
		return "(EXPLAIN failed: " + err.Error() + ")"
	}
	return strings.Join(lines, "\n")
}

// machine describes the machine the load run ran on.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores (%s), %s/%s, %s, %s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAverage())
}

// loadAverage is the 1-minute load average: on a shared machine, figures
// taken under load are not comparable with figures taken idle.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "load average unknown"
	}
	return "load average " + f[0]
}

// cpuTimes reads the machine's busy and idle CPU time (all cores) from
// /proc/stat, in clock ticks (USER_HZ, 100 per second on Linux); ok is false
// where there is no /proc/stat.
func cpuTimes() (busy, idle int64, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, false
	}
	// user nice system idle iowait irq softirq steal
	for i, s := range f[1:9] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, false
		}
		if i == 3 || i == 4 {
			idle += n
		} else {
			busy += n
		}
	}
	return busy, idle, true
}
