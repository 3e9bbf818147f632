package postgres

// The interleavings of a parent's suspension and its children's finishes
// that only PostgreSQL has (SQLite serialises writers), made to happen: each
// holds one transaction open at the point that matters and waits until the
// other statement is blocked on it.

import (
	"context"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// childFixture is run "p" claimed under token "P" with children keys (in
// group when not ""), each claimed under token "C"+key.
func childFixture(t *testing.T, group string, keys ...string) (*Store, *db.DB) {
	t.Helper()
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	s := New(d, nil)
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := storetest.T0
	if _, _, err := s.InsertRun(ctx, store.NewRun{ID: "p", Workflow: "w", Version: 1, Input: `1`}, t0); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimRun(ctx, []string{"w"}, t0, storetest.Lease, "P", "P"); err != nil || !ok {
		t.Fatalf("claim p = %v, %v", ok, err)
	}
	var news []store.NewChild
	for _, k := range keys {
		news = append(news, store.NewChild{ID: "p/" + k, Input: `1`})
	}
	if _, err := s.InsertChildren(ctx, d, "p", group, "w", 1, news, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if c, ok, err := s.ClaimRun(ctx, []string{"w"}, t0.Add(2*time.Second), storetest.Lease, "C"+k, "C"); err != nil || !ok || c.ID != "p/"+k {
			t.Fatalf("claim p/%s = %+v, %v, %v", k, c, ok, err)
		}
	}
	return s, d
}

// blockedOn waits until a statement containing marker waits for a lock.
func blockedOn(t *testing.T, d *db.DB, marker string) {
	t.Helper()
	waitFor(t, "a statement with "+marker+" to wait for a lock", func() bool {
		var n int64
		err := d.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
		  WHERE datname = current_database() AND wait_event_type = 'Lock' AND strpos(query, ?) > 0`, marker).Scan(&n)
		return err == nil && n == 1
	})
}

func wantParentDue(t *testing.T, s *Store, at time.Time) {
	t.Helper()
	r, err := s.ReadRun(context.Background(), "p")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != store.StatusWaiting || !r.WakeAt.Equal(at) {
		t.Fatalf("parent: %s, due %v (waiting for %q); want waiting and due at %v", r.Status, r.WakeAt, r.WaitingSignal, at)
	}
}

// TestAParentSuspendingWhileItsChildFinishesIsDue: the child's completion is
// written but not committed when the parent suspends on it. The parent's
// suspension waits for it and parks the parent due at once.
func TestAParentSuspendingWhileItsChildFinishesIsDue(t *testing.T) {
	ctx := context.Background()
	s, d := childFixture(t, "", "a")
	at := storetest.T0.Add(5 * time.Second)
	done := make(chan error, 1)
	err := d.WithTransaction(ctx, func(txCtx context.Context, _ *db.DB) error {
		if err := s.Complete(txCtx, store.Fence{RunID: "p/a", Token: "Ca"}, nil, `"x"`, at.Add(-time.Second)); err != nil {
			return err
		}
		go func() {
			done <- s.AwaitChildren(ctx, store.Fence{RunID: "p", Token: "P"}, store.ChildWait{ChildID: "p/a"}, at)
		}()
		blockedOn(t, d, "FOR SHARE")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("AwaitChildren: %v", err)
	}
	wantParentDue(t, s, at)
}

// TestTheLastTwoSiblingsFinishingAtOnceWakeTheParent: the first of the last
// two children of a group finishes in a transaction left open; the second
// finishes meanwhile. Neither sees the other committed when it runs, yet
// the parent must be woken.
func TestTheLastTwoSiblingsFinishingAtOnceWakeTheParent(t *testing.T) {
	ctx := context.Background()
	s, d := childFixture(t, "g", "a", "b")
	// The parent parks on the group (its lease is still held: claim first).
	if err := s.AwaitChildren(ctx, store.Fence{RunID: "p", Token: "P"}, store.ChildWait{Group: "g"}, storetest.T0.Add(3*time.Second)); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.ReadRun(ctx, "p"); !r.WakeAt.IsZero() {
		t.Fatalf("the parent is due at %v before any child finished", r.WakeAt)
	}
	first, second := storetest.T0.Add(4*time.Second), storetest.T0.Add(5*time.Second)
	done := make(chan error, 1)
	err := d.WithTransaction(ctx, func(txCtx context.Context, _ *db.DB) error {
		if err := s.Complete(txCtx, store.Fence{RunID: "p/a", Token: "Ca"}, nil, `"a"`, first); err != nil {
			return err
		}
		go func() { done <- s.Complete(ctx, store.Fence{RunID: "p/b", Token: "Cb"}, nil, `"b"`, second) }()
		blockedOn(t, d, "status = 'done'")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the second child's completion: %v", err)
	}
	wantParentDue(t, s, second)
}
