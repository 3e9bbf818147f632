package durable

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

// The claim reads the run's journal in the same statement (store_postgres.go
// pgClaimWhere, store_sqlite.go sqliteClaimWhere). These tests check that the
// journal it returns is complete, or that it says it is not.

// journalSteps is n plain step entries, results "1", "2", ...
func journalSteps(n int) []JournalEntry {
	var out []JournalEntry
	for i := 1; i <= n; i++ {
		out = append(out, JournalEntry{Seq: i, StepID: string(rune('a' + i - 1)), Kind: KindStep, Result: `"` + string(rune('0'+i)) + `"`})
	}
	return out
}

var cmpJournal = cmp.Transformer("noTime", func(e JournalEntry) JournalEntry { e.CreatedAt = time.Time{}; return e })

// TestClaimReturnsTheJournalAfterLeaseExpiry: worker A journals two steps
// and stalls; after its lease expires B claims the run, and the claim alone
// hands B both entries, with their times.
func TestClaimReturnsTheJournalAfterLeaseExpiry(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		clock := newVirtualClock()
		e := New(d, Options{Clock: clock.Now})
		if err := e.Setup(ctx); err != nil {
			t.Fatal(err)
		}
		s := e.store
		t0 := clock.Now()
		if _, _, err := s.insertRun(ctx, newRun{id: "r", workflow: "w", version: 1, input: `"in"`}, t0); err != nil {
			t.Fatal(err)
		}
		a, ok, err := s.claimRun(ctx, []string{"w"}, t0, DefaultLease, "token-A", "A")
		if err != nil || !ok {
			t.Fatalf("A's claim = %v, %v", ok, err)
		}
		if !a.journalRead || len(a.journal) != 0 || a.input != `"in"` || a.attempts != 1 {
			t.Fatalf("A's claim of a fresh run: %+v", a)
		}
		want := journalSteps(2)
		for i, je := range want {
			if err := s.appendEntry(ctx, d, fence{"r", "token-A"}, je, t0.Add(time.Duration(i+1)*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
		if _, ok, _ := s.claimRun(ctx, []string{"w"}, t0.Add(time.Minute), DefaultLease, "token-B", "B"); ok {
			t.Fatal("B claimed the run while A's lease held")
		}
		t1 := t0.Add(DefaultLease + time.Minute)
		b, ok, err := s.claimRun(ctx, []string{"w"}, t1, DefaultLease, "token-B", "B")
		if err != nil || !ok {
			t.Fatalf("B's claim after the lease expired = %v, %v", ok, err)
		}
		if !b.journalRead || b.attempts != 2 || b.id != "r" || b.input != `"in"` {
			t.Fatalf("B's claim: %+v", b)
		}
		if diff := cmp.Diff(want, b.journal, cmpJournal); diff != "" {
			t.Errorf("journal returned by B's claim (-want +got):\n%s", diff)
		}
		if got := b.journal[1].CreatedAt; !got.Equal(t0.Add(2 * time.Second)) {
			t.Errorf("second entry's time = %v, want %v", got, t0.Add(2*time.Second))
		}
		if err := s.appendEntry(ctx, d, fence{"r", "token-A"}, JournalEntry{Seq: 3, StepID: "c", Kind: KindStep, Result: `"3"`}, t1); !IsLeaseLost(err) {
			t.Errorf("A's write after B's claim = %v, want a lost lease", err)
		}
	})
}

// TestClaimDetectsAJournalWriteItsSnapshotMissed makes the one interleaving
// the PostgreSQL claim's snapshot cannot see: the old holder's journal write
// commits after the claim statement started but before it locks the run,
// and leaves the run claimable (its lease renewed by a clock far behind the
// claimant's). The claim must then say its journal is not complete, and
// loadJournal (after the claim) must see the write.
func TestClaimDetectsAJournalWriteItsSnapshotMissed(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	clock := newVirtualClock()
	e := New(d, Options{Clock: clock.Now})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.store.(*pgStore)
	t0 := clock.Now()
	if _, _, err := s.insertRun(ctx, newRun{id: "r", workflow: "w", version: 1, input: `"in"`}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.claimRun(ctx, []string{"w"}, t0, DefaultLease, "token-A", "A"); err != nil || !ok {
		t.Fatalf("A's claim = %v, %v", ok, err)
	}
	want := journalSteps(2)
	if err := s.appendEntry(ctx, d, fence{"r", "token-A"}, want[0], t0); err != nil {
		t.Fatal(err)
	}

	// The claim statement, made to wait on an advisory lock the test holds
	// after its snapshot is taken and before it reaches the run.
	const key = 7_362_201_556
	stalled := pgClaimWhere(`r.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
     AND (SELECT 1 FROM (SELECT pg_advisory_xact_lock_shared(7362201556)) l) = 1`, 1)
	type result struct {
		c   claimed
		ok  bool
		err error
	}
	done := make(chan result, 1)
	t1 := t0.Add(DefaultLease + time.Minute)
	// Inside the callback, ctx (not txCtx) keeps the other statements off
	// the transaction's connection.
	err := d.WithTransaction(ctx, func(txCtx context.Context, tx *db.DB) error {
		if _, err := tx.Exec(txCtx, `SELECT pg_advisory_xact_lock(?)`, int64(key)); err != nil {
			return err
		}
		go func() {
			c, ok, err := s.claimOne(context.Background(), claimRequest{single: stalled, pick: `["w"]`, now: t1, lease: DefaultLease, token: "token-B", worker: "B"})
			done <- result{c, ok, err}
		}()
		waitFor(t, "the claim to wait on the advisory lock", func() bool {
			var n int64
			err := d.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity
			  WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE '%7362201556%'`).Scan(&n)
			return err == nil && n == 1
		})
		// A, still holding its (expired) lease, journals its second step
		// with its own clock: the run stays claimable for B.
		return s.appendEntry(ctx, d, fence{"r", "token-A"}, want[1], t0.Add(time.Second))
	})
	if err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.ok {
		t.Fatalf("B's claim = %v, %v", r.ok, r.err)
	}
	if r.c.journalRead || r.c.journal != nil {
		t.Fatalf("B's claim reports a complete journal %+v, though its snapshot missed A's second entry", r.c.journal)
	}
	j, err := s.loadJournal(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, j, cmpJournal); diff != "" {
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
