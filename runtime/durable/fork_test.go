package durable

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// threeSteps is a workflow of three steps: a random id (stepValue, drawn
// from crypto/rand: never the same twice), a charge and a shipment, each
// counted.
func threeSteps(n *counter) Def[string, string] {
	return Register("three", str, str, func(c *Ctx, in string) task.Task[string] {
		id := StepValue(c, str, "id", func() string {
			n.hit("id")
			b := make([]byte, 16)
			_, _ = rand.Read(b)
			return hex.EncodeToString(b)
		})
		return task.AndThen(id, func(id string) task.Task[string] {
			charge := Step(c, str, "charge", task.Map(n.effect("charge", "charged"), func(s string) string { return s + "-" + id }))
			return task.AndThen(charge, func(ch string) task.Task[string] {
				return task.Map(Step(c, str, "ship", n.effect("ship", "shipped")), func(s string) string { return in + ":" + ch + ":" + s })
			})
		})
	})
}

// TestForkKeepsEveryValueBeforeTheCut forks a done run at its last step:
// the fork's entries before the cut are the original's byte for byte (the
// random id is not drawn again, the charge not made again), it runs the
// rest, and it diffs identical to the original. The original is untouched.
func TestForkKeepsEveryValueBeforeTheCut(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		n := newCounter()
		def := threeSteps(n)
		h.start(def, "o", "order")
		h.drain(h.e, def.Erase())
		orig, oj := h.describe("o")
		h.clock.Advance(3600e9)
		id, err := h.e.Fork(h.ctx, "o", "ship", ForkOptions{NewID: "o2"})
		if err != nil || id != "o2" {
			t.Fatalf("Fork = %q, %v", id, err)
		}
		if r := h.wantStatus("o2", StatusWaiting); r.ForkedFrom != "o" || r.ForkStep != "ship" || r.Input != orig.Input {
			t.Errorf("fork: forked from %q at %q, input %s", r.ForkedFrom, r.ForkStep, r.Input)
		}
		h.drain(h.e, def.Erase())
		f := h.wantStatus("o2", StatusDone)
		_, fj := h.describe("o2")
		if diff := cmp.Diff(oj[:2], fj[:2]); diff != "" {
			t.Errorf("the fork's entries before the cut differ from the original's (-orig +fork):\n%s", diff)
		}
		if f.Output != orig.Output {
			t.Errorf("fork's output %s, original's %s: the id was drawn again", f.Output, orig.Output)
		}
		if got := [3]int{n.get("id"), n.get("charge"), n.get("ship")}; got != [3]int{1, 1, 2} {
			t.Errorf("id drawn, charge made, shipment made = %v; want [1 1 2] (only the step at the cut runs again)", got)
		}
		diff, err := h.e.Diff(h.ctx, "o", "o2")
		if err != nil || !diff.Identical() || len(diff.Entries) != 3 {
			t.Errorf("Diff(original, fork) = %+v, %v; want identical over 3 entries", diff, err)
		}
		if r, j := h.describe("o"); r.Status != StatusDone || r.Output != orig.Output || !cmp.Equal(j, oj) {
			t.Errorf("the original changed: %+v", r)
		}
	})
}

// TestForkSetReplacesTheResultAtTheCut: --set keeps the step at the cut
// with the given result and runs on after it; the diff shows the change.
func TestForkSetReplacesTheResultAtTheCut(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		n := newCounter()
		def := threeSteps(n)
		h.start(def, "o", "order")
		h.drain(h.e, def.Erase())
		id, err := h.e.Fork(h.ctx, "o", "charge", ForkOptions{Set: `"declined"`})
		if err != nil {
			t.Fatal(err)
		}
		wantContains(t, id, "o~fork-")
		h.drain(h.e, def.Erase())
		if r := h.wantStatus(id, StatusDone); r.Output != `"order:declined:shipped"` {
			t.Errorf("fork with a set charge: output %s", r.Output)
		}
		if got := [3]int{n.get("id"), n.get("charge"), n.get("ship")}; got != [3]int{1, 1, 2} {
			t.Errorf("id, charge, ship = %v; want [1 1 2]", got)
		}
		diff, err := h.e.Diff(h.ctx, "o", id)
		if err != nil {
			t.Fatal(err)
		}
		kinds := []DiffKind{}
		for _, en := range diff.Entries {
			kinds = append(kinds, en.Kind)
		}
		if !cmp.Equal(kinds, []DiffKind{DiffSame, DiffChanged, DiffSame}) || diff.Output != DiffChanged {
			t.Errorf("diff kinds %v, output %s; want same, changed, same and a changed output", kinds, diff.Output)
		}
	})
}

