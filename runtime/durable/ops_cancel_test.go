package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestCancelAtEachState cancels a run in every state: waiting on a signal,
// sleeping, due (never claimed), failed in backoff and running mid-step
// end cancelled with their journal kept and are never claimed again; dead,
// done and cancelled runs are refused, and an unknown id is NotFound.
func TestCancelAtEachState(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		w := stepThenSignal(cnt)
		sleeper := Register("sleeper", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "a", cnt.effect("sleeper-a", "A")), func(string) task.Task[string] {
				return task.Map(Sleep(c, 60_000), func(struct{}) string { return "woke" })
			})
		})
		defs := []Workflow{w.Erase(), sleeper.Erase()}

		h.start(w, "done", "ok")
		h.signal("done", "go", `"!"`)
		h.start(w, "dead", "fail")
		h.signal("dead", "go", `"!"`)
		for range 3 {
			h.drain(h.e, defs...)
			h.clock.Advance(2 * time.Minute)
		}
		h.wantStatus("done", StatusDone)
		h.wantStatus("dead", StatusDead)

		h.start(w, "on-signal", "ok")
		h.start(sleeper, "sleeping", "x")
		h.start(w, "failing", "fail")
		h.drain(h.e, defs...)
		h.signal("failing", "go", `"!"`)
		h.drain(h.e, defs...)
		h.wantStatus("failing", StatusFailed)
		h.wantStatus("sleeping", StatusWaiting)
		h.start(w, "due", "ok") // never claimed

		journals := map[string][]string{}
		for _, id := range []string{"on-signal", "sleeping", "failing", "due"} {
			r, j := h.describe(id)
			journals[id] = stepIDs(j)
			if err := h.e.Cancel(h.ctx, id); err != nil {
				t.Fatalf("cancel %s (%s): %v", id, r.Status, err)
			}
		}
		for _, c := range []struct{ id, status string }{{"dead", "dead"}, {"done", "done"}, {"on-signal", "cancelled"}} {
			err := h.e.Cancel(h.ctx, c.id)
			wantErrContains(t, err, task.Conflict, `cannot cancel run "`+c.id+`"`, "it is "+c.status)
		}
		wantErrContains(t, h.e.Cancel(h.ctx, "nope"), task.NotFound, `"nope"`)

		// A cancelled run is never claimed again, whatever arrives.
		h.signal("on-signal", "go", `"!"`)
		h.clock.Advance(time.Hour)
		if h.drain(h.e, defs...) != 0 {
			t.Error("a poll advanced a cancelled run")
		}
		for id, before := range journals {
			r, j := h.describe(id)
			if r.Status != StatusCancelled || strings.Join(stepIDs(j), ",") != strings.Join(before, ",") {
				t.Errorf("%s: %s with journal %v, want cancelled with journal %v kept", id, r.Status, stepIDs(j), before)
			}
		}
		if err := h.e.Retry(h.ctx, "due"); err == nil {
			t.Error("Retry revived a cancelled run")
		}
	})
}

// TestCancelRunningStopsAtNextStepBoundary cancels a run while its worker
// is inside a step: the step's result is not journalled, the worker writes
// nothing more and logs the lost lease, and the run ends cancelled with the
// steps before it kept.
func TestCancelRunningStopsAtNextStepBoundary(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		inStep, release := make(chan struct{}), make(chan struct{})
		cnt := newCounter()
		w := Register("slow", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.AndThen(Step(c, str, "first", cnt.effect("first", "1")), func(string) task.Task[string] {
				slow := task.From(func(context.Context) (string, error) {
					close(inStep)
					<-release
					return "2", nil
				})
				return task.AndThen(Step(c, str, "second", slow), func(string) task.Task[string] {
					return Step(c, str, "third", cnt.effect("third", "3"))
				})
			})
		})
		h.start(w, "r", "x")
		var wg sync.WaitGroup
		var worked bool
		var pollErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			worked, pollErr = h.e.Poll(h.ctx, []Workflow{w.Erase()})
		}()
		<-inStep
		if err := h.e.Cancel(h.ctx, "r"); err != nil {
			t.Fatalf("cancel a running run: %v", err)
		}
		close(release)
		wg.Wait()
		if !worked || pollErr != nil {
			t.Fatalf("poll = %v, %v; want it to return normally", worked, pollErr)
		}
		r, j := h.describe("r")
		if r.Status != StatusCancelled || strings.Join(stepIDs(j), ",") != "first" || cnt.get("third") != 0 {
			t.Fatalf("after cancel mid-step: %s, journal %v, third ran %d times; want cancelled, [first], 0", r.Status, stepIDs(j), cnt.get("third"))
		}
		wantContains(t, h.logText(), `msg="durable lease lost`, "run=r", "step=second")
	})
}

