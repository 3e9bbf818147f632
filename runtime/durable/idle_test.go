package durable

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// listenQuietly starts e's hint listener on its own database as Work does
// (Engine.listen) and waits until it is in effect (its catch-up hint); it
// stops with the test.
func listenQuietly(t *testing.T, e *Engine) *hintRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &hintRecorder{}
	done := make(chan error, 1)
	go func() { done <- e.listen(ctx, "", h.hint, h.report) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("listen: %v", err)
		}
	})
	if got := h.awaitHints(t, 1); got[0] != "" {
		t.Fatalf("first hint %q, want the catch-up hint", got[0])
	}
	return h
}

// TestIdleWorkerWakesOnEveryHint: a worker listening for hints (A, polling
// as Work's pollers do: quiet) sends nothing after an idle probe until the
// first thing the probe saw falls due — a crashed worker's lease, a
// deadline, a schedule tick — and probes or claims at once after a hint
// from another engine (B): a start, a signal to a waiting run, a retry, a
// wake, a release, a schedule declared. The clock is injected (an hour
// behind the database's, so every hint is due at once) and only moved by
// the test; the hints are awaited.
func TestIdleWorkerWakesOnEveryHint(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	ctx := context.Background()
	clock := &virtualClock{now: time.Now().Add(-time.Hour).Truncate(time.Millisecond)}
	var mu sync.Mutex
	sent := 0
	a := New(d, Options{Clock: clock.Now, WorkerID: "A", OnStatement: func(string, string) { mu.Lock(); sent++; mu.Unlock() }})
	b := New(d, Options{Clock: clock.Now, WorkerID: "B"})
	// C claims a run and dies at its first step, leaving it running until
	// its lease (the heartbeat's) ends.
	const lease = DefaultHeartbeat
	c := New(d, Options{Clock: clock.Now, WorkerID: "C",
		OnBoundary: func(Point) error { return errors.New("killed") }})

	one := Register("one", str, str, func(c *Ctx, in string) task.Task[string] { return Step(c, str, "a", task.Succeed(in)) })
	waiter := Register("waiter", str, str, func(c *Ctx, in string) task.Task[string] { return AwaitSignal(c, str, "go") })
	failer := Register("failer", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.Fail[string](Permanent(task.New(task.Unavailable, "always")))
	})
	napper := Register("napper", str, str, func(c *Ctx, in string) task.Task[string] {
		return task.AndThen(Sleep(c, (24*time.Hour).Milliseconds()), func(struct{}) task.Task[string] { return task.Succeed(in) })
	})
	defs := []Workflow{one.Erase(), waiter.Erase(), failer.Erase(), napper.Erase()}

	hints := listenQuietly(t, a)
	heard := 1
	hinted := func(id string) {
		t.Helper()
		heard++
		if got := hints.awaitHints(t, heard); got[heard-1] != id {
			t.Fatalf("hint %d: %q, want %q (all: %q)", heard, got[heard-1], id, got)
		}
	}
	quietPoll := func() (worked bool, statements int) {
		t.Helper()
		mu.Lock()
		sent = 0
		mu.Unlock()
		worked, _, err := a.pollWait(ctx, defs, PollOptions{quiet: true})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return worked, sent
	}
	want := func(what string, worked bool, statements int) {
		t.Helper()
		if w, n := quietPoll(); w != worked || n != statements {
			t.Fatalf("%s: worked %v with %d statements, want %v with %d", what, w, n, worked, statements)
		}
	}
	// settle drains A (its first poll after a hint probes), and two
	// seconds later it is quiet.
	settle := func(what string) {
		t.Helper()
		for n := 0; ; n++ {
			if w, _ := quietPoll(); !w {
				break
			}
			if n > 10 {
				t.Fatalf("%s: still working", what)
			}
		}
		clock.Advance(time.Second)
		if w, _ := quietPoll(); w {
			t.Fatalf("%s: worked after the drain", what)
		}
		clock.Advance(time.Second)
		want(what+": two seconds later", false, 0)
	}
	run := func(id string) Run {
		t.Helper()
		r, _, err := a.Describe(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ok := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// begun starts run id with start (in another engine), awaits its
	// hint and settles: A takes it up to where it waits.
	begun := func(what, id string, start func() error) {
		t.Helper()
		ok(start())
		hinted(id)
		settle(what)
	}
	// wakes does what (another engine's action on run id), awaits its
	// hint, wants A's next poll to advance the run (to status want, unless
	// ""), and settles.
	wakes := func(what, id string, action func() error, want Status) {
		t.Helper()
		ok(action())
		hinted(id)
		if w, _ := quietPoll(); !w || (want != "" && run(id).Status != want) {
			t.Fatalf("%s: worked %v, status %s, want %s", what, w, run(id).Status, want)
		}
		settle(what)
	}

	clock.Advance(time.Second)
	want("the first probe", false, 1)
	clock.Advance(time.Second)
	want("a second later", false, 0)
	clock.Advance(quietMax / 2)
	want("half the quiet later", false, 0)
	clock.Advance(quietMax / 2)
	want("the quiet is over", false, 1)

	wakes("a start", "start-1", func() error { return Start(ctx, b, one, "start-1", "x") }, StatusDone)

	// A signal to a waiting run.
	begun("waiting", "wait-1", func() error { return Start(ctx, b, waiter, "wait-1", "x") })
	wakes("a signal", "wait-1", func() error { return b.Signal(ctx, "wait-1", "go", `"now"`) }, StatusDone)

	// A retry of a dead run.
	begun("dead", "fail-1", func() error { return Start(ctx, b, failer, "fail-1", "x") })
	wakes("a retry", "fail-1", func() error { return b.Retry(ctx, "fail-1") }, StatusDead)

	// A wake of a run sleeping for a day (its hint is a timer of the
	// listener's, far beyond the test).
	begun("sleeping", "nap-1", func() error { return Start(ctx, b, napper, "nap-1", "x") })
	wakes("a wake", "nap-1", func() error { return b.Wake(ctx, "nap-1") }, "")

	// A crashed worker's run: due when its lease ends, with no hint.
	ok(Start(ctx, b, one, "lease-1", "x"))
	hinted("lease-1")
	if worked, err := c.Poll(ctx, defs); err != nil || !worked {
		t.Fatalf("C's poll: %v %v", worked, err)
	}
	settle("a crashed worker's run") // two seconds into its lease
	clock.Advance(lease - 3*time.Second)
	want("a second before the lease ends", false, 0)
	clock.Advance(time.Second + time.Millisecond) // a claim takes a run whose lease ended before now
	if w, n := quietPoll(); !w || n < 2 || run("lease-1").Status != StatusDone {
		t.Fatalf("when the lease ended: worked %v with %d statements, status %s", w, n, run("lease-1").Status)
	}
	settle("lease")

	// A release of a crashed worker's run.
	ok(Start(ctx, b, one, "release-1", "x"))
	hinted("release-1")
	if worked, err := c.Poll(ctx, defs); err != nil || !worked {
		t.Fatalf("C's poll: %v %v", worked, err)
	}
	settle("before the release")
	wakes("a release", "release-1", func() error { return b.Release(ctx, "release-1") }, StatusDone)

	// A start with a deadline: the run waits, and times out at once when
	// the deadline passes.
	// claimed, then two seconds on
	begun("waiting with a deadline", "deadline-1", func() error {
		return StartWith(ctx, b, StartOptions{Deadline: 10 * time.Second}, waiter, "deadline-1", "x")
	})
	clock.Advance(7 * time.Second)
	want("a second before the deadline", false, 0)
	clock.Advance(time.Second)
	if w, n := quietPoll(); w || n < 2 || run("deadline-1").Status != StatusTimedOut {
		t.Fatalf("at the deadline: worked %v with %d statements, status %s", w, n, run("deadline-1").Status)
	}
	settle("deadline")

	// A schedule declared by another engine: its hint makes A probe at
	// once, and the tick fires when due.
	ok(ScheduleRuns(ctx, b, one, "every-20s", "@every 20s", "x", ScheduleOptions{}))
	hinted("")
	want("after the schedule's hint", false, 1)
	clock.Advance(18 * time.Second)
	want("two seconds before the tick", false, 0)
	clock.Advance(2 * time.Second)
	if w, _ := quietPoll(); !w {
		t.Fatal("the schedule's tick did not run")
	}
}
