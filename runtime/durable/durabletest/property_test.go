package durabletest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// The property of CrashEverywhere: no false positive and no miss. Generated
// correct workflows (plain, database and transactional steps, sleeps, signal
// waits with and without a timeout, children, events, in random order)
// driven by generated scripts (signals, clock moves and drains in random
// order) have no finding; the same workflows with one seeded bug always
// have one, naming the crash point, the step and what differs.

func TestMain(m *testing.M) { dbtest.Main(m) }

// propertySeed makes every generated case reproducible: a failure prints
// the seed and the case number, and the case's workflow and script.
const propertySeed = 20261204

// opKind is one durable operation of a generated workflow body.
type opKind int

const (
	opPlain     opKind = iota // a plain step without an effect
	opDBStep                  // a step inserting on the run's database
	opTx                      // Durable.transaction inserting
	opSleep                   // sleep
	opSignal                  // awaitSignal
	opSignalFor               // awaitSignalFor with a timeout
	opChild                   // startChild, awaited later
	opAwait                   // awaitChild of an earlier opChild
	opEvent                   // setEvent
	// The seeded bugs.
	bugBetweenSteps // an insert through a helper between steps
	bugExternal     // a plain step bumping an external counter
	bugStepID       // a step whose id differs on every body execution
	bugNoTx         // a step whose insert escapes the step's transaction
)

var opNames = map[opKind]string{
	opPlain: "plain", opDBStep: "dbstep", opTx: "tx", opSleep: "sleep", opSignal: "signal", opSignalFor: "signalFor",
	opChild: "child", opAwait: "await", opEvent: "event",
	bugBetweenSteps: "BUG:between", bugExternal: "BUG:external", bugStepID: "BUG:stepid", bugNoTx: "BUG:notx",
}

type op struct {
	kind opKind
	id   string // step id, signal name, child key or event key
	ms   int64  // sleep length or signal timeout
}

func (o op) String() string {
	if o.ms > 0 {
		return fmt.Sprintf("%s(%s,%dms)", opNames[o.kind], o.id, o.ms)
	}
	return fmt.Sprintf("%s(%s)", opNames[o.kind], o.id)
}

// action is one line of a generated script.
type action struct {
	kind   string // "signal", "advance", "drain"
	signal string
	d      time.Duration
}

func (a action) String() string {
	switch a.kind {
	case "signal":
		return "signal " + a.signal
	case "advance":
		return "advance " + a.d.String()
	}
	return a.kind
}

// genCase is one generated workflow and its script.
type genCase struct {
	ops    []op
	script []action
}

func (g genCase) String() string {
	return fmt.Sprintf("workflow %v; script %v", g.ops, g.script)
}

var durations = []time.Duration{0, time.Millisecond, 500 * time.Millisecond, time.Second, time.Minute, time.Hour, 24 * time.Hour}

// generate makes a correct workflow of 2 to 6 operations and its script.
func generate(r *rand.Rand) genCase {
	var g genCase
	var children []string
	n := 2 + r.IntN(4)
	var total time.Duration
	for i := range n {
		id := fmt.Sprintf("op%d", i)
		k := []opKind{opPlain, opDBStep, opTx, opSleep, opSignal, opSignalFor, opChild, opEvent}[r.IntN(8)]
		o := op{kind: k, id: id}
		switch k {
		case opSleep, opSignalFor:
			o.ms = durations[1+r.IntN(len(durations)-1)].Milliseconds()
			total += time.Duration(o.ms) * time.Millisecond
		case opChild:
			children = append(children, id)
		}
		g.ops = append(g.ops, o)
		// An awaited child may be awaited at once or later.
		if len(children) > 0 && r.IntN(2) == 0 {
			g.ops = append(g.ops, op{kind: opAwait, id: children[0]})
			children = children[1:]
		}
	}
	for _, c := range children {
		g.ops = append(g.ops, op{kind: opAwait, id: c})
	}
	// The script: every awaitSignal's signal, half of the awaitSignalFor
	// ones, clock moves and drains, in random order; then enough time for
	// every timer, and a drain.
	var acts []action
	for _, o := range g.ops {
		if o.kind == opSignal || (o.kind == opSignalFor && r.IntN(2) == 0) {
			acts = append(acts, action{kind: "signal", signal: o.id})
		}
	}
	for range r.IntN(4) {
		acts = append(acts, action{kind: "advance", d: durations[r.IntN(len(durations))]})
	}
	for range r.IntN(3) {
		acts = append(acts, action{kind: "drain"})
	}
	r.Shuffle(len(acts), func(i, j int) { acts[i], acts[j] = acts[j], acts[i] })
	g.script = append(acts, action{kind: "advance", d: total + time.Millisecond}, action{kind: "drain"})
	return g
}

