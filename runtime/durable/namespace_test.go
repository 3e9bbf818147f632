package durable

// Namespaces (namespace.go) on SQLite and PostgreSQL: two namespaces doing
// everything at once on one database, with the same run ids, workflow
// names, signal names, schedule ids and limit keys, each end exactly as it
// would alone.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// nsWorkflows are the isolation test's workflows, counting their effects in
// cnt: flow (step a, event progress, signal go, child k of kid; one run at a
// time per limit key, every run's key "k") and tick (a schedule's).
func nsWorkflows(cnt *counter) []Workflow {
	kid := Register("kid", str, str, func(c *Ctx, in string) task.Task[string] {
		return Step(c, str, "b", cnt.effect("kid", "kid("+in+")"))
	})
	flow := Register("flow", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Step(c, str, "a", cnt.effect("a", in+"!")), func(a string) task.Task[string] {
			return task.AndThen(SetEvent(c, str, "progress", a), func(struct{}) task.Task[string] {
				return task.AndThen(AwaitSignal(c, str, "go"), func(p string) task.Task[string] {
					return task.AndThen(StartChild(c, kid, "k", a+p), func(struct{}) task.Task[string] {
						return AwaitChild(c, kid, "k")
					})
				})
			})
		})
	}).WithLimits(Limits{PerKey: 1}, func(string) (string, error) { return "k", nil })
	tick := Register("tick", str, str, func(c *Ctx, in string) task.Task[string] {
		return Step(c, str, "t", cnt.effect("tick", "tick:"+in))
	})
	return []Workflow{flow.Erase(), kid.Erase(), tick.Erase()}
}

// nsTenant is one namespace's engine, effects and log of what its
// operations answered.
type nsTenant struct {
	e    *Engine
	tag  string // in every input and payload it sends: "A#" or "B#"
	cnt  *counter
	defs []Workflow
	log  []string
}

// nsOp is one step of the script: every tenant applies it.
type nsOp struct {
	kind string
	id   string
	n    int
}

// nsScript is the seeded script both namespaces follow.
func nsScript(r *rand.Rand, steps int) []nsOp {
	kinds := []string{"start", "start", "signal", "signal", "poll", "poll", "poll1", "poll1", "cancel", "compact", "compact-all", "fork", "rewind", "schedule", "unschedule", "bulk", "rekey"}
	ops := make([]nsOp, steps)
	for i := range ops {
		ops[i] = nsOp{kind: kinds[r.IntN(len(kinds))], id: "r" + strconv.Itoa(r.IntN(4)), n: i}
	}
	return ops
}

// apply runs op on the tenant and logs its answer.
func (tn *nsTenant) apply(ctx context.Context, op nsOp) error {
	e, in := tn.e, strconv.Quote(tn.tag+strconv.Itoa(op.n))
	var got any
	var err error
	switch op.kind {
	case "start":
		err = e.StartJSON(ctx, tn.defs[0], op.id, in)
	case "signal":
		err = e.Signal(ctx, op.id, "go", in)
	case "poll":
		// The workflows without limits alone first (a plain claim), then
		// all of them (a claim with limits), until nothing is due. How
		// many rounds that takes is not logged: among runs due at the same
		// time, which a claim takes first is the database's choice.
		for n := 0; n < 50; n++ {
			plain, perr := e.Poll(ctx, tn.defs[1:])
			if perr != nil {
				return fmt.Errorf("poll: %w", perr)
			}
			limited, perr := e.Poll(ctx, tn.defs)
			if perr != nil {
				return fmt.Errorf("poll: %w", perr)
			}
			if !plain && !limited {
				break
			}
		}
	case "poll1":
		// One flow run advanced, the other due runs left for the other
		// namespaces' polls to leave alone. Only flow's: a claim takes
		// the run due longest, and two runs of a namespace are due at
		// the same time only when one poll made them so (a child and a
		// tick), which a whole poll then drains.
		got, err = e.Poll(ctx, tn.defs[:1])
	case "cancel":
		err = e.Cancel(ctx, op.id)
	case "compact":
		got, err = e.Compact(ctx, op.id)
	case "compact-all":
		var res CompactResult
		res, err = e.CompactOlderThan(ctx, 0, CompactOptions{})
		got = res.Runs
	case "fork":
		got, err = e.Fork(ctx, op.id, "a", ForkOptions{NewID: "f" + strconv.Itoa(op.n)})
	case "rewind":
		err = e.Rewind(ctx, op.id, "a")
	case "schedule":
		err = e.ScheduleJSON(ctx, tn.defs[2], "s", "@every 1m", in, ScheduleOptions{})
	case "unschedule":
		got, err = e.Unschedule(ctx, "s")
	case "rekey":
		var p RekeyProgress
		p, err = e.Rekey(ctx, RekeyOptions{BatchSize: 2})
		got = fmt.Sprintf("runs %d values %d resealed %d unreadable %d", p.Runs, p.Values, p.Resealed, p.Unreadable)
	case "bulk":
		var res BulkResult
		res, err = e.Bulk(ctx, BulkCancel, BulkFilter{Statuses: []Status{StatusWaiting}}, BulkOptions{})
		got = res.Changed
	}
	tn.log = append(tn.log, fmt.Sprintf("%d %s %s: %v %v", op.n, op.kind, op.id, got, err))
	return nil
}

