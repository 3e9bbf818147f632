package sqlite

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestStoreConformance runs the shared store suite on SQLite.
func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
		d := dbtest.Open(t, "sqlite")
		return New(d, func(string, string) {}), d
	})
}

// TestStepsRenewTheLeaseWithoutHeartbeats: a journalled step renews the
// lease (claimed_at) of an engine without heartbeats, in the step's
// transaction, and leaves the run's row alone for one whose beats hold the
// lease (store.Config.Beats, migration 0017); both journal the step and
// both are fenced by the token.
func TestStepsRenewTheLeaseWithoutHeartbeats(t *testing.T) {
	for _, beats := range []bool{false, true} {
		t.Run(map[bool]string{false: "no heartbeats", true: "heartbeats"}[beats], func(t *testing.T) {
			ctx := context.Background()
			d := dbtest.Open(t, "sqlite")
			var sent []string
			s := NewWith(d, store.Config{Beats: beats, Hook: func(op, _ string) { sent = append(sent, op) }})
			if err := s.Setup(ctx); err != nil {
				t.Fatal(err)
			}
			t0, step := storetest.T0, storetest.T0.Add(time.Minute)
			if _, inserted, _, err := s.InsertClaimedRun(ctx, store.NewRun{ID: "r", Workflow: "w", Version: 1, Input: `1`},
				t0, storetest.Lease, "A", "worker-A"); err != nil || !inserted {
				t.Fatalf("InsertClaimedRun = %v, %v", inserted, err)
			}
			claimedAt := func() time.Time {
				var at, updated int64
				if err := d.QueryRow(ctx, "SELECT claimed_at, updated_at FROM _sky_durable_runs WHERE id = 'r'").Scan(&at, &updated); err != nil {
					t.Fatal(err)
				}
				if updated != ms(t0) {
					t.Errorf("updated_at = %v after a step, want the claim's %v (it moves with the run's state)", store.FromMs(updated), t0)
				}
				return store.FromMs(at)
			}
			sent = nil
			entry := store.JournalEntry{Seq: 1, StepID: "a", Kind: store.KindStep, Result: `1`}
			if err := s.AppendEntry(ctx, d, store.Fence{RunID: "r", Token: "A"}, entry, step); err != nil {
				t.Fatal(err)
			}
			want, wantSent := step, []string{"append", "renew"}
			if beats {
				want, wantSent = t0, []string{"append"}
			}
			if got := claimedAt(); !got.Equal(want) {
				t.Errorf("claimed_at after the step = %v, want %v", got, want)
			}
			if !slices.Equal(sent, wantSent) {
				t.Errorf("the step sent %v, want %v", sent, wantSent)
			}
			if j, err := s.LoadJournal(ctx, "r"); err != nil || len(j) != 1 || j[0].StepID != "a" {
				t.Errorf("journal = %+v, %v; want step a", j, err)
			}
			lost := s.AppendEntry(ctx, d, store.Fence{RunID: "r", Token: "B"}, store.JournalEntry{Seq: 2, StepID: "b", Kind: store.KindStep, Result: `2`}, step)
			if !errors.Is(lost, store.ErrLeaseLost) {
				t.Errorf("a step under another token = %v, want the lease lost", lost)
			}
			if got := claimedAt(); !got.Equal(want) {
				t.Errorf("claimed_at after a fenced-out step = %v, want %v", got, want)
			}
		})
	}
}