// withBug inserts one seeded bug before a random operation, followed by a
// plain step so a boundary comes after it.
func withBug(r *rand.Rand, g genCase, bug opKind) genCase {
	at := r.IntN(len(g.ops))
	ops := append([]op{}, g.ops[:at]...)
	ops = append(ops, op{kind: bug, id: "bug"}, op{kind: opPlain, id: "after-bug"})
	g.ops = append(ops, g.ops[at:]...)
	return g
}

// childDef is the child workflow every generated parent starts.
var childDef = durable.Register("gen-child", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
	return task.AndThen(durable.Transaction(c, codec.String, "work", func(ctx context.Context, tx *db.DB) (string, error) {
		_, err := tx.Exec(ctx, `INSERT INTO effects (run_id, op) VALUES (?, ?)`, c.RunID(), "child")
		return in + "!", err
	}), func(s string) task.Task[string] {
		return durable.Step(c, codec.String, "done", task.Succeed(s+"."))
	})
})

// counters are the effects outside the harness's database, by case.
type counters struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counters) bump(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[key]++
	return c.n[key]
}

// workflow builds g's body, named name.
func (g genCase) workflow(name string, ext *counters) durable.Workflow {
	insert := func(ctx context.Context, q *db.DB, c *durable.Ctx, what string) error {
		_, err := q.Exec(ctx, `INSERT INTO effects (run_id, op) VALUES (?, ?)`, c.RunID(), what)
		return err
	}
	return durable.Register(name, codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		acc := task.Succeed(in)
		for _, o := range g.ops {
			next := func(out string) task.Task[string] {
				add := func(s string) string { return out + "|" + s }
				switch o.kind {
				case opPlain:
					return durable.Step(c, codec.String, o.id, task.Succeed(add(o.id)))
				case opDBStep:
					return durable.Step(c, codec.String, o.id, task.From(func(ctx context.Context) (string, error) {
						return add(o.id), insert(ctx, c.DB(), c, o.id)
					}))
				case opTx:
					return durable.Transaction(c, codec.String, o.id, func(ctx context.Context, tx *db.DB) (string, error) {
						return add(o.id), insert(ctx, tx, c, o.id)
					})
				case opSleep:
					return task.Map(durable.Sleep(c, o.ms), func(struct{}) string { return add("slept") })
				case opSignal:
					return task.Map(durable.AwaitSignal(c, codec.String, o.id), add)
				case opSignalFor:
					return task.Map(durable.AwaitSignalFor(c, codec.String, o.id, o.ms), func(p *string) string {
						if p == nil {
							return add("timeout:" + o.id)
						}
						return add(*p)
					})
				case opChild:
					return task.Map(durable.StartChild(c, childDef, o.id, o.id), func(struct{}) string { return out })
				case opAwait:
					return task.Map(durable.AwaitChild(c, childDef, o.id), add)
				case opEvent:
					return task.Map(durable.SetEvent(c, codec.String, o.id, out), func(struct{}) string { return out })
				case bugBetweenSteps:
					return task.From(func(ctx context.Context) (string, error) {
						return out, insert(ctx, c.DB(), c, "between") // not a step: every replay inserts again
					})
				case bugExternal:
					return durable.Step(c, codec.String, o.id, task.From(func(context.Context) (string, error) {
						ext.bump(name)
						return out, nil
					}))
				case bugStepID:
					id := fmt.Sprintf("quote-%d", ext.bump(name+"/ids"))
					return durable.Step(c, codec.String, id, task.Succeed(out))
				case bugNoTx:
					return durable.Step(c, codec.String, o.id, task.From(func(ctx context.Context) (string, error) {
						return out, insert(context.WithoutCancel(context.Background()), c.DB(), c, "notx")
					}))
				}
				panic("unknown op")
			}
			acc = task.AndThen(acc, next)
		}
		return acc
	}).Erase()
}

