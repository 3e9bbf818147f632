package durable

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestMain gives every test a database already migrated (dbtest.Open
// copies a template the engine's Setup ran on once); dbtest.OpenEmpty
// gives an unmigrated one.
func TestMain(m *testing.M) {
	dbtest.MainPrepared(m, func(ctx context.Context, d *db.DB) error { return New(d, Options{}).Setup(ctx) })
}

// virtualClock is the injected clock of the conformance suite.
type virtualClock struct {
	mu  sync.Mutex
	now time.Time
}

func newVirtualClock() *virtualClock {
	return &virtualClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness is one database, one virtual clock and the engines (workers) on it.
type harness struct {
	t     *testing.T
	ctx   context.Context
	d     *db.DB
	clock *virtualClock
	e     *Engine // worker "A"

	mu   sync.Mutex
	ops  []string // statements sent by all engines, as op names
	logs bytes.Buffer
}

func newHarness(t *testing.T, d *db.DB) *harness {
	t.Helper()
	h := &harness{t: t, ctx: context.Background(), d: d, clock: newVirtualClock()}
	h.e = h.engine("A")
	if err := h.e.Setup(h.ctx); err != nil {
		t.Fatalf("setup: %v", err)
	}
	return h
}

// engine is another worker on the same database and clock.
func (h *harness) engine(worker string, tweak ...func(*Options)) *Engine {
	opts := Options{
		Clock:    h.clock.Now,
		WorkerID: worker,
		Rand:     rand.New(rand.NewPCG(1, uint64(len(worker)))),
		Logger:   slog.New(slog.NewTextHandler(lockedWriter{h}, nil)),
		OnStatement: func(op, _ string) {
			h.mu.Lock()
			h.ops = append(h.ops, op)
			h.mu.Unlock()
		},
	}
	for _, f := range tweak {
		f(&opts)
	}
	return New(h.d, opts)
}

type lockedWriter struct{ h *harness }

func (w lockedWriter) Write(p []byte) (int, error) {
	w.h.mu.Lock()
	defer w.h.mu.Unlock()
	return w.h.logs.Write(p)
}

// takeOps returns the statements sent since the last call.
func (h *harness) takeOps() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ops := h.ops
	h.ops = nil
	return ops
}

func (h *harness) logText() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.logs.String()
}

// poll polls once with e and fails the test on an engine error.
func (h *harness) poll(e *Engine, defs ...Workflow) bool {
	h.t.Helper()
	worked, err := e.Poll(h.ctx, defs)
	if err != nil {
		h.t.Fatalf("poll: %v", err)
	}
	return worked
}

// drain polls until no run is due and returns how many polls did work.
func (h *harness) drain(e *Engine, defs ...Workflow) int {
	h.t.Helper()
	n := 0
	for h.poll(e, defs...) {
		n++
		if n > 200 {
			h.t.Fatalf("drain: still polling after %d runs", n)
		}
	}
	return n
}

func (h *harness) describe(runID string) (Run, []JournalEntry) {
	h.t.Helper()
	r, j, err := h.e.Describe(h.ctx, runID)
	if err != nil {
		h.t.Fatalf("describe %q: %v", runID, err)
	}
	return r, j
}

func (h *harness) wantStatus(runID string, want Status) Run {
	h.t.Helper()
	r, _ := h.describe(runID)
	if r.Status != want {
		h.t.Fatalf("run %q: status %s, want %s (last_error %q)", runID, r.Status, want, r.LastError)
	}
	return r
}

func (h *harness) start(w Def[string, string], runID, input string) {
	h.t.Helper()
	if err := Start(h.ctx, h.e, w, runID, input); err != nil {
		h.t.Fatalf("start %q: %v", runID, err)
	}
}

func (h *harness) signal(runID, name, payload string) {
	h.t.Helper()
	if err := h.e.Signal(h.ctx, runID, name, payload); err != nil {
		h.t.Fatalf("signal %q to %q: %v", name, runID, err)
	}
}

// stepIDs lists a journal's step ids in order.
func stepIDs(j []JournalEntry) []string {
	ids := make([]string, len(j))
	for i, e := range j {
		ids[i] = e.StepID
	}
	return ids
}

// counter counts effect executions by name, across workers.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) hit(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[name]++
	return c.n[name]
}

func (c *counter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

// effect is a step task that counts its runs and yields value.
func (c *counter) effect(name, value string) task.Task[string] {
	return task.From(func(context.Context) (string, error) {
		c.hit(name)
		return value, nil
	})
}

// wantErrContains fails unless err is non-nil, of kind, and mentions every part.
func wantErrContains(t *testing.T, err error, kind task.Kind, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want a %s error mentioning %q", kind, parts)
	}
	te := task.As(err)
	if te.Kind != kind {
		t.Errorf("error kind %s, want %s: %v", te.Kind, kind, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not mention %q", err.Error(), p)
		}
	}
}

func wantContains(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("%q does not mention %q", text, p)
		}
	}
}

// str is the codec used by most test workflows.
var str = codec.String
