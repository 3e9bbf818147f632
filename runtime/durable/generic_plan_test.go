package durable

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestHotStatementsArePlannedOnce counts, with pg_stat_statements, the
// plannings of the statements of starts and of a worker's pollers on
// PostgreSQL (starts, RunNow's start, claims, journal appends,
// completions, alone and batched): each is planned once on its connection,
// on its generic plan (db.GenericPlan), however often it runs.
// PostgreSQL's default makes five plans with the parameters first (custom
// plans), milliseconds each for a claim. The pool has one
// connection and autovacuum is off, so no ANALYZE replans a statement
// during the count.
func TestHotStatementsArePlannedOnce(t *testing.T) {
	ctx := context.Background()
	srv, err := dbtest.StartServer(ctx, "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c autovacuum=off"+
		" -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	d, err := db.Open(ctx, "postgres", srv.URL()+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := New(d, Options{WorkerID: "w"})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, "CREATE EXTENSION pg_stat_statements"); err != nil {
		t.Fatal(err)
	}
	step := func(c *Ctx, id string) task.Task[string] { return Step(c, str, id, task.Succeed(id)) }
	three := Register("three", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(step(c, "a"), func(string) task.Task[string] {
			return task.AndThen(step(c, "b"), func(string) task.Task[string] { return step(c, "c") })
		})
	})
	defs := []Workflow{three.Erase()}
	start := func(prefix string, n int) {
		for i := range n {
			if err := Start(ctx, e, three, fmt.Sprintf("%s-%d", prefix, i), "x"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := d.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
		t.Fatal(err)
	}
	// pollers poll with maxRuns each until none finds a run.
	drain := func(pollers, maxRuns int) error {
		var wg sync.WaitGroup
		errs := make(chan error, pollers)
		for range pollers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					worked, err := e.PollWith(ctx, defs, PollOptions{MaxRuns: maxRuns})
					if err != nil || !worked {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	}
	// One poller: every write alone (the single-run statements).
	start("alone", 20)
	for i := range 10 {
		if _, err := RunNow(ctx, e, three, fmt.Sprintf("now-%d", i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	if err := drain(1, 1); err != nil {
		t.Fatal(err)
	}
	// Eight pollers on the one connection, four with Poll and four with
	// PollWith (its completions with next claims), at once: the writes
	// batch, 2 to 8 rows each.
	start("batched", 200)
	var both sync.WaitGroup
	drained := make([]error, 2)
	for i, maxRuns := range []int{1, 100} {
		both.Add(1)
		go func() {
			defer both.Done()
			drained[i] = drain(4, maxRuns)
		}()
	}
	both.Wait()
	for _, err := range drained {
		if err != nil {
			t.Fatal(err)
		}
	}
	var done int
	if err := d.QueryRow(ctx, "SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'done'").Scan(&done); err != nil || done != 230 {
		t.Fatalf("%d runs done (%v), want 230", done, err)
	}
	rows, err := d.QueryMaps(ctx, `SELECT calls, plans, query FROM pg_stat_statements ORDER BY calls DESC`)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, r := range rows {
		kind := statementKind(r["query"])
		if kind == "other" {
			continue
		}
		// A batched claim's LIMIT is a literal (its batch size: 2, 4 or 8
		// here), which pg_stat_statements counts as one statement.
		plans, _ := strconv.Atoi(r["plans"])
		batched := strings.Contains(r["query"], "VALUES") || strings.Contains(r["query"], "numbered AS")
		if most := map[bool]int{false: 1, true: 3}[batched]; plans > most {
			t.Errorf("a %s statement planned %d times in %s calls, want at most %d: %.200s", kind, plans, r["calls"], most, r["query"])
		}
		if batched {
			kind = "batched"
		}
		kinds[kind]++
	}
	// The count covers the pollers' statements, alone and batched.
	for _, k := range []string{"start", "run now", "claim", "append", "complete", "complete and claim", "generic plan setting", "batched"} {
		if kinds[k] == 0 {
			t.Errorf("no %s statement ran (%v)", k, kinds)
		}
	}
}

// statementKind names a store statement by the CTE or table it writes.
func statementKind(sql string) string {
	switch {
	case strings.Contains(sql, "new AS") && strings.Contains(sql, "lease_token"):
		return "run now"
	case strings.Contains(sql, "new AS"):
		return "start"
	case strings.Contains(sql, "set_config") && !strings.Contains(sql, "WITH"):
		return "generic plan setting"
	case strings.Contains(sql, "done AS") && strings.Contains(sql, "claimed AS"):
		return "complete and claim"
	case strings.Contains(sql, "claimed AS"):
		return "claim"
	case strings.Contains(sql, "done AS"):
		return "complete"
	case strings.Contains(sql, "INSERT INTO _sky_durable_journal"):
		return "append"
	}
	return "other"
}