// view is everything the tenant can see of its namespace, times left out.
func (tn *nsTenant) view(t *testing.T, ctx context.Context) string {
	t.Helper()
	var b strings.Builder
	runs, err := tn.e.ListRuns(ctx, ListFilter{Limit: 1000})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, r := range runs {
		fmt.Fprintf(&b, "run %s %s v%d %s in=%s out=%s attempts=%d wait=%q err=%q parent=%q fork=%q/%q key=%q queued=%v compacted=%v\n",
			r.ID, r.Workflow, r.Version, r.Status, r.Input, r.Output, r.Attempts, r.WaitingSignal, r.LastError,
			r.ParentID, r.ForkedFrom, r.ForkStep, r.LimitKey, r.KeyQueued, !r.CompactedAt.IsZero())
		_, journal, err := tn.e.Describe(ctx, r.ID)
		if err != nil {
			t.Fatalf("describe %s: %v", r.ID, err)
		}
		for _, j := range journal {
			fmt.Fprintf(&b, "  journal %d %s %s %s\n", j.Seq, j.StepID, j.Kind, j.Result)
		}
		sigs, err := tn.e.Signals(ctx, r.ID)
		if err != nil {
			t.Fatalf("signals %s: %v", r.ID, err)
		}
		for _, s := range sigs {
			fmt.Fprintf(&b, "  signal %s %s %v\n", s.Name, s.Payload, s.Delivered)
		}
		ev, err := GetEvent(ctx, tn.e, r.ID, "progress", str)
		if err != nil {
			t.Fatalf("event %s: %v", r.ID, err)
		}
		if ev != nil {
			fmt.Fprintf(&b, "  event progress %s\n", *ev)
		}
		hist, err := tn.e.History(ctx, r.ID)
		if err != nil {
			t.Fatalf("history %s: %v", r.ID, err)
		}
		for _, h := range hist {
			fmt.Fprintf(&b, "  history %d %s %s %q %s\n", h.Pos, h.Kind, h.Actor, h.Detail, h.Step)
		}
	}
	scheds, err := tn.e.Schedules(ctx)
	if err != nil {
		t.Fatalf("schedules: %v", err)
	}
	for _, s := range scheds {
		fmt.Fprintf(&b, "schedule %s %s %s %s last=%s next=%v\n", s.ID, s.Workflow, s.Cron, s.Input, s.LastRunID, s.NextAt.Unix())
	}
	st, err := tn.e.Stats(ctx)
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	fmt.Fprintf(&b, "stats %v held=%d stuck=%d oldest=%v\n", st.Counts, st.Held, st.StuckCount, st.OldestDue)
	orphans, err := tn.e.OrphanSignals(ctx, 100)
	if err != nil {
		t.Fatalf("orphans: %v", err)
	}
	for _, o := range orphans {
		fmt.Fprintf(&b, "orphan %s %s %d\n", o.RunID, o.Name, o.Bytes)
	}
	for _, name := range []string{"a", "kid", "tick"} {
		fmt.Fprintf(&b, "effects %s %d\n", name, tn.cnt.get(name))
	}
	b.WriteString(strings.Join(tn.log, "\n"))
	// The other tenant's tag must never appear: normalize its own.
	return strings.ReplaceAll(b.String(), tn.tag, "#")
}

// nsWorld is one database, a virtual clock and the tenants on it.
type nsWorld struct {
	clock   *virtualClock
	tenants []*nsTenant
}

