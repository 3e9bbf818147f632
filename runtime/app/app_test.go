package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// syncBuffer is a bytes.Buffer safe to read while the loop writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// manualTicker ticks only when the test says so.
type manualTicker struct {
	d       time.Duration
	c       chan time.Time
	stopped atomic.Bool
}

func (m *manualTicker) C() <-chan time.Time { return m.c }
func (m *manualTicker) Stop()               { m.stopped.Store(true) }

// manualClock hands out manual tickers and remembers them.
type manualClock struct {
	mu      sync.Mutex
	tickers []*manualTicker
}

func (m *manualClock) NewTicker(d time.Duration) Ticker {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTicker{d: d, c: make(chan time.Time)}
	m.tickers = append(m.tickers, t)
	return t
}

// live lists the tickers not stopped.
func (m *manualClock) live() []*manualTicker {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*manualTicker
	for _, t := range m.tickers {
		if !t.stopped.Load() {
			out = append(out, t)
		}
	}
	return out
}

func (m *manualClock) started() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tickers)
}

// tick delivers one tick at `at` to the live ticker of period d, waiting
// until there is one.
func (m *manualClock) tick(t *testing.T, d time.Duration, at time.Time) {
	t.Helper()
	var target *manualTicker
	waitFor(t, fmt.Sprintf("a live %v ticker", d), func() bool {
		for _, tk := range m.live() {
			if tk.d == d {
				target = tk
				return true
			}
		}
		return false
	})
	select {
	case target.c <- at:
	case <-time.After(10 * time.Second):
		t.Fatalf("the loop did not take the %v tick", d)
	}
}

// waitFor polls cond until it holds, failing after a deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func ctor(name string, args ...value.Value) value.Value { return value.Ctor{Name: name, Args: args} }

func pair(model value.Value, c Cmd) value.Value { return value.Tuple{model, CmdValue(c)} }

func fn1(name string, f func(a value.Value) (value.Value, error)) value.Value {
	return value.NewFunc(name, 1, func(a []value.Value) (value.Value, error) { return f(a[0]) })
}

func fn2(name string, f func(a, b value.Value) (value.Value, error)) value.Value {
	return value.NewFunc(name, 2, func(a []value.Value) (value.Value, error) { return f(a[0], a[1]) })
}

func initWith(model value.Value, c Cmd) value.Value {
	return fn1("init", func(value.Value) (value.Value, error) { return pair(model, c), nil })
}

var showView = fn1("view", func(m value.Value) (value.Value, error) { return "model: " + value.Show(m) + "\n", nil })

func run(t *testing.T, ctx context.Context, p Program, o Options) (string, error) {
	t.Helper()
	out := &syncBuffer{}
	o.Stdout = out
	if o.Stdin == nil {
		o.Stdin = strings.NewReader("")
	}
	if o.Stderr == nil {
		o.Stderr = &syncBuffer{}
	}
	err := Run(ctx, p, o)
	return out.String(), err
}

