package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
	"skydurable/runtime/task"
)

var errBoom = errors.New("boom")

// TestBatchedWritesShareATransaction runs a batch of writes directly: they
// share one transaction, and each gets the outcome it gets alone: written,
// its lease lost (a completion with its last step leaves no journal row), a
// taken journal position refused as a Conflict; the claim in the batch
// leases a run, a write that fails after writing leaves nothing (its
// savepoint), and a completion's done notification waits for the commit.
func TestBatchedWritesShareATransaction(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "sqlite")
	s := New(d, nil)
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{"r1", "r2", "r3", "r4", "due"} {
		if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `""`}, now); err != nil {
			t.Fatal(err)
		}
		if id == "due" {
			continue
		}
		if _, ok, err := s.ClaimRun(ctx, []string{"w"}, now, storetest.Lease, "tok-"+id, "A"); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
	}
	step := store.JournalEntry{Seq: 1, StepID: "a", Kind: store.KindStep, Result: `"a"`}
	if err := s.AppendEntry(ctx, s.d, store.Fence{RunID: "r3", Token: "tok-r3"}, step, now); err != nil {
		t.Fatal(err)
	}
	var claimed store.Claimed
	var notified []string
	batch := []write{
		{run: func(ctx context.Context) error {
			return s.AppendEntry(ctx, s.d, store.Fence{RunID: "r1", Token: "tok-r1"}, step, now)
		}},
		{run: func(ctx context.Context) error {
			return s.complete(ctx, store.Fence{RunID: "r2", Token: "stale"}, &step, `"two"`, now)
		}, after: func() { notified = append(notified, "r2") }},
		{run: func(ctx context.Context) error { // position 1 is taken
			return s.AppendEntry(ctx, s.d, store.Fence{RunID: "r3", Token: "tok-r3"}, step, now)
		}},
		{run: func(ctx context.Context) error {
			return s.complete(ctx, store.Fence{RunID: "r4", Token: "tok-r4"}, &step, `"four"`, now)
		}, after: func() { notified = append(notified, "r4") }},
		{run: func(ctx context.Context) error {
			var err error
			claimed, _, err = s.claimOn(ctx, sqliteClaim, false, `["w"]`, now, storetest.Lease, "tok-due", "B")
			return err
		}},
		{run: func(ctx context.Context) error { // it wrote, then failed: none of it stays
			second := store.JournalEntry{Seq: 2, StepID: "b", Kind: store.KindStep, Result: `"b"`}
			if err := s.AppendEntry(ctx, s.d, store.Fence{RunID: "r1", Token: "tok-r1"}, second, now); err != nil {
				return err
			}
			return errBoom
		}},
	}
	errs := s.writeBatch(ctx, batch)
	if errs[0] != nil || errs[3] != nil || errs[4] != nil {
		t.Errorf("valid writes: %v", errs)
	}
	if !errors.Is(errs[5], errBoom) {
		t.Errorf("the failing write: %v, want its own error", errs[5])
	}
	if !errors.Is(errs[1], store.ErrLeaseLost) {
		t.Errorf("stale fence: %v, want a lost lease", errs[1])
	}
	if se := task.As(errs[2]); se == nil || se.Kind != task.Conflict {
		t.Errorf("taken position: %v, want the Conflict a lone write gets", errs[2])
	}
	if len(notified) != 1 || notified[0] != "r4" {
		t.Errorf("done notifications: %v, want r4's only", notified)
	}
	if claimed.ID != "due" {
		t.Errorf("the batch's claim leased %q, want due", claimed.ID)
	}
	for id, want := range map[string]int{"r1": 1, "r2": 0, "r3": 1, "r4": 1} {
		if j, err := s.LoadJournal(ctx, id); err != nil || len(j) != want {
			t.Errorf("journal of %s: %d entries (%v), want %d", id, len(j), err, want)
		}
	}
	for id, want := range map[string]store.Status{"r2": store.StatusRunning, "r4": store.StatusDone, "due": store.StatusRunning} {
		if r, err := s.ReadRun(ctx, id); err != nil || r.Status != want {
			t.Errorf("%s: %s (%v), want %s", id, r.Status, err, want)
		}
	}
}