func newNSWorld(t *testing.T, d *db.DB, namespaces, tags []string) *nsWorld {
	w := &nsWorld{clock: newVirtualClock()}
	for i, ns := range namespaces {
		cnt := newCounter()
		// Each namespace seals with a key of its own: a payload read
		// across namespaces would not open.
		key := sha256.Sum256([]byte(tags[i]))
		e := New(d, Options{Clock: w.clock.Now, Namespace: ns, WorkerID: "w-" + tags[i], Heartbeat: -1,
			Rand: rand.New(rand.NewPCG(7, 7)), Keys: "k1:" + base64.StdEncoding.EncodeToString(key[:])})
		if err := e.Setup(context.Background()); err != nil {
			t.Fatalf("setup: %v", err)
		}
		w.tenants = append(w.tenants, &nsTenant{e: e, tag: tags[i], cnt: cnt, defs: nsWorkflows(cnt)})
	}
	return w
}

// play runs the tenants' scripts (one each, as long): at each step every
// tenant applies its op at once, then the clock moves a minute on.
func (w *nsWorld) play(t *testing.T, ctx context.Context, scripts ...[]nsOp) {
	for k := range scripts[0] {
		var wg sync.WaitGroup
		errs := make([]error, len(w.tenants))
		for i, tn := range w.tenants {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = tn.apply(ctx, scripts[i][k])
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("step %d: %v", k, err)
		}
		w.clock.Advance(time.Minute + time.Second)
	}
}

// nsSeed is SKY_TEST_SEED when set, else a fresh seed.
func nsSeed(t *testing.T) uint64 {
	if s := os.Getenv("SKY_TEST_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("SKY_TEST_SEED=%q: %v", s, err)
		}
		return n
	}
	return rand.Uint64()
}

// TestNamespacesAreIsolated: namespaces default, a and b.2 each follow a
// seeded script at once on one database (the same run ids, workflow names,
// signal names, schedule id and limit key: start, signal, poll, poll once,
// cancel, compact, compact all, fork, rewind, schedule, bulk cancel, rekey),
// each sealing its payloads with a key of its own; each one's runs,
// journals, mailboxes, events, histories, schedules, stats, orphan signals,
// effects and answers equal those of the same namespace playing its script
// alone on its own database.
func TestNamespacesAreIsolated(t *testing.T) {
	seed := nsSeed(t)
	t.Logf("seed %d (SKY_TEST_SEED=%d repeats it)", seed, seed)
	namespaces, tags := []string{DefaultNamespace, "a", "b.2"}, []string{"A#", "B#", "C#"}
	var scripts [][]nsOp
	for i := range namespaces {
		scripts = append(scripts, nsScript(rand.New(rand.NewPCG(seed, uint64(i))), 60))
	}
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		ctx := context.Background()
		shared := newNSWorld(t, d, namespaces, tags)
		shared.play(t, ctx, scripts...)
		for i, tn := range shared.tenants {
			alone := newNSWorld(t, dbtest.Open(t, driver), namespaces[i:i+1], tags[i:i+1])
			alone.play(t, ctx, scripts[i])
			if diff := cmp.Diff(alone.tenants[0].view(t, ctx), tn.view(t, ctx)); diff != "" {
				t.Errorf("namespace %s (-alone +shared):\n%s", tn.e.Namespace(), diff)
			}
		}
		got, err := shared.tenants[0].e.Namespaces(ctx)
		if want := []string{"a", "b.2", DefaultNamespace}; err != nil || !slices.Equal(got, want) {
			t.Errorf("Namespaces = %q, %v; want %q", got, err, want)
		}
	})
}

// TestNamespaceIdsDoNotCross: a run id of namespace b is no run to the
// default namespace, even written with the separator, and the default
// namespace's runs are none of b's; both are refused alike. b's log lines
// name it.
func TestNamespaceIdsDoNotCross(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		b := h.engine("B", func(o *Options) { o.Namespace = "b" })
		w := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		if err := Start(h.ctx, b, w, "r", "x"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"r", "b" + store.NamespaceSep + "r"} {
			if _, _, err := h.e.Describe(h.ctx, id); task.As(err) == nil || task.As(err).Kind != task.NotFound {
				t.Errorf("default namespace: Describe(%q) = %v, want not found", id, err)
			}
			if err := h.e.Cancel(h.ctx, id); err == nil {
				t.Errorf("default namespace: Cancel(%q) succeeded", id)
			}
		}
		if h.poll(h.e, w.Erase()) {
			t.Error("the default namespace's worker claimed namespace b's run")
		}
		if !h.poll(b, w.Erase()) {
			t.Error("namespace b's worker did not claim its run")
		}
		wantContains(t, h.logText(), "namespace=b") // its log lines say whose run
		if err := Start(h.ctx, h.e, w, "r", "y"); err != nil {
			t.Fatalf("the same run id in the default namespace: %v", err)
		}
		if r, _, err := b.Describe(h.ctx, "r"); err != nil || r.Status != StatusDone || r.Output != `"x"` {
			t.Errorf("namespace b's run r = %+v, %v", r, err)
		}
	})
}