func TestInputLinesBecomeMessagesAndEOFEnds(t *testing.T) {
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		n := model.(int64)
		switch msg.(string) {
		case "inc":
			n++
		case "dec":
			n--
		}
		return pair(n, Cmd{}), nil
	})
	p := Program{Init: initWith(int64(0), Cmd{}), Update: update, View: showView,
		Input: fn1("input", func(s value.Value) (value.Value, error) { return s, nil })}
	out, err := run(t, context.Background(), p, Options{Stdin: strings.NewReader("inc\ninc\r\nnoop\ndec\n")})
	if err != nil {
		t.Fatal(err)
	}
	// Every update prints the view, the unchanged one after "noop" too.
	if want := "model: 0\nmodel: 1\nmodel: 2\nmodel: 2\nmodel: 1\n"; out != want {
		t.Fatalf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestTheViewIsPrintedExactlyAsReturned(t *testing.T) {
	update := fn2("update", func(msg, model value.Value) (value.Value, error) { return pair(msg, Cmd{}), nil })
	view := fn1("view", func(m value.Value) (value.Value, error) { return m, nil })
	p := Program{Init: initWith("> ", Cmd{}), Update: update, View: view,
		Input: fn1("input", func(s value.Value) (value.Value, error) { return s, nil })}
	out, err := run(t, context.Background(), p, Options{Stdin: strings.NewReader("a\nb\n")})
	if err != nil {
		t.Fatal(err)
	}
	if want := "> ab"; out != want {
		t.Errorf("output %q, want %q: no newline added after a view", out, want)
	}
}

func TestPerformResultsComeBackAsMessages(t *testing.T) {
	ok := value.Task{T: task.Succeed[value.Value](int64(42))}
	bad := value.Task{T: task.Fail[value.Value](task.New(task.NotFound, "no such order"))}
	got := fn1("Got", func(r value.Value) (value.Value, error) { return ctor("Got", r), nil })
	var seen []string
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		seen = append(seen, value.Show(msg.(value.Ctor).Args[0]))
		return pair(model.(int64)+1, Cmd{}), nil
	})
	p := Program{Init: initWith(int64(0), Batch(PerformCmd(ok, got), PerformCmd(bad, got))), Update: update, View: showView}
	out, err := run(t, context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if out != "model: 0\nmodel: 1\nmodel: 2\n" {
		t.Fatalf("output %q", out)
	}
	all := strings.Join(seen, " | ")
	if !strings.Contains(all, "Ok 42") || !strings.Contains(all, `Err (Error NotFound { details = Nothing, message = "no such order" })`) {
		t.Fatalf("messages: %s", all)
	}
}

func TestUpdatesAreSerialised(t *testing.T) {
	const n = 200
	var inUpdate atomic.Int32
	var overlaps atomic.Int32
	var cmds []Cmd
	for i := 0; i < n; i++ {
		cmds = append(cmds, PerformCmd(value.Task{T: task.Succeed[value.Value](int64(i))}, fn1("Done", func(r value.Value) (value.Value, error) { return r, nil })))
	}
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		if inUpdate.Add(1) > 1 {
			overlaps.Add(1)
		}
		defer inUpdate.Add(-1)
		time.Sleep(10 * time.Microsecond) // widen the window a concurrent caller would hit
		return pair(model.(int64)+1, Cmd{}), nil
	})
	var final value.Value
	view := fn1("view", func(m value.Value) (value.Value, error) { final = m; return "", nil })
	if _, err := run(t, context.Background(), Program{Init: initWith(int64(0), Batch(cmds...)), Update: update, View: view}, Options{}); err != nil {
		t.Fatal(err)
	}
	if final != int64(n) || overlaps.Load() != 0 {
		t.Fatalf("final model %v, overlapping updates %d", final, overlaps.Load())
	}
}

func TestTickersFollowTheModel(t *testing.T) {
	clock := &manualClock{}
	// Tick while the model is below 3 (one ticker whose phase is kept),
	// then a Sub.everyWithTime of another interval while below 5, then none.
	subs := fn1("subscriptions", func(m value.Value) (value.Value, error) {
		n := m.(int64)
		switch {
		case n < 3:
			s, err := EverySub(1000, ctor("Tick"))
			return SubValue(s), err
		case n < 5:
			s, err := EveryWithTimeSub(250, fn1("At", func(ms value.Value) (value.Value, error) { return ctor("At", ms), nil }))
			return SubValue(BatchSub(Sub{}, s)), err
		}
		return SubValue(Sub{}), nil
	})
	var times []int64
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		if c := msg.(value.Ctor); c.Name == "At" {
			times = append(times, c.Args[0].(int64))
		}
		return pair(model.(int64)+1, Cmd{}), nil
	})
	done := make(chan error, 1)
	var out string
	go func() {
		var err error
		out, err = run(t, context.Background(), Program{Init: initWith(int64(0), Cmd{}), Update: update, View: showView, Subscriptions: subs}, Options{NewTicker: clock.NewTicker})
		done <- err
	}()
	base := time.UnixMilli(1_700_000_000_000)
	for i := 0; i < 3; i++ {
		clock.tick(t, time.Second, base)
	}
	clock.tick(t, 250*time.Millisecond, base.Add(time.Second))
	clock.tick(t, 250*time.Millisecond, base.Add(2*time.Second))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if clock.started() != 2 || len(clock.live()) != 0 {
		t.Fatalf("started %d tickers (want 2: one per distinct subscription), %d still live", clock.started(), len(clock.live()))
	}
	if want := []int64{base.Add(time.Second).UnixMilli(), base.Add(2 * time.Second).UnixMilli()}; fmt.Sprint(times) != fmt.Sprint(want) {
		t.Fatalf("everyWithTime times %v, want %v", times, want)
	}
	if !strings.HasSuffix(out, "model: 5\n") {
		t.Fatalf("output %q", out)
	}
}

