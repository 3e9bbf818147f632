package durable_test

// Fencing between workers with their own pools on PostgreSQL: worker A's
// lease is expired under it while it is blocked inside the run, worker B
// reclaims the run and finishes it, then A continues and every write it
// tries is rejected.

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// syncBuffer is a bytes.Buffer safe for a logger used from goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fenceWorkflow: step "slow" (a row in fence_effects inside the step's
// transaction), step "after" (plain), then the output
// "<slow>,<after>,done-by-<worker>". block is called at "slow" (inside the
// step, after its row is written) and at "end" (after the last step).
func fenceWorkflow(worker string, block func(point string)) durable.Def[string, string] {
	return durable.Register("fence.flow", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		slow := durable.Step(c, codec.String, "slow", task.From(func(ctx context.Context) (string, error) {
			if _, err := c.DB().Exec(ctx, `INSERT INTO fence_effects (run_id, step, worker) VALUES (?, 'slow', ?)`, c.RunID(), worker); err != nil {
				return "", err
			}
			block("slow")
			return "slow-by-" + worker, nil
		}))
		return task.AndThen(slow, func(s string) task.Task[string] {
			after := durable.Step(c, codec.String, "after", task.Succeed("after-by-"+worker))
			return task.AndThen(after, func(a string) task.Task[string] {
				block("end")
				return task.Succeed(s + "," + a + ",done-by-" + worker)
			})
		})
	})
}

func TestManyWorkersFencing(t *testing.T) {
	cases := []struct {
		name      string
		blockAt   string
		output    string   // the run's final output: B's outcome
		journal   []string // the journal's results, in order
		effectsOf string   // whose fence_effects row for "slow" survives
	}{
		{
			// A's step result and its transactional row are rejected.
			name: "journal write rejected", blockAt: "slow",
			output:  `"slow-by-B,after-by-B,done-by-B"`,
			journal: []string{`"slow-by-B"`, `"after-by-B"`}, effectsOf: "B",
		},
		{
			// A journalled "slow"; its completion, which also carries
			// the row of its last step "after", is rejected, so B runs
			// "after" again.
			name: "completion rejected", blockAt: "end",
			output:  `"slow-by-A,after-by-B,done-by-B"`,
			journal: []string{`"slow-by-A"`, `"after-by-B"`}, effectsOf: "A",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dsn := dbtest.URL(t, "fence")
			admin := openPG(t, dsn, 2)
			logsA := &syncBuffer{}
			a := durable.New(openPG(t, dsn, 2), durable.Options{WorkerID: "A", Logger: slog.New(slog.NewTextHandler(logsA, nil))})
			b := durable.New(openPG(t, dsn, 2), durable.Options{WorkerID: "B"})
			if err := a.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Exec(ctx, `CREATE TABLE fence_effects (run_id TEXT NOT NULL, step TEXT NOT NULL, worker TEXT NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			entered, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			defA := fenceWorkflow("A", func(point string) {
				if point == tc.blockAt {
					once.Do(func() { close(entered) })
					<-release
				}
			})
			defB := fenceWorkflow("B", func(string) {})
			if err := durable.Start(ctx, a, defA, "r1", "x"); err != nil {
				t.Fatal(err)
			}

			type result struct {
				worked bool
				err    error
			}
			doneA := make(chan result, 1)
			go func() {
				worked, err := a.Poll(ctx, []durable.Workflow{defA.Erase()})
				doneA <- result{worked, err}
			}()
			select {
			case <-entered:
			case r := <-doneA:
				t.Fatalf("worker A finished its poll (%v, %v) without reaching %q", r.worked, r.err, tc.blockAt)
			case <-time.After(time.Minute):
				t.Fatalf("worker A did not reach %q within a minute", tc.blockAt)
			}
			// Expire A's lease under it: its start (claimed_at) and the
			// due time the claim set (wake_at, the end of the lease).
			if n, err := admin.Exec(ctx, `UPDATE _sky_durable_runs SET claimed_at = claimed_at - INTERVAL '1 day', wake_at = wake_at - INTERVAL '1 day' WHERE id = ? AND status = 'running'`, "r1"); err != nil || n != 1 {
				t.Fatalf("expire A's lease: %d rows, %v", n, err)
			}
			if worked, err := b.Poll(ctx, []durable.Workflow{defB.Erase()}); !worked || err != nil {
				t.Fatalf("worker B poll = %v, %v; want it to reclaim and finish the run", worked, err)
			}
			r, _, err := b.Describe(ctx, "r1")
			if err != nil || r.Status != durable.StatusDone || r.Output != tc.output {
				t.Fatalf("after B: status %s output %s (%v); want done with %s", r.Status, r.Output, err, tc.output)
			}
			close(release)
			var resA result
			select {
			case resA = <-doneA:
			case <-time.After(time.Minute):
				t.Fatal("worker A did not return within a minute of being released")
			}
			if !resA.worked || resA.err != nil {
				t.Errorf("worker A poll = %v, %v; want true, nil (a lost lease is logged, not an error)", resA.worked, resA.err)
			}
			if !strings.Contains(logsA.String(), "lease lost") {
				t.Errorf("worker A did not log the lost lease; its log:\n%s", logsA.String())
			}

			r, j, err := b.Describe(ctx, "r1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != durable.StatusDone || r.Output != tc.output {
				t.Errorf("after A continued: status %s output %s; want done with %s (A wrote nothing)", r.Status, r.Output, tc.output)
			}
			var results []string
			for _, e := range j {
				results = append(results, e.Result)
			}
			if strings.Join(results, " ") != strings.Join(tc.journal, " ") {
				t.Errorf("journal results %v, want %v", results, tc.journal)
			}
			rows, err := admin.QueryMaps(ctx, `SELECT worker FROM fence_effects WHERE step = 'slow'`)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 1 || rows[0]["worker"] != tc.effectsOf {
				t.Errorf("fence_effects rows for step slow: %v; want exactly one, by %s", rows, tc.effectsOf)
			}
		})
	}
}