// TestBadNamespaceRefused: a namespace name that is not a short lower-case
// label is refused by Setup, Start and Poll alike, naming it, on both stores.
func TestBadNamespaceRefused(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		for _, bad := range []string{"Billing", "-x", "a b", "a\x1fb", strings.Repeat("a", 64), "ü"} {
			e := New(d, Options{Namespace: bad})
			wantErrContains(t, e.Setup(context.Background()), task.InvalidInput, "namespace", strconv.Quote(bad), "hint:")
			w := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
			wantErrContains(t, Start(context.Background(), e, w, "r", "x"), task.InvalidInput, strconv.Quote(bad))
			_, err := e.Poll(context.Background(), []Workflow{w.Erase()})
			wantErrContains(t, err, task.InvalidInput, strconv.Quote(bad))
		}
		for _, good := range []string{"", "default", "billing", "tenant-42", "a.b_c", strings.Repeat("a", 63)} {
			if err := CheckNamespace(good); err != nil {
				t.Errorf("CheckNamespace(%q) = %v", good, err)
			}
		}
	})
}

// TestNamespaceClaimsOnlyItsOwn: on every claim path (pinned to versions,
// FailSafe by name, with limits, chained completions) a worker of namespace
// b advances b's due runs only, never the default namespace's of the same
// workflow and ids, and the other way round.
func TestNamespaceClaimsOnlyItsOwn(t *testing.T) {
	plain := func(cnt *counter) Workflow {
		return Register("w", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", cnt.effect("s", in))
		}).Erase()
	}
	limited := func(cnt *counter) Workflow {
		return Register("w", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", cnt.effect("s", in))
		}).WithLimits(Limits{Concurrency: 5}, nil).Erase()
	}
	for _, c := range []struct {
		name string
		def  func(*counter) Workflow
		opts PollOptions
	}{
		{"pinned", plain, PollOptions{}},
		{"failsafe", plain, PollOptions{Versions: FailSafe}},
		{"limited", limited, PollOptions{}},
		{"chained", plain, PollOptions{MaxRuns: 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
				h := newHarness(t, d)
				b := h.engine("B", func(o *Options) { o.Namespace = "b" })
				cntDefault, cntB := newCounter(), newCounter()
				defDefault, defB := c.def(cntDefault), c.def(cntB)
				for _, id := range []string{"r1", "r2", "r3"} {
					for _, e := range []*Engine{h.e, b} {
						if err := e.StartJSON(h.ctx, defDefault, id, `"x"`); err != nil {
							t.Fatal(err)
						}
					}
				}
				for worked := true; worked; {
					var err error
					if worked, err = b.PollWith(h.ctx, []Workflow{defB}, c.opts); err != nil {
						t.Fatal(err)
					}
				}
				if n := cntB.get("s"); n != 3 || cntDefault.get("s") != 0 {
					t.Fatalf("b's worker ran %d steps, the default one's %d; want 3 and 0", n, cntDefault.get("s"))
				}
				for _, id := range []string{"r1", "r2", "r3"} {
					if r, _, err := h.e.Describe(h.ctx, id); err != nil || r.Status != StatusWaiting || r.Attempts != 0 {
						t.Errorf("the default namespace's %s = %s (attempts %d), %v; want waiting, never claimed", id, r.Status, r.Attempts, err)
					}
				}
				for worked := true; worked; {
					var err error
					if worked, err = h.e.PollWith(h.ctx, []Workflow{defDefault}, c.opts); err != nil {
						t.Fatal(err)
					}
				}
				if cntDefault.get("s") != 3 || cntB.get("s") != 3 {
					t.Errorf("steps run: default %d, b %d; want 3 each", cntDefault.get("s"), cntB.get("s"))
				}
			})
		})
	}
}