// TestLifecycleLogsJSON: every lifecycle event is one JSON line naming the
// run, workflow, step (where there is one) and attempt.
func TestLifecycleLogsJSON(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	h := newHarness(t, d)
	var buf bytes.Buffer
	var mu sync.Mutex
	e := h.engine("J", func(o *Options) {
		o.Logger = slog.New(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return buf.Write(p)
		}), nil))
	})
	cnt := newCounter()
	w := stepThenSignal(cnt)
	sleeper := RegisterWith(RetryPolicy{MaxAttempts: 1}, "sleeper", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Sleep(c, 1000), func(struct{}) task.Task[string] {
			return Step(c, str, "boom", task.Fail[string](task.New(task.Unavailable, "boom")))
		})
	})
	defs := []Workflow{w.Erase(), sleeper.Erase()}
	for _, id := range []string{"ok", "fail"} {
		if err := Start(h.ctx, e, w, id, id); err != nil {
			t.Fatal(err)
		}
		h.signal(id, "go", `"!"`)
	}
	if err := Start(h.ctx, e, sleeper, "sleepy", "x"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		for {
			worked, err := e.Poll(h.ctx, defs)
			if err != nil {
				t.Fatal(err)
			}
			if !worked {
				break
			}
		}
		h.clock.Advance(2 * time.Minute)
	}
	// A lost lease: claim, then cancel before the first step is journalled.
	if err := Start(h.ctx, e, w, "lost", "x"); err != nil {
		t.Fatal(err)
	}
	lost := Register("live", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(task.From(func(ctx context.Context) (string, error) { return "", h.e.Cancel(ctx, "lost") }), func(string) task.Task[string] {
			return Step(c, str, "a", task.Succeed("A"))
		})
	})
	if worked, err := e.Poll(h.ctx, []Workflow{lost.Erase()}); !worked || err != nil {
		t.Fatalf("poll: %v %v", worked, err)
	}

	seen := map[string]bool{}
	mu.Lock()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	mu.Unlock()
	for _, line := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("log line is not JSON: %s", line)
		}
		msg, _ := ev["msg"].(string)
		seen[msg] = true
		if ev["run"] == nil || ev["workflow"] == nil {
			t.Errorf("event %q lacks run or workflow: %s", msg, line)
		}
		needs := map[string][]string{
			"durable run claimed":     {"attempt", "version", "worker"},
			"durable step journalled": {"attempt", "step"},
			"durable run suspended":   {"attempt", "step", "wake_at"},
			"durable attempt failed":  {"attempt", "step", "error", "backoff"},
			"durable run dead":        {"attempt", "step", "error"},
			"durable run done":        {"attempt", "step"},
			"durable run started":     {"version"},
		}
		if strings.HasPrefix(msg, "durable lease lost") {
			needs[msg] = []string{"attempt", "step"}
		}
		for _, k := range needs[msg] {
			if _, ok := ev[k]; !ok {
				t.Errorf("event %q lacks %q: %s", msg, k, line)
			}
		}
	}
	for _, want := range []string{"durable run started", "durable run claimed", "durable step journalled", "durable run suspended",
		"durable attempt failed", "durable run dead", "durable run done"} {
		if !seen[want] {
			t.Errorf("no %q event in:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), `"msg":"durable lease lost`) {
		t.Errorf("no lease-lost event in:\n%s", strings.Join(lines, "\n"))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
