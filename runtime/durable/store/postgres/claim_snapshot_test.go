package postgres

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestClaimDetectsAJournalWriteItsSnapshotMissed makes the one interleaving
// the PostgreSQL claim's snapshot cannot see: the old holder's journal write
// commits after the claim statement started but before it locks the run,
// and leaves the run claimable (its lease renewed by a clock far behind the
// claimant's). The claim must then say its journal is not complete, and
// LoadJournal (after the claim) must see the write.
func TestClaimDetectsAJournalWriteItsSnapshotMissed(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	s := New(d, func(string, string) {})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := storetest.T0
	if _, _, err := s.InsertRun(ctx, store.NewRun{ID: "r", Workflow: "w", Version: 1, Input: `"in"`}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimRun(ctx, []string{"w"}, t0, storetest.Lease, "token-A", "A"); err != nil || !ok {
		t.Fatalf("A's claim = %v, %v", ok, err)
	}
	want := storetest.JournalSteps(2)
	if err := s.AppendEntry(ctx, d, store.Fence{RunID: "r", Token: "token-A"}, want[0], t0); err != nil {
		t.Fatal(err)
	}

	// The claim statement, made to wait on an advisory lock the test holds
	// after its snapshot is taken and before it reaches the run.
	const key = 7_362_201_556
	stalled := pgClaimWhere(`r.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
     AND (SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared(7362201556)) l) = 1`, 1)
	type result struct {
		c   store.Claimed
		ok  bool
		err error
	}
	done := make(chan result, 1)
	t1 := t0.Add(storetest.Lease + time.Minute)
	// Inside the callback, ctx (not txCtx) keeps the other statements off
	// the transaction's connection.
	err := d.WithTransaction(ctx, func(txCtx context.Context, tx *db.DB) error {
		if _, err := tx.Exec(txCtx, `SELECT pg_advisory_xact_lock(?)`, int64(key)); err != nil {
			return err
		}
		go func() {
			c, ok, err := s.claimOne(context.Background(), claimRequest{single: stalled, pick: `["w"]`, now: t1, lease: storetest.Lease, token: "token-B", worker: "B"})
			done <- result{c, ok, err}
		}()
		// (The claim's text is longer than pg_stat_activity keeps: the
		// test's database tells its wait apart.)
		waitFor(t, "the claim to wait on the advisory lock", func() bool {
			var n int64
			err := d.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			  WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND datname = current_database()`).Scan(&n)
			return err == nil && n == 1
		})
		// A, still holding its (expired) lease, journals its second step
		// with its own clock: the run stays claimable for B.
		return s.AppendEntry(ctx, d, store.Fence{RunID: "r", Token: "token-A"}, want[1], t0.Add(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.ok {
		t.Fatalf("B's claim = %v, %v", r.ok, r.err)
	}
	if r.c.JournalRead || r.c.Journal != nil {
		t.Fatalf("B's claim reports a complete journal %+v, though its snapshot missed A's second entry", r.c.Journal)
	}
	j, err := s.LoadJournal(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, j, storetest.IgnoreTimes); diff != "" {
		t.Errorf("journal read after B's claim (-want +got):\n%s", diff)
	}
}

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
