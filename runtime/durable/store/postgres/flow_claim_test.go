package postgres

import (
	"context"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// TestLimitedClaimStatements counts the statements of claims with limits:
// one when the run the claim locks is admitted (what limits cost when they
// hold nothing back), two when it is held back (the gated claim then takes
// the next open run), and the held run stays waiting.
func TestLimitedClaimStatements(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	var claims int
	s := New(d, func(op, _ string) {
		if op == "claim" {
			claims++
		}
	})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.DeclareLimits(ctx, store.Limits{Workflow: "w", Concurrency: 10, PerKey: 1}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, `INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, limit_key) VALUES
		('a1', 'w', 'waiting', '1', now() - interval '3 s', now(), now(), 'a'),
		('a2', 'w', 'waiting', '1', now() - interval '2 s', now(), now(), 'a'),
		('b1', 'w', 'waiting', '1', now() - interval '1 s', now(), now(), 'b')`); err != nil {
		t.Fatal(err)
	}
	claim := func(token string) string {
		claims = 0
		c, ok, _, err := s.ClaimLimited(ctx, store.LimitedClaim{Names: []string{"w"}, Limited: []string{"w"}, Lease: storetest.Lease, Token: token, Worker: "w1"}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return ""
		}
		return c.ID
	}
	steps := []struct {
		want       string
		statements int
	}{
		{"a1", 1}, // admitted
		{"b1", 2}, // a2 is held by key a: the gated claim skips it
		{"", 2},   // only a2 is due, and it is held
	}
	for i, st := range steps {
		if got := claim(string(rune('p' + i))); got != st.want || claims != st.statements {
			t.Errorf("claim %d took %q in %d statements, want %q in %d", i+1, got, claims, st.want, st.statements)
		}
	}
	var status string
	var slot *int
	if err := d.QueryRow(ctx, `SELECT status, flow_slot FROM _sky_durable_runs WHERE id = 'a2'`).Scan(&status, &slot); err != nil || status != "waiting" || slot != nil {
		t.Errorf("held run a2 is %s with slot %v (%v), want waiting with no slot", status, slot, err)
	}
	var slots []int
	rows, err := d.Query(ctx, `SELECT flow_slot FROM _sky_durable_runs WHERE status = 'running' ORDER BY flow_slot`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		slots = append(slots, n)
	}
	rows.Close()
	if len(slots) != 2 || slots[0] != 0 || slots[1] != 1 {
		t.Errorf("the running runs hold slots %v, want [0 1]", slots)
	}
}
