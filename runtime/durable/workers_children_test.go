package durable_test

// A fan-out of 1,000 children on PostgreSQL with 4 workers (each its own
// pool and Engine, as separate processes would): the parent starts them in
// one statement with Durable.all, the workers share them, and the last to
// finish wakes the parent, which fans in. BenchmarkFanOut1000 prints the
// figure of docs/benchmarks.md.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// fanOutResult is what one fan-out run measured.
type fanOutResult struct {
	elapsed     time.Duration // start of the parent to its completion
	inserts     int64         // child insert statements sent
	parentPolls int64         // attempts of the parent (claims of it)
}

// runFanOut starts parents "fan", "fan-2", ... (parents of them) of n
// children each on a fresh PostgreSQL database and lets workers drain them;
// it fails tb unless every parent is done with its children's outputs in
// order and every child's effect ran once. Each worker is an Engine with
// its own pool, polling from pollers goroutines (whose statements its group
// commit batches).
func runFanOut(tb testing.TB, parents, n, workers, pollers int) fanOutResult {
	ctx := context.Background()
	dsn := withParam(dbtest.URL(tb, "fanout"), "synchronous_commit", "off")
	admin := openPG(tb, dsn, 4)
	ae := durable.New(admin, durable.Options{WorkerID: "admin"})
	if err := ae.Setup(ctx); err != nil {
		tb.Fatal(err)
	}
	if _, err := admin.Exec(ctx, `CREATE TABLE fan_effects (run_id TEXT PRIMARY KEY, worker TEXT NOT NULL)`); err != nil {
		tb.Fatal(err)
	}
	var inserts, parentPolls atomic.Int64
	defs := func(worker string) []durable.Workflow {
		item := durable.Register("fan.item", codec.Int, codec.Int, func(c *durable.Ctx, i int64) task.Task[int64] {
			return durable.Step(c, codec.Int, "work", task.From(func(ctx context.Context) (int64, error) {
				_, err := c.DB().Exec(ctx, `INSERT INTO fan_effects (run_id, worker) VALUES (?, ?)`, c.RunID(), worker)
				return i * i, err
			}))
		})
		parent := durable.Register("fan.parent", codec.Int, codec.String, func(c *durable.Ctx, count int64) task.Task[string] {
			parentPolls.Add(1)
			kids := make([]durable.Child[int64], count)
			for i := range kids {
				kids[i] = durable.Child[int64]{Key: fmt.Sprintf("item-%04d", i), Input: int64(i)}
			}
			return task.Map(durable.All(c, item, kids), func(outs []int64) string {
				var b strings.Builder
				for i, o := range outs {
					if o != int64(i*i) {
						fmt.Fprintf(&b, "wrong output %d at %d;", o, i)
					}
				}
				return fmt.Sprintf("%d outputs;%s", len(outs), b.String())
			})
		})
		return []durable.Workflow{parent.Erase(), item.Erase()}
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for w := range workers {
		name := fmt.Sprintf("w%d", w)
		e := durable.New(openPG(tb, dsn, 2+pollers), durable.Options{WorkerID: name, OnStatement: func(op, _ string) {
			if op == "children" {
				inserts.Add(1)
			}
		}})
		for range pollers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pollLoop(runCtx, e, defs(name), errs)
			}()
		}
	}
	began := time.Now()
	parentDef := durable.Register("fan.parent", codec.Int, codec.String, nil)
	ids := []string{"fan"}
	for i := 2; i <= parents; i++ {
		ids = append(ids, fmt.Sprintf("fan-%d", i))
	}
	for _, id := range ids {
		if err := durable.Start(ctx, ae, parentDef, id, int64(n)); err != nil {
			tb.Fatal(err)
		}
	}
	for _, id := range ids {
		out, err := durable.AwaitResult(ctx, ae, parentDef, id, 3*time.Minute)
		if err != nil || out == nil || *out != fmt.Sprintf("%d outputs;", n) {
			r, _, _ := ae.Describe(ctx, id)
			tb.Errorf("parent %s result %v, %v (run %s, last error %q); want %d outputs in order", id, out, err, r.Status, r.LastError, n)
		}
	}
	elapsed := time.Since(began)
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Errorf("engine error: %v", err)
	}
	if c := count(tb, admin, `SELECT COUNT(*) FROM fan_effects`); c != int64(parents*n) {
		tb.Errorf("%d child effects, want %d (each once)", c, parents*n)
	}
	if c := count(tb, admin, `SELECT COUNT(*) FROM _sky_durable_runs WHERE parent_id IS NOT NULL AND status = 'done' AND attempts = 1`); c != int64(parents*n) {
		tb.Errorf("%d children done in one attempt, want %d", c, parents*n)
	}
	return fanOutResult{elapsed: elapsed, inserts: inserts.Load(), parentPolls: parentPolls.Load()}
}

func TestFanOutOf1000ChildrenWith4Workers(t *testing.T) {
	t.Parallel()
	res := runFanOut(t, 1, 1000, 4, 1)
	if res.inserts != 1 {
		t.Errorf("the children were inserted by %d statements, want 1", res.inserts)
	}
	t.Logf("1000 children fanned out and in by 4 workers in %s; the parent ran %d attempts", res.elapsed, res.parentPolls)
}

func BenchmarkFanOut1000(b *testing.B) {
	for range b.N {
		res := runFanOut(b, 1, 1000, 4, 1)
		b.ReportMetric(float64(res.elapsed.Milliseconds()), "ms/fan-out")
		b.ReportMetric(1000/res.elapsed.Seconds(), "children/s")
		b.ReportMetric(float64(res.parentPolls), "parent-attempts")
	}
}

// TestManyParentsFanOutAtOnce: 20 parents of 50 children each, on 4
// workers of 4 pollers each, whose completions of children of different parents share
// statements (group commit) and lock their parents' rows in their triggers:
// every parent fans in, no engine error (a deadlock would be one).
func TestManyParentsFanOutAtOnce(t *testing.T) {
	t.Parallel()
	res := runFanOut(t, 20, 50, 4, 4)
	if res.inserts != 20 {
		t.Errorf("%d child insert statements, want 20 (one per parent)", res.inserts)
	}
	t.Logf("20 parents of 50 children fanned out and in by 4 workers of 4 pollers in %s; the parents ran %d attempts", res.elapsed, res.parentPolls)
}