func TestAChangedMessageIsANewTicker(t *testing.T) {
	clock := &manualClock{}
	subs := fn1("subscriptions", func(m value.Value) (value.Value, error) {
		if m.(int64) >= 2 {
			return SubValue(Sub{}), nil
		}
		s, err := EverySub(100, ctor("Tick", m))
		return SubValue(s), err
	})
	update := fn2("update", func(msg, model value.Value) (value.Value, error) { return pair(model.(int64)+1, Cmd{}), nil })
	done := make(chan error, 1)
	go func() {
		_, err := run(t, context.Background(), Program{Init: initWith(int64(0), Cmd{}), Update: update, Subscriptions: subs}, Options{NewTicker: clock.NewTicker})
		done <- err
	}()
	clock.tick(t, 100*time.Millisecond, time.Now())
	waitFor(t, "the ticker of Tick 1", func() bool { return clock.started() == 2 })
	clock.tick(t, 100*time.Millisecond, time.Now())
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if clock.started() != 2 {
		t.Fatalf("started %d tickers, want 2 (Tick 0 then Tick 1)", clock.started())
	}
}

func TestWakerFiresTickersNow(t *testing.T) {
	clock := &manualClock{}
	// init performs a Task that attaches a goroutine which wakes the loop;
	// the ticker itself never ticks, so only the wake can end the program.
	attach := value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		w, ok := WakerFrom(ctx)
		if !ok {
			return nil, errors.New("no waker in the Task's context")
		}
		w.Attach("listener", func(ctx context.Context, wake func()) { wake() })
		return value.Unit{}, nil
	})}
	subs := fn1("subscriptions", func(m value.Value) (value.Value, error) {
		if m.(int64) >= 2 {
			return SubValue(Sub{}), nil
		}
		s, err := EverySub(60_000, ctor("Tick"))
		return SubValue(s), err
	})
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		if c := msg.(value.Ctor); c.Name == "Attached" && c.Args[0].(value.Ctor).Name != "Ok" {
			return nil, fmt.Errorf("attach failed: %s", value.Show(c))
		}
		return pair(model.(int64)+1, Cmd{}), nil
	})
	attached := fn1("Attached", func(r value.Value) (value.Value, error) { return ctor("Attached", r), nil })
	_, err := run(t, context.Background(), Program{Init: initWith(int64(0), PerformCmd(attach, attached)), Update: update, Subscriptions: subs}, Options{NewTicker: clock.NewTicker})
	if err != nil {
		t.Fatal(err)
	}
}

// foreverProgram ticks forever; each Tick performs a Task that blocks until
// release is closed. It counts applied results in results.
func foreverProgram(clock *manualClock, release chan struct{}, started chan struct{}, results *atomic.Int32) Program {
	slow := value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		close(started)
		<-release
		return int64(7), nil
	})}
	subs := fn1("subscriptions", func(value.Value) (value.Value, error) {
		s, err := EverySub(1000, ctor("Tick"))
		return SubValue(s), err
	})
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		if c := msg.(value.Ctor); c.Name == "Tick" && model.(int64) == 0 {
			return pair(int64(1), PerformCmd(slow, fn1("Done", func(r value.Value) (value.Value, error) { return ctor("Done", r), nil }))), nil
		}
		results.Add(1)
		return pair(model.(int64)+1, Cmd{}), nil
	})
	return Program{Init: initWith(int64(0), Cmd{}), Update: update, Subscriptions: subs, View: showView}
}

