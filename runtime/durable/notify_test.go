package durable

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// hintRecorder collects hints in arrival order.
type hintRecorder struct {
	mu    sync.Mutex
	hints []string
	errs  []string
}

func (h *hintRecorder) hint(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hints = append(h.hints, id)
}

func (h *hintRecorder) report(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, s)
}

func (h *hintRecorder) snapshot() ([]string, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hints...), append([]string(nil), h.errs...)
}

// awaitHints waits until n hints arrived and returns them.
func (h *hintRecorder) awaitHints(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		hints, errs := h.snapshot()
		if len(hints) >= n {
			return hints
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited for %d hints, got %v; listener reports: %v", n, hints, errs)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listening starts ListenForHints on url and waits until its LISTEN is in
// place (the first start's hint is seen).
func listening(t *testing.T, d *db.DB, url string) *hintRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &hintRecorder{}
	done := make(chan error, 1)
	go func() { done <- ListenForHints(ctx, d, url, h.hint, h.report) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ListenForHints: %v", err)
		}
	})
	return h
}

func TestHintsOnStartAndSignalOnly(t *testing.T) {
	url := dbtest.URL(t, "hints")
	d, err := db.Open(context.Background(), "postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	e := New(d, Options{})
	wf := Register("approval", codec.String, codec.String, func(c *Ctx, in string) task.Task[string] {
		return AwaitSignal(c, codec.String, "approved")
	})
	h := listening(t, d, url)
	// The first hint, "", says LISTEN is in place (a catch-up hint).
	if got := h.awaitHints(t, 1); got[0] != "" {
		t.Fatalf("first hint %q, want the catch-up hint \"\"", got[0])
	}
	h.mu.Lock()
	h.hints = nil
	h.mu.Unlock()

	if err := Start(ctx, e, wf, "order-1", "in"); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 1); got[0] != "order-1" {
		t.Fatalf("hints after start: %v", got)
	}
	// Poll: the claim and the suspension on a signal send no hint, so the
	// next hint is order-2's start (hints arrive in commit order).
	if worked, err := e.Poll(ctx, []Workflow{wf.Erase()}); err != nil || !worked {
		t.Fatalf("poll: worked=%v err=%v", worked, err)
	}
	if err := Start(ctx, e, wf, "order-2", "in"); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 2); got[1] != "order-2" {
		t.Fatalf("hints after a suspending poll and a second start: %v (the suspension must not hint)", got)
	}
	if err := SignalValue(ctx, e, "order-1", "approved", codec.String, "yes"); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 3); got[2] != "order-1" {
		t.Fatalf("hints after the signal: %v", got)
	}
	// A start with an id that exists changes nothing and sends nothing. A
	// signal to a run that is due (order-2, never claimed) announces it
	// again: a poll may have skipped the run while the signal held its row.
	if err := Start(ctx, e, wf, "order-1", "again"); err != nil {
		t.Fatal(err)
	}
	if err := SignalValue(ctx, e, "order-2", "other", codec.String, "x"); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 4); got[3] != "order-2" {
		t.Fatalf("hints after a signal to a due run: %v (want it announced again)", got)
	}
	// A signal to a run parked on another signal sends nothing: order-1
	// completes and order-2 parks on "approved" (both without hints), then
	// order-2 gets "another", then order-3 starts.
	if n := newHarness(t, d).drain(e, wf.Erase()); n != 2 {
		t.Fatalf("polls that advanced a run: %d, want 2 (order-1 done, order-2 parked)", n)
	}
	if err := SignalValue(ctx, e, "order-2", "another", codec.String, "x"); err != nil {
		t.Fatal(err)
	}
	if err := Start(ctx, e, wf, "order-3", "in"); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 5); got[4] != "order-3" {
		t.Fatalf("hints: %v (a no-op start or a signal to a run parked on another signal must not hint)", got)
	}
}

func TestListenForHintsRefusesAnotherDatabase(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	other := dbtest.URL(t, "other")
	err := ListenForHints(context.Background(), d, other, func(string) {}, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "notifications would never arrive") {
		t.Fatalf("error %v", err)
	}
}

func TestHintSettingsFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	cases := []struct {
		env  func(string) string
		want HintSettings
	}{
		{env("SKY_DURABLE_NOTIFY", "off", "DATABASE_URL", "postgres://a"), HintSettings{Off: true}},
		{env("SKY_DURABLE_NOTIFY", " No ", "DATABASE_URL", "postgres://a"), HintSettings{Off: true}},
		{env("SKY_DURABLE_NOTIFY", "on", "DATABASE_URL", "postgres://a"), HintSettings{URL: "postgres://a"}},
		{env("SKY_DURABLE_NOTIFY", "TRUE", "DATABASE_URL", "postgres://a"), HintSettings{URL: "postgres://a"}},
		{env("DATABASE_URL", "postgres://a"), HintSettings{URL: "postgres://a"}},
		{env("DATABASE_URL", "postgres://a", "SKY_DURABLE_NOTIFY_URL", "postgres://b"), HintSettings{URL: "postgres://b"}},
		{env("SKY_DB_DRIVER", "postgres", "SKY_DB_PATH", "postgres://c"), HintSettings{URL: "postgres://c"}},
		{env("SKY_DB_DRIVER", "sqlite", "SKY_DB_PATH", "x.db"), HintSettings{NoURL: "no PostgreSQL URL"}},
		// Through a transaction pooler: the direct listening URL, else no
		// listening at all.
		{env("DATABASE_URL", "postgres://a:6432/d", "SKY_DURABLE_LISTEN_URL", "postgres://a:5432/d"), HintSettings{URL: "postgres://a:5432/d"}},
		{env("DATABASE_URL", "postgres://a:6432/d"), HintSettings{NoURL: "transaction pooler"}},
		{env("DATABASE_URL", "postgres://a:7000/d", "SKY_DB_POOLER", "transaction"), HintSettings{NoURL: "transaction pooler"}},
		{env("DATABASE_URL", "postgres://a:6432/d", "SKY_DB_POOLER", "session"), HintSettings{URL: "postgres://a:6432/d"}},
	}
	for i, c := range cases {
		got, err := HintSettingsFromEnv(c.env)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		if got.Off != c.want.Off || got.URL != c.want.URL || !strings.Contains(got.NoURL, c.want.NoURL) || (c.want.NoURL == "") != (got.NoURL == "") {
			t.Errorf("case %d: %+v, want %+v", i, got, c.want)
		}
	}
}

// TestHintSettingsFromEnvRefusesAnUnknownNotify: a value of
// SKY_DURABLE_NOTIFY that is neither on nor off is an error naming the
// variable, the value and the accepted values, never read as on.
func TestHintSettingsFromEnvRefusesAnUnknownNotify(t *testing.T) {
	getenv := func(k string) string {
		return map[string]string{"SKY_DURABLE_NOTIFY": "maybe", "DATABASE_URL": "postgres://a"}[k]
	}
	_, err := HintSettingsFromEnv(getenv)
	want := `SKY_DURABLE_NOTIFY="maybe" is neither on nor off; hint: leave it unset or use on (1, true, yes)`
	if err == nil || !strings.Contains(err.Error(), want) || task.As(err).Kind != task.InvalidInput {
		t.Fatalf("error %v, want an InvalidInput containing %q", err, want)
	}
}

func TestDelayedHintWhenASleepFallsDue(t *testing.T) {
	url := dbtest.URL(t, "sleephint")
	d, err := db.Open(context.Background(), "postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	e := New(d, Options{})
	nap := Register("nap", codec.Int, codec.String, func(c *Ctx, ms int64) task.Task[string] {
		return task.AndThen(Sleep(c, ms), func(struct{}) task.Task[string] { return task.Succeed("rested") })
	})
	h := listening(t, d, url)
	if got := h.awaitHints(t, 1); got[0] != "" {
		t.Fatalf("first hint %q, want the catch-up hint", got[0])
	}
	if err := Start(ctx, e, nap, "n1", 300); err != nil {
		t.Fatal(err)
	}
	if got := h.awaitHints(t, 2); got[1] != "n1" {
		t.Fatalf("hints after start: %v", got)
	}
	if worked, err := e.Poll(ctx, []Workflow{nap.Erase()}); err != nil || !worked {
		t.Fatalf("first poll: worked=%v err=%v", worked, err)
	}
	// The suspension announced the wake time; the hint comes when it is
	// due, so a poll made on it finds the run due and finishes it.
	if got := h.awaitHints(t, 3); got[2] != "n1" {
		t.Fatalf("hints after the sleep: %v", got)
	}
	if worked, err := e.Poll(ctx, []Workflow{nap.Erase()}); err != nil || !worked {
		t.Fatalf("poll on the delayed hint: worked=%v err=%v (the hint came before the run was due)", worked, err)
	}
	if r, _, err := e.Describe(ctx, "n1"); err != nil || r.Status != StatusDone {
		t.Fatalf("run n1: %+v %v", r, err)
	}
}
