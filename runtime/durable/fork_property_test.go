package durable

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// genOp is one durable operation of a generated workflow.
type genOp int

const (
	genStep   genOp = iota // a step whose result is a function of the values before it
	genRandom              // a StepValue drawn from crypto/rand: nondeterministic
	genSleep               // a sleep: its journal holds the wake time
	genSignal              // a signal wait (the signal is sent before the start)
	genEvent               // a setEvent of the values so far
	genOps
)

// genWorkflow registers a workflow that runs ops in order. Every step's
// result, the events and the output are functions of the values before them
// (the input, the random draws, the signals' payloads): only a random draw
// or a sleep (the wake time) can differ when the same code runs again.
func genWorkflow(name string, ops []genOp) Def[string, string] {
	return Register(name, str, str, func(c *Ctx, in string) task.Task[string] {
		var run func(i int, acc string) task.Task[string]
		run = func(i int, acc string) task.Task[string] {
			if i == len(ops) {
				return task.Succeed(digest(acc))
			}
			next := func(v string) task.Task[string] { return run(i+1, acc+"|"+v) }
			id := fmt.Sprint("op", i)
			switch ops[i] {
			case genStep:
				return task.AndThen(Step(c, str, id, task.Succeed(digest(acc))), next)
			case genRandom:
				return task.AndThen(StepValue(c, str, id, func() string {
					b := make([]byte, 8)
					_, _ = rand.Read(b)
					return hex.EncodeToString(b)
				}), next)
			case genSleep:
				return task.AndThen(SleepAs(c, id, 0), func(struct{}) task.Task[string] { return run(i+1, acc) })
			case genSignal:
				return task.AndThen(AwaitSignal(c, str, id), next)
			default:
				return task.AndThen(SetEvent(c, str, id, digest(acc)), func(struct{}) task.Task[string] { return run(i+1, acc) })
			}
		}
		return run(0, in)
	})
}

func digest(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return fmt.Sprintf("%016x", h.Sum64())
}

// TestForkAtEveryStepOfGeneratedWorkflows: for generated workflows of steps,
// random draws, sleeps, signal waits and events, a fork at every journal
// entry keeps every entry before the cut byte for byte (the random draws
// too), and the same code then ends identical to the original unless a
// random draw or a sleep lies at or after the cut: the diff is exactly
// that (same before the cut; a random draw changes itself and every value
// computed after it, steps' results and events' values; a sleep changes
// only its own wake time). SQLite and PostgreSQL.
func TestForkAtEveryStepOfGeneratedWorkflows(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		gen := mrand.New(mrand.NewPCG(42, 7))
		forks := 0
		for w := range 12 {
			ops := make([]genOp, 2+gen.IntN(5))
			for i := range ops {
				ops[i] = genOp(gen.IntN(int(genOps)))
			}
			def := genWorkflow(fmt.Sprint("gen-", w), ops)
			wf := def.Erase()
			id := fmt.Sprint("g", w)
			for i, op := range ops {
				if op == genSignal {
					h.signal(id, fmt.Sprint("op", i), fmt.Sprintf(`"payload %d"`, i))
				}
			}
			h.start(def, id, "in")
			h.drain(h.e, wf)
			orig, journal := h.describe(id)
			if orig.Status != StatusDone || len(journal) != len(ops) {
				t.Fatalf("%s %v: status %s, %d entries; want done with %d", id, ops, orig.Status, len(journal), len(ops))
			}
			for p := range journal {
				h.clock.Advance(time.Second) // the fork runs later: a sleep's wake time differs
				forkID := fmt.Sprintf("%s-at-%d", id, p)
				if _, err := h.e.Fork(h.ctx, id, journal[p].StepID, ForkOptions{NewID: forkID}); err != nil {
					t.Fatalf("fork %s at %s: %v", id, journal[p].StepID, err)
				}
				h.drain(h.e, wf)
				forks++
				diff, err := h.e.Diff(h.ctx, id, forkID)
				if err != nil {
					t.Fatal(err)
				}
				var got, want []string
				tainted := false // a random draw at or after the cut changed the values after it
				for i, en := range diff.Entries {
					got = append(got, string(en.Kind))
					kind := DiffSame
					if i >= p {
						switch ops[i] {
						case genRandom:
							kind, tainted = DiffChanged, true
						case genSleep:
							kind = DiffChanged
						case genStep:
							if tainted {
								kind = DiffChanged
							}
						case genEvent:
							// Its journal entry is the transaction's (no
							// value); the value is the event's.
							a, errA := GetEvent(h.ctx, h.e, id, fmt.Sprint("op", i), str)
							b, errB := GetEvent(h.ctx, h.e, forkID, fmt.Sprint("op", i), str)
							if errA != nil || errB != nil || a == nil || b == nil || (*a == *b) == tainted {
								t.Errorf("%s forked at %d: event op%d = %v / %v (%v, %v); want them equal unless a random draw came before it after the cut", id, p, i, a, b, errA, errB)
							}
						}
					}
					want = append(want, string(kind))
				}
				if strings.Join(got, " ") != strings.Join(want, " ") {
					t.Errorf("%s %v forked at %d: diff %v, want %v", id, ops, p, got, want)
				}
				if wantOut := map[bool]DiffKind{false: DiffSame, true: DiffChanged}[tainted]; diff.Output != wantOut {
					t.Errorf("%s %v forked at %d: output %s, want %s", id, ops, p, diff.Output, wantOut)
				}
				_, fj := h.describe(forkID)
				for i := range p {
					if fj[i] != journal[i] && (fj[i].StepID != journal[i].StepID || fj[i].Result != journal[i].Result || fj[i].Kind != journal[i].Kind || !fj[i].CreatedAt.Equal(journal[i].CreatedAt)) {
						t.Errorf("%s forked at %d: entry %d is %+v, want the original's %+v byte for byte", id, p, i, fj[i], journal[i])
					}
				}
			}
		}
		if forks < 30 {
			t.Fatalf("only %d forks tried", forks)
		}
	})
}