// run is g's script over a Harness for run runID of w.
func (g genCase) run(w durable.Workflow, runID string) Script {
	return func(ctx context.Context, h *Harness) error {
		if _, err := h.DB().ExecRaw(ctx, `CREATE TABLE effects (run_id TEXT NOT NULL, op TEXT NOT NULL)`); err != nil {
			return err
		}
		if err := h.Start(ctx, w, runID, `"in"`); err != nil {
			return err
		}
		for _, a := range g.script {
			var err error
			switch a.kind {
			case "signal":
				err = h.Signal(ctx, runID, a.signal, `"sig-`+a.signal+`"`)
			case "advance":
				err = h.Advance(ctx, a.d)
			case "drain":
				err = h.Drain(ctx)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
}

// postgresOpener gives every Harness one database of its own (commits
// without waiting for the disk: these runs need not survive a server
// crash), emptied: the workflows' tables dropped and the engine's rows
// deleted (so Setup has nothing to migrate).
func postgresOpener(t *testing.T) Opener {
	dsn, sep := dbtest.URL(t, "postgres"), "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	d, err := db.Open(context.Background(), "postgres", dsn+sep+"synchronous_commit=off")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return func(ctx context.Context) (*db.DB, func() error, error) {
		rows, err := d.QueryMaps(ctx, `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range rows {
			name := r["name"]
			stmt := `DROP TABLE "` + name + `"`
			switch {
			case name == store.VersionTable:
				continue
			case strings.HasPrefix(name, "_sky_"):
				stmt = `DELETE FROM "` + name + `"`
			}
			if _, err := d.ExecRaw(ctx, stmt); err != nil {
				return nil, nil, err
			}
		}
		return d, func() error { return nil }, nil
	}
}

type propertyStore struct {
	name string
	open func(t *testing.T) Opener
	// cases is how many generated workflows it runs, lanes how many at once
	// (each lane on its own database).
	cases, lanes int
}

// propertyStores: SQLite runs all 200 generated workflows; PostgreSQL,
// where every statement is a round trip, the first 20 of the same ones.
// TestCrashEverywhereHasNoFalsePositive runs -property-cases of them (the
// same share on PostgreSQL).
var propertyStores = []propertyStore{
	{"sqlite", func(*testing.T) Opener { return SQLiteCopies() }, 200, 2},
	{"postgres", postgresOpener, 20, 4},
}

// propertyCases is how many of the 200 generated correct workflows
// TestCrashEverywhereHasNoFalsePositive crashes everywhere on SQLite. make
// test runs the first 100 (1,119 crash points at propertySeed); all 200:
//
//	go test ./runtime/durable/durabletest -run NoFalsePositive -args -property-cases 200
var propertyCases = flag.Int("property-cases", 100, "how many of the 200 generated workflows TestCrashEverywhereHasNoFalsePositive runs on SQLite (a tenth of them on PostgreSQL)")

// crashCase is one generated workflow to crash everywhere.
type crashCase struct {
	label string // "seed S case N" and the seeded bug, for failures
	g     genCase
	bug   opKind // 0: none
}

// crashAll runs CrashEverywhereWith on every case, lanes at a time, and
// hands each report to check (from several goroutines).
func crashAll(t *testing.T, st propertyStore, cases []crashCase, check func(c crashCase, rep CrashReport)) {
	t.Helper()
	next := make(chan int)
	var wg sync.WaitGroup
	for range st.lanes {
		open := st.open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				w := c.g.workflow(fmt.Sprintf("gen-%d", i), &counters{n: map[string]int{}})
				rep, err := CrashEverywhereWith(context.Background(), open, []durable.Workflow{w, childDef.Erase()}, "run", c.g.run(w, "run"))
				if err != nil {
					t.Errorf("%s (%s): %v", c.label, c.g, err)
					continue
				}
				check(c, rep)
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
}

func TestCrashEverywhereHasNoFalsePositive(t *testing.T) {
	r := rand.New(rand.NewPCG(propertySeed, 1))
	cases := make([]crashCase, 200)
	for i := range cases {
		cases[i] = crashCase{label: fmt.Sprintf("seed %d case %d", propertySeed, i), g: generate(r)}
	}
	if *propertyCases < 1 || *propertyCases > len(cases) {
		t.Fatalf("-property-cases %d: want 1 to %d", *propertyCases, len(cases))
	}
	for _, st := range propertyStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel() // SQLite computes while PostgreSQL waits on round trips
			var mu sync.Mutex
			points, plainFree := 0, 0
			n := max(1, st.cases**propertyCases/len(cases))
			crashAll(t, st, cases[:n], func(c crashCase, rep CrashReport) {
				mu.Lock()
				points += len(rep.Points)
				mu.Unlock()
				if rep.Status != durable.StatusDone {
					t.Errorf("%s (%s): the crash-free run ended %s (%s), want done", c.label, c.g, rep.Status, rep.Output)
				}
				for _, f := range rep.Failures() {
					t.Errorf("%s (%s): false positive: %s", c.label, c.g, f)
				}
				if c.g.has(opPlain) {
					return
				}
				mu.Lock()
				plainFree++
				mu.Unlock()
				for _, p := range rep.Points {
					if len(p.RanTwice) > 0 {
						t.Errorf("%s (%s): %s: ranTwice %v in a workflow without a plain step", c.label, c.g, p.Name(), p.RanTwice)
					}
				}
			})
			t.Logf("seed %d: %d workflows, %d crash points, %d workflows without a plain step: 0 findings expected", propertySeed, n, points, plainFree)
		})
	}
}

func (g genCase) has(k opKind) bool {
	for _, o := range g.ops {
		if o.kind == k {
			return true
		}
	}
	return false
}

func TestCrashEverywhereFindsEverySeededBug(t *testing.T) {
	bugs := []opKind{bugBetweenSteps, bugExternal, bugStepID, bugNoTx}
	r := rand.New(rand.NewPCG(propertySeed, 2))
	const perBug = 10
	var cases []crashCase
	for i := range perBug {
		for _, bug := range bugs {
			cases = append(cases, crashCase{label: fmt.Sprintf("seed %d bug case %d %s", propertySeed, i, opNames[bug]), g: withBug(r, generate(r), bug), bug: bug})
		}
	}
	for _, st := range propertyStores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel() // SQLite computes while PostgreSQL waits on round trips
			n := len(cases) * st.cases / 200
			crashAll(t, st, cases[:n], func(c crashCase, rep CrashReport) {
				found := rep.Findings()
				if c.bug == bugExternal {
					// Checked with expectRanOnce: a plain step ran again.
					for _, p := range rep.Points {
						if len(p.RanTwice) > 0 {
							found = append(found, Finding{Point: p.Name(), StepID: p.StepID, Boundary: p.Boundary, Differs: "ran twice: " + strings.Join(p.RanTwice, ",")})
						}
					}
				}
				if len(found) == 0 {
					t.Errorf("%s (%s): missed: no finding", c.label, c.g)
				}
				for _, f := range found {
					if f.Point == "" || f.StepID == "" || f.Differs == "" {
						t.Errorf("%s: a finding without its point, step or what differs: %+v", c.label, f)
					}
				}
			})
			t.Logf("%d seeded bugs (%d kinds, in turn): all found", n, len(bugs))
		})
	}
}
