package loadtest

// Claim latency and the cost of an empty poll with many waiting runs in the
// table (bulk-inserted in one statement), and the claim query's plan.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

// Claim is the outcome of one claim measurement.
type Claim struct {
	Driver             string
	Waiting            int
	ClaimP50, ClaimP99 time.Duration
	EmptyPoll          time.Duration // median
	EmptyCost          Costs         // per empty poll
	Plan               string        // the claim's plan with one due run
	EmptyPlan          string        // the claim's plan when nothing is due
}

const (
	claimDueRuns = 300 // claimed one by one and timed
	emptyPolls   = 50  // timed
	countedPolls = 20  // counted through the proxy
)

// parkRuns bulk-inserts n runs of workflow that wait for a day (not due), in
// one statement.
func parkRuns(ctx context.Context, bd *benchDB, workflow string, n int) error {
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
		return fmt.Errorf("park %d runs: %w", n, err)
	}
	return nil
}

// measureClaim parks waiting runs, then times claimDueRuns claims of due
// runs one by one (from the engine's statement hook: the claim statement,
// which also reads the journal, is announced, and the next statement, the
// completion of the 0-step run, follows its answer),
// then emptyPolls empty polls.
func (r *runner) measureClaim(ctx context.Context, driver string, waiting int) (Claim, error) {
	var cl cleanups
	defer cl.run()
	bd, err := r.openBenchDB(ctx, &cl, driver, 3)
	if err != nil {
		return Claim{}, err
	}
	const workflow = "bench.claim"
	if err := parkRuns(ctx, bd, workflow, waiting); err != nil {
		return Claim{}, err
	}
	def := stepsWorkflow(workflow, 0, false, &latencies{})
	defs := []durable.Workflow{def.Erase()}
	e := bd.engine("claimer")
	if err := startRuns(ctx, e, def, "due", claimDueRuns); err != nil {
		return Claim{}, err
	}
	for i := 0; i < 5; i++ { // warm the connection's statement cache
		if _, err := e.Poll(ctx, defs); err != nil {
			return Claim{}, err
		}
	}
	bd.mu.Lock()
	bd.tracing, bd.trace = true, nil
	bd.mu.Unlock()
	for {
		worked, err := e.Poll(ctx, defs)
		if err != nil {
			return Claim{}, err
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
		return Claim{}, fmt.Errorf("timed %d claims, want %d", len(claims), claimDueRuns-5)
	}

	var empties []time.Duration
	for i := 0; i < emptyPolls; i++ {
		t0 := time.Now()
		worked, err := e.Poll(ctx, defs)
		empties = append(empties, time.Since(t0))
		if err != nil || worked {
			return Claim{}, fmt.Errorf("empty poll = %v, %v; want false, nil", worked, err)
		}
	}
	counting := bd.countingEngine("counted-claimer")
	if _, err := counting.Poll(ctx, defs); err != nil { // warm
		return Claim{}, err
	}
	before := bd.counters()
	for i := 0; i < countedPolls; i++ {
		if worked, err := counting.Poll(ctx, defs); err != nil || worked {
			return Claim{}, fmt.Errorf("empty poll = %v, %v; want false, nil", worked, err)
		}
	}
	emptyCost := bd.counters().sub(before).per(countedPolls)

	emptyPlan := explainClaim(ctx, bd, workflow)
	if err := startRuns(ctx, e, def, "explain", 1); err != nil {
		return Claim{}, err
	}
	return Claim{
		Driver: driver, Waiting: waiting,
		ClaimP50: quantileOf(claims, 0.5), ClaimP99: quantileOf(claims, 0.99),
		EmptyPoll: quantileOf(empties, 0.5), EmptyCost: emptyCost,
		Plan: explainClaim(ctx, bd, workflow), EmptyPlan: emptyPlan,
	}, nil
}

// errRollback ends the EXPLAIN ANALYZE transaction without committing.
var errRollback = errors.New("rollback")

// explainClaim shows the plan of the engine's claim statement (as announced
// to the statement hook) on the database as it is, executed in a
// transaction that is rolled back. The arguments follow the engine's current
// claim (clock, lease, workflow names, token, worker); if that changes, the
// plan is replaced by the error.
func explainClaim(ctx context.Context, bd *benchDB, workflow string) string {
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
	err := bd.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		var rows []map[string]string
		var err error
		if bd.driver == "postgres" {
			rows, err = tx.QueryMaps(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) "+sql,
				nil, durable.DefaultLease.Milliseconds(), names, "explain-token", "explain")
		} else {
			now := time.Now().UnixMilli()
			// The claim's conditions are bound twice: for its priority
			// level, then for the run.
			cond := []any{now, now - durable.DefaultLease.Milliseconds(), names}
			args := append([]any{now, now, now + durable.DefaultLease.Milliseconds(), "explain-token", "explain"}, cond...)
			rows, err = tx.QueryMaps(ctx, "EXPLAIN QUERY PLAN "+sql, append(args, cond...)...)
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
