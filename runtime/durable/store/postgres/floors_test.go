package postgres

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// holdHorizon opens a REPEATABLE READ transaction on d that has taken its
// snapshot, so no row version deleted after it can be removed, and keeps
// it open until the test ends.
func holdHorizon(t *testing.T, d *db.DB) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	held, done := make(chan error, 1), make(chan struct{})
	go func() {
		defer close(done)
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			if _, err := tx.ExecRaw(ctx, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, "SELECT count(*) FROM _sky_durable_runs").Scan(&n); err != nil {
				return err
			}
			held <- nil
			<-ctx.Done()
			return ctx.Err()
		})
		select {
		case held <- err:
		default:
		}
	}()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
}

// claimBuffers is the shared buffers a claim statement touches with the
// floors parameter floors (nil: none), from EXPLAIN (ANALYZE, BUFFERS) in
// a transaction rolled back (the claim it makes is undone).
func claimBuffers(t *testing.T, d *db.DB, floors any) int {
	t.Helper()
	ctx := context.Background()
	rollback := errors.New("rollback")
	var plan string
	err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		rows, err := tx.QueryMaps(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "+pgClaim,
			nil, storetest.Lease.Milliseconds(), floors, `["w"]`, "explain", "explain")
		if err != nil {
			return err
		}
		plan = rows[0]["QUERY PLAN"]
		for _, r := range rows[1:] {
			if m := topBuffers.FindStringSubmatch(r["QUERY PLAN"]); m != nil {
				plan = m[0]
				break
			}
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		t.Fatal(err)
	}
	m := topBuffers.FindStringSubmatch(plan)
	if m == nil {
		t.Fatalf("no buffer count in %q", plan)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// floorStore is a PostgreSQL store on a database of its own, set up.
func floorStore(t *testing.T) (*Store, *db.DB) {
	t.Helper()
	d := dbtest.Open(t, "postgres")
	s := New(d, nil)
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, d
}

// claimWants claims a run of workflow w on the database's clock and fails
// unless it is want.
func claimWants(t *testing.T, s *Store, want string) {
	t.Helper()
	c, ok, err := s.ClaimRun(context.Background(), []string{"w"}, time.Time{}, storetest.Lease, "token-"+want, "worker")
	if err != nil || !ok || c.ID != want {
		t.Fatalf("claim: got %q (%v, %v), want %s", c.ID, ok, err, want)
	}
}

// setAge makes s's floors, if it has any, age old: the tests check what
// fresh and stale floors do whatever time they took to get there.
func setAge(s *Store, age time.Duration) {
	s.floors.mu.Lock()
	defer s.floors.mu.Unlock()
	if !s.floors.read.IsZero() {
		s.floors.read = time.Now().Add(-age)
	}
}

// floorsRead is whether s has floors read at or after t.
func floorsRead(s *Store, t time.Time) bool {
	s.floors.mu.Lock()
	defer s.floors.mu.Unlock()
	return !s.floors.read.IsZero() && !s.floors.read.Before(t)
}

// topBuffers is the first Buffers line of a plan: the whole statement's.
var topBuffers = regexp.MustCompile(`Buffers: shared hit=(\d+)`)

// TestClaimFloorsSkipTheRowVersionsNoOneSees: with a transaction holding
// the xmin horizon, 20,000 runs finished after it leave their old versions
// in the claim index, before the 5 live due runs. The claim without floors
// reads them all (in its level probe and its range scan); the claim with
// the floors the first one read starts the range at the first live run.
// Both claim the oldest live run.
func TestClaimFloorsSkipTheRowVersionsNoOneSees(t *testing.T) {
	ctx := context.Background()
	s, d := floorStore(t)
	if _, err := d.ExecRaw(ctx, `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
SELECT 'old' || g, 'w', 'waiting', '""', now() - interval '1 hour' + g * interval '1 ms', now(), now() FROM generate_series(1, 20000) g;
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
SELECT 'live' || g, 'w', 'waiting', '""', now() - interval '10 minutes' + g * interval '1 s', now(), now() FROM generate_series(1, 5) g;
ANALYZE _sky_durable_runs`); err != nil {
		t.Fatal(err)
	}
	holdHorizon(t, d)
	if _, err := d.ExecRaw(ctx, `UPDATE _sky_durable_runs SET status = 'done', wake_at = 'infinity' WHERE id LIKE 'old%'`); err != nil {
		t.Fatal(err)
	}
	if s.floors.param(time.Time{}) != nil {
		t.Fatal("a new store has floors")
	}
	claimWants(t, s, "live1") // without floors: reads them
	setAge(s, 0)
	floors := s.floors.param(time.Time{})
	if floors == nil {
		t.Fatal("the claim without floors left none")
	}
	without, with := claimBuffers(t, d, nil), claimBuffers(t, d, floors)
	t.Logf("shared buffers of a claim: %d without floors, %d with", without, with)
	if with > 60 || without < 10*with {
		t.Errorf("shared buffers of a claim: %d without floors, %d with; want at most 60 with, a tenth of without", without, with)
	}
	setAge(s, 0)
	claimWants(t, s, "live2") // with floors
}

// TestClaimFloorsBound: a run made due below the floors by another writer
// (its clock an hour behind) is not seen by the claims with them, and is
// the next claim's once they are a floorRefresh old; a start of this store
// at a priority the floors do not name drops them, so its next claim takes
// that run first.
func TestClaimFloorsBound(t *testing.T) {
	ctx := context.Background()
	s, d := floorStore(t)
	start := func(id string, priority int) {
		t.Helper()
		if ok, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `""`, Priority: priority}, time.Time{}); err != nil || !ok {
			t.Fatalf("start %s: %v %v", id, ok, err)
		}
	}
	for _, id := range []string{"a", "b", "c", "d"} {
		start(id, 0)
	}
	before := time.Now()
	claimWants(t, s, "a")
	if !floorsRead(s, before) {
		t.Fatal("the first claim did not read the floors")
	}
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
VALUES ('late', 'w', 'waiting', '""', now() - interval '1 hour', now(), now())`); err != nil {
		t.Fatal(err)
	}
	setAge(s, 0)
	claimWants(t, s, "b") // with the floors: 'late' is below them
	setAge(s, floorRefresh)
	before = time.Now()
	claimWants(t, s, "late") // a floorRefresh later: without them, the most overdue
	if !floorsRead(s, before) {
		t.Fatal("the claim with stale floors did not read them again")
	}
	start("urgent", 3)
	if floorsRead(s, time.Time{}) {
		t.Fatal("a start at priority 3 kept floors that do not name it")
	}
	claimWants(t, s, "urgent")
	setAge(s, 0)
	start("next", 3) // its priority is named now
	if s.floors.param(time.Time{}) == nil {
		t.Fatal("a start at a priority the floors name dropped them")
	}
	claimWants(t, s, "next")
	claimWants(t, s, "c")
}

// TestProbeKeepsTheFloorsBound: while the floors are fresh the probe reads
// the due index from the lowest of them, and the quiet it allows ends when
// they go stale: a run made due below them is not seen until then, and is
// seen by the probe (and the claim) after.
func TestProbeKeepsTheFloorsBound(t *testing.T) {
	ctx := context.Background()
	s, d := floorStore(t)
	if ok, _, err := s.InsertRun(ctx, store.NewRun{ID: "a", Workflow: "w", Version: 1, Input: `""`}, time.Time{}); err != nil || !ok {
		t.Fatalf("start: %v %v", ok, err)
	}
	claimWants(t, s, "a")
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at)
VALUES ('late', 'w', 'waiting', '""', now() - interval '1 hour', now(), now())`); err != nil {
		t.Fatal(err)
	}
	setAge(s, 0)
	p, err := s.Probe(ctx, []string{"w"}, time.Time{}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if p.Due || p.Next <= 0 || p.Next > floorRefresh {
		t.Fatalf("probe with fresh floors: due %v, next %v; want not due (the run is below them), next at most %v", p.Due, p.Next, floorRefresh)
	}
	setAge(s, floorRefresh)
	if p, err = s.Probe(ctx, []string{"w"}, time.Time{}, 30*time.Second); err != nil || !p.Due {
		t.Fatalf("probe with stale floors: due %v (%v); want due", p.Due, err)
	}
}