func TestStopWaitsForTheCommandInFlight(t *testing.T) {
	for _, how := range []string{"context", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			clock := &manualClock{}
			release, started := make(chan struct{}), make(chan struct{})
			var results atomic.Int32
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			var out string
			go func() {
				var err error
				out, err = run(t, ctx, foreverProgram(clock, release, started, &results), Options{NewTicker: clock.NewTicker, StopSignals: []os.Signal{syscall.SIGTERM}})
				done <- err
			}()
			clock.tick(t, time.Second, time.Now())
			<-started
			if how == "context" {
				cancel()
			} else {
				waitFor(t, "the stop signal handler", func() bool { return clock.started() == 1 })
				if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case err := <-done:
				t.Fatalf("Run returned (%v) before the command in flight finished", err)
			case <-time.After(50 * time.Millisecond):
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if results.Load() != 1 || !strings.HasSuffix(out, "model: 2\n") {
				t.Fatalf("results applied %d, output %q", results.Load(), out)
			}
			if len(clock.live()) != 0 {
				t.Fatal("a ticker is still running after the stop")
			}
		})
	}
}

func TestProgramErrorsEndTheLoop(t *testing.T) {
	cases := []struct {
		name string
		p    Program
		want string
	}{
		{"init not a pair", Program{Init: fn1("init", func(value.Value) (value.Value, error) { return int64(1), nil }), Update: showView},
			"App init expects to return a ( model, Cmd msg ) pair, but got 1 (Int)"},
		{"view not a string", Program{Init: initWith(int64(0), Cmd{}), Update: showView, View: fn1("view", func(m value.Value) (value.Value, error) { return m, nil })},
			"App view expects a String, but got 0 (Int)"},
		{"sub not a Sub", Program{Init: initWith(int64(0), Cmd{}), Update: showView, Subscriptions: fn1("subs", func(m value.Value) (value.Value, error) { return "x", nil })},
			"App subscriptions expects a Sub (Sub.none, Sub.batch or Sub.every), but got \"x\" (String)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := run(t, context.Background(), c.p, Options{})
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestRuntimeErrorInsideAPerformedTaskEndsTheLoop(t *testing.T) {
	bug := value.Task{T: task.Fail[value.Value](&value.RuntimeError{Message: "case matched nothing"})}
	p := Program{Init: initWith(int64(0), PerformCmd(bug, fn1("Got", func(r value.Value) (value.Value, error) { return r, nil }))), Update: showView}
	if _, err := run(t, context.Background(), p, Options{}); err == nil || !strings.Contains(err.Error(), "case matched nothing") {
		t.Fatalf("error %v", err)
	}
}

func TestEveryRejectsANonPositiveInterval(t *testing.T) {
	if _, err := EverySub(0, ctor("Tick")); err == nil || !strings.Contains(err.Error(), "got 0") {
		t.Fatalf("error %v", err)
	}
}

func TestEOFWaitsForCommandsInFlightAndStopsTickers(t *testing.T) {
	clock := &manualClock{}
	release := make(chan struct{})
	slow := value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		<-release
		return "done", nil
	})}
	subs := fn1("subscriptions", func(value.Value) (value.Value, error) {
		s, err := EverySub(1000, ctor("Tick"))
		return SubValue(s), err
	})
	update := fn2("update", func(msg, model value.Value) (value.Value, error) {
		if msg == "go" {
			return pair("working", PerformCmd(slow, fn1("Done", func(r value.Value) (value.Value, error) { return ctor("Done", r), nil }))), nil
		}
		if c, ok := msg.(value.Ctor); ok && c.Name == "Done" {
			return pair("finished", Cmd{}), nil
		}
		return pair(model, Cmd{}), nil
	})
	p := Program{Init: initWith("idle", Cmd{}), Update: update, View: showView, Subscriptions: subs,
		Input: fn1("input", func(s value.Value) (value.Value, error) { return s, nil })}
	done := make(chan error, 1)
	var out string
	go func() {
		var err error
		out, err = run(t, context.Background(), p, Options{Stdin: strings.NewReader("go\n"), NewTicker: clock.NewTicker})
		done <- err
	}()
	// EOF follows "go" at once; the ticker stops at EOF while the command
	// is still in flight, and the loop waits for the command.
	waitFor(t, "the ticker to stop at EOF", func() bool { return clock.started() == 1 && len(clock.live()) == 0 })
	select {
	case err := <-done:
		t.Fatalf("Run returned (%v) with a command in flight", err)
	default:
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if want := "model: \"idle\"\nmodel: \"working\"\nmodel: \"finished\"\n"; out != want {
		t.Fatalf("output %q, want %q", out, want)
	}
}
