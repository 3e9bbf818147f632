package postgres

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
)

// BenchmarkDeadlineSweep prints what the sweep Poll sends once a second
// costs on PostgreSQL: on 100,000 runs (10% of them with a deadline not yet
// passed) when nothing is overdue, and when it ends 1,000 overdue runs
// with a child each.
//
//	go test -run '^$' -bench BenchmarkDeadlineSweep -benchtime 1x ./runtime/durable/store/postgres
func BenchmarkDeadlineSweep(b *testing.B) {
	ctx := context.Background()
	d := dbtest.Open(b, "postgres")
	s := New(d, nil)
	if err := s.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, deadline_at)
  SELECT 'run-' || g, 'w', CASE WHEN g % 2 = 0 THEN 'done' ELSE 'waiting' END, '""', 'infinity', now(), now(),
         CASE WHEN g % 10 = 0 THEN now() + INTERVAL '1 day' END
    FROM generate_series(1, 100000) g;
ANALYZE _sky_durable_runs;`); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		var took []time.Duration
		for range 50 {
			began := time.Now()
			if n, _, err := s.TimeOutRuns(ctx, time.Time{}, deadlineBenchBatch); err != nil || n != 0 {
				b.Fatalf("empty sweep = %d, %v", n, err)
			}
			took = append(took, time.Since(began))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		fmt.Printf("deadline sweep, nothing overdue, 100,000 runs (10,000 with a deadline): median %.2f ms  max %.2f ms\n",
			ms(took[len(took)/2]), ms(took[len(took)-1]))
		if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, deadline_at)
  SELECT 'late-' || g, 'w', 'waiting', '""', 'infinity', now(), now(), now() - INTERVAL '1 minute' FROM generate_series(1, 1000) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, parent_id)
  SELECT 'late-' || g || '/child', 'w', 'waiting', '""', 'infinity', now(), now(), 'late-' || g FROM generate_series(1, 1000) g;`); err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		n, c, err := s.TimeOutRuns(ctx, time.Time{}, deadlineBenchBatch)
		if err != nil || n != 1000 || c != 1000 {
			b.Fatalf("sweep = %d, %d, %v; want 1000, 1000", n, c, err)
		}
		fmt.Printf("deadline sweep ending 1,000 overdue runs and cancelling their 1,000 children: %.2f ms (one statement)\n", ms(time.Since(began)))
		if _, err := d.ExecRaw(ctx, `DELETE FROM _sky_durable_runs WHERE id LIKE 'late-%'`); err != nil {
			b.Fatal(err)
		}
	}
}

// deadlineBenchBatch is the engine's batch (durable.deadlineSweepBatch).
const deadlineBenchBatch = 1000

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
