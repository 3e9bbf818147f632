package durable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// boundaryLease is the lease of the engines of the boundary tests; after an
// injected crash the clock moves past it so a fresh engine reclaims the run.
const boundaryLease = time.Minute

// boundaryWorkflow has one of each kind of journal entry: a plain step
// counted by fx, a transaction inserting a ledger row, a sleep and a signal.
func boundaryWorkflow(fx *counter) Def[string, string] {
	return Register("bounds", str, str, func(c *Ctx, in string) task.Task[string] {
		plain := Step(c, str, "plain", fx.effect("plain", "p"))
		return task.AndThen(plain, func(p string) task.Task[string] {
			tx := Transaction(c, str, "ledger", func(ctx context.Context, tx *db.DB) (string, error) {
				_, err := tx.Exec(ctx, `INSERT INTO ledger (id, amount) VALUES (?, ?)`, in, 1)
				return "l", err
			})
			return task.AndThen(tx, func(l string) task.Task[string] {
				return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
					return task.AndThen(AwaitSignal(c, str, "go"), func(g string) task.Task[string] {
						return task.Succeed(p + l + g)
					})
				})
			})
		})
	})
}

// pointText is a Point in one line, for comparisons.
func pointText(p Point) string {
	return fmt.Sprintf("%d %s %s %s tx=%t", p.Seq, p.Kind, p.StepID, p.Boundary, p.Transactional)
}

// driveBoundaries runs runID of def to the end on h with engine e: drain,
// signal, move past the sleep, drain.
func driveBoundaries(h *harness, e func() *Engine, def Def[string, string], runID string) {
	h.t.Helper()
	h.start(def, runID, runID)
	h.drain(e(), def.Erase())
	h.signal(runID, "go", `"g"`)
	h.clock.Advance(2 * time.Second)
	h.drain(e(), def.Erase())
}

func TestOnBoundaryIsCalledAtEveryJournalBoundary(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		var got []string
		e := h.engine("B", func(o *Options) {
			o.OnBoundary = func(p Point) error {
				if p.RunID != "r1" || p.Workflow != "bounds" {
					t.Errorf("point of run %q workflow %q, want r1 of bounds", p.RunID, p.Workflow)
				}
				got = append(got, pointText(p))
				return nil
			}
		})
		driveBoundaries(h, func() *Engine { return e }, boundaryWorkflow(newCounter()), "r1")
		h.wantStatus("r1", StatusDone)
		want := []string{
			"1 step plain before the effect tx=false",
			"1 step plain after the effect, before its journal commit tx=false",
			// The plain step's row is written when the next operation starts.
			"1 step plain after the commit tx=false",
			"2 step ledger before the effect tx=true",
			"2 step ledger after the effect, before its journal commit tx=true",
			"2 step ledger after the commit tx=true",
			"3 sleep sleep:1 after the effect, before its journal commit tx=false",
			"3 sleep sleep:1 after the commit tx=false",
			"4 signal signal:go after the effect, before its journal commit tx=false",
			"4 signal signal:go after the commit tx=false",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("boundaries (-want +got):\n%s", diff)
		}
	})
}

// TestCrashAtEachBoundary stops the worker at each boundary in turn and
// resumes the run with a fresh engine once the lease ran out: every run ends
// done with the crash-free output and journal, the transaction's row exists
// once, and only a crash between the plain step's effect and its commit runs
// that step twice.
func TestCrashAtEachBoundary(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		if _, err := d.ExecRaw(h.ctx, ledgerTable); err != nil {
			t.Fatal(err)
		}
		var points []Point
		rec := h.engine("rec", func(o *Options) {
			o.OnBoundary = func(p Point) error { points = append(points, p); return nil }
		})
		driveBoundaries(h, func() *Engine { return rec }, boundaryWorkflow(newCounter()), "free")
		_, freeJournal := h.describe("free")
		if len(points) != 10 {
			t.Fatalf("recorded %d points, want 10", len(points))
		}
		errKill := errors.New("killed")
		for i, at := range points {
			runID := fmt.Sprintf("crash-%d", i)
			fx := newCounter()
			crashes := 0
			crashing := h.engine("crashing", func(o *Options) {
				o.Lease = boundaryLease
				o.OnBoundary = func(p Point) error {
					if p.StepID == at.StepID && p.Boundary == at.Boundary && crashes == 0 {
						crashes++
						return errKill
					}
					return nil
				}
			})
			def := boundaryWorkflow(fx)
			current := crashing
			resume := func() {
				if crashes > 0 && current == crashing {
					// The crashed worker is gone; a fresh one claims the
					// run once the lease has run out.
					h.clock.Advance(2 * boundaryLease)
					current = h.engine(fmt.Sprintf("fresh-%d", i), func(o *Options) { o.Lease = boundaryLease })
					h.drain(current, def.Erase())
				}
			}
			h.start(def, runID, runID)
			h.drain(current, def.Erase())
			resume()
			h.signal(runID, "go", `"g"`)
			h.clock.Advance(2 * time.Second)
			h.drain(current, def.Erase())
			resume()

			name := pointText(at)
			if crashes != 1 {
				t.Errorf("%s: crashed %d times, want 1", name, crashes)
			}
			r, j := h.describe(runID)
			if r.Status != StatusDone || r.Output != `"plg"` {
				t.Errorf("%s: run %s with output %s (last error %q), want done with \"plg\"", name, r.Status, r.Output, r.LastError)
			}
			if diff := cmp.Diff(stepIDs(freeJournal), stepIDs(j)); diff != "" {
				t.Errorf("%s: journal (-crash-free +crashed):\n%s", name, diff)
			}
			rows, err := d.QueryMaps(h.ctx, `SELECT id FROM ledger WHERE id = ?`, runID)
			if err != nil || len(rows) != 1 {
				t.Errorf("%s: ledger rows %v (%v), want exactly one", name, rows, err)
			}
			wantPlain := 1
			if at.StepID == "plain" && at.Boundary == BeforeCommit {
				wantPlain = 2
			}
			if n := fx.get("plain"); n != wantPlain {
				t.Errorf("%s: the plain step ran %d times, want %d", name, n, wantPlain)
			}
		}
		if !strings.Contains(h.logText(), "injected crash point") {
			t.Errorf("no log line for the injected crashes:\n%s", h.logText())
		}
	})
}

func TestCrashErrorIsRecognisable(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var seen error
		e := h.engine("B", func(o *Options) {
			o.OnBoundary = func(p Point) error {
				if p.Boundary == BeforeEffect {
					return errors.New("boom")
				}
				return nil
			}
		})
		fx := newCounter()
		def := Register("caught", str, str, func(c *Ctx, in string) task.Task[string] {
			// The body swallows the crash; the worker still stops.
			return task.OnError(Step(c, str, "a", fx.effect("a", "a")), func(err error) task.Task[string] {
				seen = err
				return Step(c, str, "b", fx.effect("b", "b"))
			})
		})
		h.start(def, "r", "r")
		h.drain(e, def.Erase())
		if !IsCrashed(seen) || !strings.Contains(seen.Error(), `before the effect of step "a"`) {
			t.Errorf("the body saw %v, want the crash error naming step a", seen)
		}
		if fx.get("a") != 0 || fx.get("b") != 0 {
			t.Errorf("effects ran after the crash: a=%d b=%d", fx.get("a"), fx.get("b"))
		}
		r, j := h.describe("r")
		if r.Status != StatusRunning || len(j) != 0 {
			t.Errorf("run %s with %d entries, want still running (claimed by the dead worker) with none", r.Status, len(j))
		}
	})
}
