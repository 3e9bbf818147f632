package durable

import (
	"context"
	"sort"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// stepsThenSignal is a workflow "order" whose body runs the named steps
// (each counted by fx), optionally inserting a ledger row between the first
// two outside any step, then waits for signal "go".
func stepsThenSignal(fx *counter, insertBetween bool, ids ...string) Def[string, string] {
	return Register("order", str, str, func(c *Ctx, in string) task.Task[string] {
		t := task.Succeed("")
		for i, id := range ids {
			t = task.AndThen(t, func(acc string) task.Task[string] {
				step := Step(c, str, id, fx.effect(id, id))
				s := step
				if i == 1 && insertBetween {
					s = task.AndThen(task.From(func(ctx context.Context) (int64, error) {
						return c.DB().Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, in+"-between", 1)
					}), func(int64) task.Task[string] { return step })
				}
				return task.Map(s, func(v string) string { return acc + v })
			})
		}
		return task.AndThen(t, func(acc string) task.Task[string] {
			return task.Map(AwaitSignal(c, str, "go"), func(g string) string { return acc + g })
		})
	})
}

func TestReplay(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		old := stepsThenSignal(newCounter(), false, "reserve", "charge")
		h.start(old, "r1", "r1")
		h.start(old, "r2", "r2")
		h.drain(h.e, old.Erase())
		h.signal("r2", "go", `"!"`)
		h.drain(h.e, old.Erase())
		h.wantStatus("r1", StatusWaiting)
		h.wantStatus("r2", StatusDone)
		r1, j1 := h.describe("r1")

		cases := []struct {
			name    string
			ids     []string
			between bool
			want    string // "" = replays
		}{
			{"unchanged", []string{"reserve", "charge"}, false, ""},
			{"a step added at the end", []string{"reserve", "charge", "ship"}, false, ""},
			{"reordered", []string{"charge", "reserve"}, false,
				`run "r1" (workflow order version 1): at journal position 1 the new code asks for step "charge" but the journal recorded step "reserve"`},
			{"renamed", []string{"reserve", "pay"}, false,
				`at journal position 2 the new code asks for step "pay" but the journal recorded step "charge"`},
			{"a step removed", []string{"reserve"}, false,
				`at journal position 2 the new code asks for signal "signal:go" but the journal recorded step "charge"`},
			{"a write between steps", []string{"reserve", "charge"}, true, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				fx := newCounter()
				d := h.e.Replay(h.ctx, stepsThenSignal(fx, tc.between, tc.ids...).Erase(), r1, j1)
				switch {
				case tc.want == "" && d != nil:
					t.Errorf("diverged: %s", d)
				case tc.want != "" && d == nil:
					t.Errorf("replayed, want %q", tc.want)
				case tc.want != "" && !strings.Contains(d.String(), tc.want):
					t.Errorf("divergence %q, want it to contain %q", d, tc.want)
				}
				for _, id := range tc.ids {
					if n := fx.get(id); n != 0 {
						t.Errorf("the replay ran the effect of %q %d times", id, n)
					}
				}
				if ids := ledgerIDs(t, h); len(ids) != 0 {
					t.Errorf("the replay left ledger rows %v", ids)
				}
			})
		}

		t.Run("a body that finishes early", func(t *testing.T) {
			short := Register("order", str, str, func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "reserve", task.Succeed("r"))
			})
			d := h.e.Replay(h.ctx, short.Erase(), r1, j1)
			if d == nil || !strings.Contains(d.String(), `the body finished at journal position 2, but the journal recorded step "charge" there`) {
				t.Errorf("divergence %v, want the early finish at position 2", d)
			}
		})

		t.Run("the gate's verdict on every run in flight", func(t *testing.T) {
			reordered := stepsThenSignal(newCounter(), false, "charge", "reserve")
			v2 := reordered.Versioned(2)
			h.start(v2, "r3", "r3")
			cases := []struct {
				name string
				defs []Workflow
				want string // the verdict of r1, then of r3
			}{
				{"reordered in place", []Workflow{reordered.Erase()},
					`incompatible run "r1" (workflow order version 1): at journal position 1 the new code asks for step "charge" but the journal recorded step "reserve"` +
						"\n" + `incompatible run "r3" (workflow order version 2): the new code does not register version 2 of order (it has 1); keep version 2 registered`},
				{"reordered as version 2, version 1 kept", []Workflow{old.Erase(), v2.Erase()},
					`needs-version run "r1" (workflow order version 1): keep version 1 registered until the run finishes: its journal replays on version 1, and the newest version is 2` +
						"\n" + `compatible run "r3" (workflow order version 2): its journal replays`},
				{"version 1 kept, edited in place", []Workflow{reordered.Erase(), v2.Erase()},
					`incompatible run "r1" (workflow order version 1): at journal position 1` +
						"\n" + `compatible run "r3"`},
			}
			for _, tc := range cases {
				g, err := h.e.Gate(tc.defs)
				if err != nil {
					t.Fatal(err)
				}
				var found []Finding
				err = h.e.EachRun(h.ctx, nil, "order", func(r Run, j []JournalEntry) error {
					found = append(found, g.Check(h.ctx, r, j))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				sort.Slice(found, func(i, j int) bool { return found[i].Run.ID < found[j].Run.ID }) // r1, r3 (r2 is done: not in flight)
				var got []string
				for _, f := range found {
					got = append(got, f.String())
				}
				want := strings.Split(tc.want, "\n")
				if len(got) != len(want) {
					t.Fatalf("%s: findings %q, want %d", tc.name, got, len(want))
				}
				for i := range want {
					if !strings.HasPrefix(got[i], want[i]) {
						t.Errorf("%s: finding %q, want it to start with %q", tc.name, got[i], want[i])
					}
				}
			}
			n := 0
			if err := h.e.EachRun(h.ctx, nil, "other", func(Run, []JournalEntry) error { n++; return nil }); err != nil || n != 0 {
				t.Errorf("a filter on another workflow visited %d runs (%v), want 0", n, err)
			}
		})
		// The replays changed nothing.
		if r, j := h.describe("r1"); r.Status != StatusWaiting || len(j) != 2 {
			t.Errorf("r1 is %s with %d entries after the replays, want waiting with 2", r.Status, len(j))
		}
	})
}
