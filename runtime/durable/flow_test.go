package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/view"
	"skydurable/runtime/task"
)

// span is what a flow test's step journals: when the step ran (local
// time, which all workers of a test share) and when its run was claimed
// (the engine's clock).
type span struct {
	Key     string    `json:"key"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Claimed time.Time `json:"claimed"`
}

// spanCodec journals a span as a JSON text in a string.
var spanCodec = codec.Map(func(js string) span {
	var s span
	_ = json.Unmarshal([]byte(js), &s)
	return s
}, func(s span) string {
	b, _ := json.Marshal(s)
	return string(b)
}, str)

// spanned is a workflow whose one step journals its span, taking work
// (real work, not synchronisation: it keeps runs overlapping).
func spanned(name string, limits Limits, perKey bool, work time.Duration) Def[string, string] {
	var key func(string) (string, error)
	if perKey {
		key = func(in string) (string, error) { return strings.SplitN(in, "-", 2)[0], nil }
	}
	return RegisterWithLimits(limits, key, DefaultRetryPolicy, name, str, str, func(c *Ctx, in string) task.Task[string] {
		step := task.From(func(ctx context.Context) (span, error) {
			s := span{Key: strings.SplitN(in, "-", 2)[0], Start: time.Now(), Claimed: c.ClaimedAt()}
			time.Sleep(work)
			s.End = time.Now()
			return s, nil
		})
		return task.Map(Step(c, spanCodec, "work", step), func(span) string { return in })
	})
}

// spans reads the journalled spans of runs.
func (h *harness) spans(ids []string) []span {
	var out []span
	for _, id := range ids {
		_, j := h.describe(id)
		if len(j) != 1 {
			h.t.Fatalf("run %s has journal %v, want one step", id, j)
		}
		s, err := spanCodec.Decode(j[0].Result)
		if err != nil {
			h.t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// maxOverlap is the most spans (of key, or all when key is "") that cover
// one instant.
func maxOverlap(spans []span, key string) int {
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, s := range spans {
		if key == "" || s.Key == key {
			edges = append(edges, edge{s.Start, 1}, edge{s.End, -1})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].at.Equal(edges[j].at) {
			return edges[i].delta < edges[j].delta // an end before a start
		}
		return edges[i].at.Before(edges[j].at)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// workers polls def with n engines until every run of ids is done, while
// a sampler counts the running runs; it returns the most it saw.
func (h *harness) workers(n int, def Def[string, string], ids []string) int {
	h.t.Helper()
	var done atomic.Bool
	var sampled atomic.Int64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for !done.Load() {
			var running int64
			if err := h.d.QueryRow(h.ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status = 'running'`).Scan(&running); err == nil && running > sampled.Load() {
				sampled.Store(running)
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		e := h.engine(fmt.Sprintf("worker-%d", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !done.Load() {
				worked, err := e.Poll(h.ctx, []Workflow{def.Erase()})
				if err != nil {
					errs <- err
					return
				}
				if !worked {
					// Idle: the poll interval of a worker.
					time.Sleep(2 * time.Millisecond)
					var left int
					if err := h.d.QueryRow(h.ctx, `SELECT COUNT(*) FROM _sky_durable_runs WHERE status <> 'done'`).Scan(&left); err == nil && left == 0 {
						done.Store(true)
					}
				}
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	<-stopped
	close(errs)
	for err := range errs {
		h.t.Fatalf("a worker: %v", err)
	}
	for _, id := range ids {
		h.wantStatus(id, StatusDone)
	}
	return int(sampled.Load())
}

// TestConcurrencyLimitAcrossWorkers: with concurrency 2 and 4 workers, no
// instant has 3 runs running, by the journalled step times and by a
// sampler of the running count.
func TestConcurrencyLimitAcrossWorkers(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := spanned("limited", Limits{Concurrency: 2}, false, 20*time.Millisecond)
		var ids []string
		for i := range 16 {
			id := fmt.Sprintf("c-%02d", i)
			ids = append(ids, id)
			h.start(def, id, id)
		}
		sampled := h.workers(4, def, ids)
		if sampled > 2 {
			t.Errorf("the sampler saw %d runs running at once, want at most 2", sampled)
		}
		if most := maxOverlap(h.spans(ids), ""); most > 2 {
			t.Errorf("the journal shows %d steps running at once, want at most 2", most)
		}
	})
}

// TestPerKeyLimitSerialisesAKey: with perKey 1, a run of a key whose run
// is running stays waiting while runs of other keys proceed.
func TestPerKeyLimitSerialisesAKey(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		// First, step by step: a1 holds key a, so the next claim is b1.
		release := make(chan struct{})
		entered := make(chan string, 4)
		blocking := RegisterWithLimits(Limits{PerKey: 1}, func(in string) (string, error) { return in[:1], nil }, DefaultRetryPolicy, "blocking", str, str,
			func(c *Ctx, in string) task.Task[string] {
				return Step(c, str, "work", task.From(func(ctx context.Context) (string, error) {
					entered <- in
					<-release
					return in, nil
				}))
			})
		for _, id := range []string{"a1", "a2", "b1"} {
			h.start(blocking, id, id)
		}
		first := make(chan bool)
		go func() { first <- h.poll(h.e, blocking.Erase()) }()
		if got := <-entered; got != "a1" {
			t.Fatalf("first claim ran %s, want a1", got)
		}
		b := h.engine("B")
		second := make(chan bool)
		go func() { second <- h.poll(b, blocking.Erase()) }()
		if got := <-entered; got != "b1" {
			t.Fatalf("second claim ran %s, want b1 (a2 is held by key a)", got)
		}
		if h.poll(h.engine("C"), blocking.Erase()) {
			t.Errorf("a third worker claimed a run: a2 must wait for a1")
		}
		runs, err := h.e.List(h.ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		held, err := h.e.HeldBy(h.ctx, runs)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[string]string{"a2": "held by concurrency (key a)"}; !mapsEqual(held, want) {
			t.Errorf("HeldBy = %v, want %v", held, want)
		}
		if st, err := h.e.Stats(h.ctx); err != nil || st.OldestDue != nil || st.Held != 1 {
			t.Errorf("Stats: oldest due %+v, held %d (%v); want none (a2 is held, not stuck) and 1 held", st.OldestDue, st.Held, err)
		}
		close(release)
		<-first
		<-second
		h.drain(h.e, blocking.Erase())
		h.wantStatus("a2", StatusDone)

		// Then with 4 workers: key a never has two runs at once.
		def := spanned("keyed", Limits{PerKey: 1}, true, 10*time.Millisecond)
		var ids []string
		for i := range 12 {
			id := fmt.Sprintf("%c-%02d", 'a'+i%3, i)
			ids = append(ids, id)
			h.start(def, id, id)
		}
		h.workers(4, def, ids)
		spans := h.spans(ids)
		for _, k := range []string{"a", "b", "c"} {
			if most := maxOverlap(spans, k); most > 1 {
				t.Errorf("key %s had %d runs running at once, want 1", k, most)
			}
		}
		if r := h.wantStatus("a-00", StatusDone); r.LimitKey != "a" {
			t.Errorf("run a-00 has limit key %q, want a", r.LimitKey)
		}
	})
}