// TestForkRefusals: an unknown run or step, a new id that exists, invalid
// JSON, a --set on a signal; each changes nothing.
func TestForkRefusals(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		def := threeSteps(newCounter())
		h.start(def, "o", "order")
		h.start(def, "taken", "x")
		h.drain(h.e, def.Erase())
		_, err := h.e.Fork(h.ctx, "nope", "ship", ForkOptions{})
		wantErrContains(t, err, task.NotFound, `no run with id "nope"`)
		_, err = h.e.Fork(h.ctx, "o", "pay", ForkOptions{})
		wantErrContains(t, err, task.InvalidInput, `run "o" has no step "pay"`, "its steps are id, charge, ship")
		_, err = h.e.Fork(h.ctx, "o", "ship", ForkOptions{NewID: "taken"})
		wantErrContains(t, err, task.Conflict, `as "taken": a run with that id exists`)
		_, err = h.e.Fork(h.ctx, "o", "ship", ForkOptions{Set: `{oops`})
		wantErrContains(t, err, task.InvalidInput, `the --set result of step "ship" is not valid JSON`)
		if runs, err := h.e.ListRuns(h.ctx, ListFilter{}); err != nil || len(runs) != 2 {
			t.Errorf("after refused forks: %d runs, %v; want 2", len(runs), err)
		}
	})
}

// signalled awaits s1 and s2 around counted steps a, b, c.
func signalled(n *counter) Def[string, string] {
	return Register("signalled", str, str, func(c *Ctx, in string) task.Task[string] {
		a := Step(c, str, "a", n.effect("a", "A"))
		return task.AndThen(a, func(string) task.Task[string] {
			return task.AndThen(AwaitSignal(c, str, "s1"), func(s1 string) task.Task[string] {
				return task.AndThen(Step(c, str, "b", n.effect("b", "B")), func(string) task.Task[string] {
					return task.AndThen(AwaitSignal(c, str, "s2"), func(s2 string) task.Task[string] {
						return task.Map(Step(c, str, "c", n.effect("c", "C")), func(string) string { return s1 + s2 })
					})
				})
			})
		})
	})
}

// TestRewindInPlace rewinds a done run: the journal from the step on is
// gone, the signals consumed after it are unconsumed again in their order,
// and the run runs the rest again; a waiting run is refused.
func TestRewindInPlace(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		n := newCounter()
		def := signalled(n)
		h.start(def, "r", "x")
		h.signal("r", "s1", `"one"`)
		h.signal("r", "s2", `"two"`)
		h.drain(h.e, def.Erase())
		h.wantStatus("r", StatusDone)
		h.start(def, "w", "x")
		h.drain(h.e, def.Erase())
		err := h.e.Rewind(h.ctx, "w", "a")
		wantErrContains(t, err, task.Conflict, `cannot rewind run "w": it is waiting`)
		if !errors.Is(err, ErrRefused) {
			t.Errorf("refusal %v does not wrap ErrRefused", err)
		}
		wantErrContains(t, h.e.Rewind(h.ctx, "r", "zz"), task.InvalidInput, `has no step "zz"`, "a, signal:s1, b, signal:s2, c")

		if err := h.e.Rewind(h.ctx, "r", "b"); err != nil {
			t.Fatal(err)
		}
		r, j := h.describe("r")
		if r.Status != StatusWaiting || r.Output != "" || !cmp.Equal(stepIDs(j), []string{"a", "signal:s1"}) {
			t.Errorf("rewound to b: %s, output %q, journal %v", r.Status, r.Output, stepIDs(j))
		}
		box, _ := h.e.Signals(h.ctx, "r")
		if len(box) != 2 || !box[0].Delivered || box[1].Delivered || box[1].Name != "s2" {
			t.Errorf("mailbox after a rewind to b: %+v; want s1 consumed, s2 not", box)
		}
		h.drain(h.e, def.Erase())
		h.wantStatus("r", StatusDone)

		if err := h.e.Rewind(h.ctx, "r", "signal:s1"); err != nil {
			t.Fatal(err)
		}
		box, _ = h.e.Signals(h.ctx, "r")
		if len(box) != 2 || box[0].Name != "s1" || box[1].Name != "s2" || box[0].Delivered || box[1].Delivered {
			t.Errorf("mailbox after a rewind to signal:s1: %+v; want s1, s2 unconsumed in that order", box)
		}
		h.drain(h.e, def.Erase())
		if r := h.wantStatus("r", StatusDone); r.Output != `"onetwo"` {
			t.Errorf("output after rewinds %s", r.Output)
		}
		if got := [3]int{n.get("a"), n.get("b"), n.get("c")}; got != [3]int{2, 3, 3} {
			t.Errorf("a, b, c ran %v times; want [2 3 3] (a once per run, never again after a rewind; b and c once more after each)", got)
		}
	})
}

// TestRewindRefusesAnUnfinishedChildAfterTheCut: a run that started a child
// it did not await cannot be rewound before the start while the child runs.
func TestRewindRefusesAnUnfinishedChildAfterTheCut(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		h := newHarness(t, d)
		n := newCounter()
		child := signalled(n)
		parent := Register("parent", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "first", n.effect("first", "1")), func(string) task.Task[string] {
				return task.Map(StartChild(c, child, "k", in), func(struct{}) string { return "started" })
			})
		})
		h.start(parent, "p", "x")
		h.drain(h.e, parent.Erase(), child.Erase())
		h.wantStatus("p", StatusDone)
		wantErrContains(t, h.e.Rewind(h.ctx, "p", "first"), task.Conflict, `its child "p/k", started after the cut, has not finished`)
		if err := h.e.Cancel(h.ctx, "p/k"); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Rewind(h.ctx, "p", "first"); err != nil {
			t.Errorf("rewind once the child is cancelled: %v", err)
		}
	})
}