// mapsEqual compares holds with their words (view.HeldText).
func mapsEqual(a map[string]Hold, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if view.HeldText(v) != b[k] {
			return false
		}
	}
	return true
}

// TestRateLimitDeliversItsRate: with 210 runs waiting and 3 pollers that
// poll again at once after a run and, after a refused poll, when the
// limit's next token is due (the worker's rule, worker.go), a limit of 20
// a second admits one run every 50 ms exactly: 20 in every 1 s window from
// any claim (never more), 210 runs in 209 intervals, the declared rate. A
// refused poll's wait is the time from its clock reading to the next token.
// The clock is virtual; docs/benchmarks.md has the real-time measurement.
func TestRateLimitDeliversItsRate(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		const runs, pollers, rate = 210, 3, 20
		const interval = time.Second / rate
		h := newHarness(t, d)
		def := spanned("rated", Limits{RatePerSecond: rate}, false, 0)
		for i := range runs {
			id := fmt.Sprintf("r-%03d", i)
			h.start(def, id, id)
		}
		var engines []*Engine
		wakes := make([]time.Time, pollers)
		for i := range pollers {
			engines = append(engines, h.engine(fmt.Sprintf("worker-%d", i)))
			wakes[i] = h.clock.Now()
		}
		var claims []time.Time
		refused := 0
		for len(claims) < runs {
			i := 0
			for j := range wakes {
				if wakes[j].Before(wakes[i]) {
					i = j
				}
			}
			h.clock.Advance(wakes[i].Sub(h.clock.Now()))
			now := h.clock.Now()
			worked, wait, err := engines[i].pollWait(h.ctx, []Workflow{def.Erase()}, PollOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if worked {
				claims = append(claims, now)
				continue // drain: poll again at once
			}
			refused++
			if want := claims[len(claims)-1].Add(interval).Sub(now); wait != want {
				t.Fatalf("poller %d refused at +%v waits %v, want %v (until the next token)", i, now.Sub(claims[0]), wait, want)
			}
			wakes[i] = now.Add(wait)
		}
		for k, c := range claims {
			if want := claims[0].Add(time.Duration(k) * interval); !c.Equal(want) {
				t.Fatalf("claim %d at +%v, want +%v (one every %v)", k, c.Sub(claims[0]), want.Sub(claims[0]), interval)
			}
		}
		for k := range claims {
			in := 0
			for _, c := range claims[k:] {
				if c.Sub(claims[k]) < time.Second {
					in++
				}
			}
			if k+rate <= runs && in != rate {
				t.Errorf("%d claims in the second from claim %d, want exactly %d", in, k, rate)
			}
		}
		spans := h.spans([]string{"r-000", fmt.Sprintf("r-%03d", runs-1)})
		if got := spans[1].Claimed.Sub(spans[0].Claimed); got != (runs-1)*interval {
			t.Errorf("the runs' own claim times span %v, want %v", got, (runs-1)*interval)
		}
		if refused != pollers*(runs-1) {
			t.Errorf("%d refused polls, want %d (for each token but the last, the winner's drain and the two others)", refused, pollers*(runs-1))
		}
	})
}

// TestPrioritiesDrainInOrder: due runs are claimed by priority, higher
// first, then by due time.
func TestPrioritiesDrainInOrder(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		var mu sync.Mutex
		var order []string
		def := Register("prio", str, str, func(c *Ctx, in string) task.Task[string] {
			mu.Lock()
			order = append(order, in)
			mu.Unlock()
			return task.Succeed(in)
		})
		for i, p := range []int{0, 3, -2, 10, 3, 0, 10} {
			id := fmt.Sprintf("p%d-%d", p, i)
			if err := StartWith(h.ctx, h.e, StartOptions{Priority: p}, def, id, id); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(time.Millisecond)
		}
		h.drain(h.e, def.Erase())
		want := []string{"p10-3", "p10-6", "p3-1", "p3-4", "p0-0", "p0-5", "p-2-2"}
		if !slices.Equal(order, want) {
			t.Errorf("runs ran in order %v, want %v", order, want)
		}
		if r := h.wantStatus("p10-3", StatusDone); r.Priority != 10 {
			t.Errorf("run p10-3 has priority %d, want 10", r.Priority)
		}
	})
}

// TestRateLimitHoldIsListed: a due run of a rate-limited workflow whose next
// claim has not come is held by the rate limit; the overview's oldest due
// run is the oldest due run no limit holds (one nobody claims), and it
// counts the held one apart.
func TestRateLimitHoldIsListed(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := spanned("hourly", Limits{RatePerSecond: 1.0 / 3600}, false, 0)
		h.start(def, "first", "first")
		h.start(def, "second", "second")
		if n := h.drain(h.e, def.Erase()); n != 1 {
			t.Fatalf("drained %d runs, want 1 (one an hour)", n)
		}
		h.clock.Advance(time.Second)
		h.start(spanned("orphan", Limits{}, false, 0), "unclaimed", "unclaimed")
		h.clock.Advance(time.Minute)
		runs, err := h.e.List(h.ctx, StatusWaiting, 10)
		if err != nil {
			t.Fatal(err)
		}
		held, err := h.e.HeldBy(h.ctx, runs)
		if err != nil || !mapsEqual(held, map[string]string{"second": "held by rate limit"}) {
			t.Errorf("HeldBy = %v, %v; want second held by rate limit", held, err)
		}
		st, err := h.e.Stats(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.OldestDue == nil || st.OldestDue.ID != "unclaimed" || st.Held != 1 {
			t.Errorf("Stats: oldest due %+v, held %d; want unclaimed (second is older but held) and 1 held", st.OldestDue, st.Held)
		}
		h.clock.Advance(time.Hour)
		if n := h.drain(h.e, def.Erase()); n != 1 {
			t.Errorf("drained %d runs an hour later, want 1", n)
		}
	})
}

// TestBadLimits: limits that cannot be enforced are an InvalidInput error
// naming the value, at start and at poll.
func TestBadLimits(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		body := func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) }
		for _, c := range []struct {
			limits Limits
			want   []string
		}{
			{Limits{Concurrency: -1}, []string{`"bad"`, "concurrency = -1", "Nothing"}},
			{Limits{PerKey: 2}, []string{"perKey = 2", "function that computes the key"}},
			{Limits{RatePerSecond: -3}, []string{"ratePerSecond = -3", "positive number"}},
		} {
			def := RegisterWithLimits(c.limits, nil, DefaultRetryPolicy, "bad", str, str, body)
			wantErrContains(t, Start(h.ctx, h.e, def, "x", "x"), task.InvalidInput, c.want...)
			_, err := h.e.Poll(h.ctx, []Workflow{def.Erase()})
			wantErrContains(t, err, task.InvalidInput, c.want...)
		}
		if _, _, err := h.e.Describe(h.ctx, "x"); err == nil {
			t.Errorf("a run with bad limits was started")
		}
	})
}
