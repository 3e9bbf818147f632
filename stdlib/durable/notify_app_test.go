package durable

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/app"
	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// TestHintWakesAnIdleAppWorker runs a worker on the TEA loop whose only
// ticker fires once an hour: a run started (and later signalled) while it is
// idle is advanced within seconds, so only the NOTIFY hint can have woken it.
func TestHintWakesAnIdleAppWorker(t *testing.T) {
	url := dbtest.URL(t, "hintapp")
	d, err := db.Open(context.Background(), "postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := durable.New(d, durable.Options{})
	ctx := context.Background()
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	wf := durable.Register("approval", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.AwaitSignal(c, codec.String, "approved")
	})
	defs := []durable.Workflow{wf.Erase()}

	pollTask := value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		wakeAppOnHints(ctx, d)
		return e.Poll(ctx, defs)
	})}
	fn := func(arity int, f func(a []value.Value) (value.Value, error)) value.Value {
		return value.NewFunc("f", arity, f)
	}
	polled := fn(1, func(a []value.Value) (value.Value, error) { return value.Ctor{Name: "Polled", Args: a}, nil })
	poll := app.CmdValue(app.PerformCmd(pollTask, polled))
	none := app.CmdValue(app.Cmd{})
	// The model is the number of polls that did work.
	prog := app.Program{
		Init: fn(1, func([]value.Value) (value.Value, error) { return value.Tuple{int64(0), poll}, nil }),
		Update: fn(2, func(a []value.Value) (value.Value, error) {
			n := a[1].(int64)
			switch m := a[0].(value.Ctor); m.Name {
			case "Tick":
				return value.Tuple{n, poll}, nil
			case "Polled":
				if r := m.Args[0].(value.Ctor); r.Name == "Ok" && r.Args[0] == true {
					return value.Tuple{n + 1, poll}, nil
				}
			}
			return value.Tuple{n, none}, nil
		}),
		Subscriptions: fn(1, func([]value.Value) (value.Value, error) {
			s, err := app.EverySub(3_600_000, value.Ctor{Name: "Tick"})
			return app.SubValue(s), err
		}),
	}
	var reportsMu sync.Mutex
	var reports []string
	report := func(s string) { reportsMu.Lock(); reports = append(reports, s); reportsMu.Unlock() }
	loopCtx, stop := context.WithCancel(WithHintSettings(ctx, durable.HintSettings{URL: url, Report: report}))
	done := make(chan error, 1)
	go func() { done <- app.Run(loopCtx, prog, app.Options{Stdout: io.Discard, Stderr: io.Discard}) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("app.Run: %v", err)
		}
	}()

	status := func(id string) (bool, string) {
		r, _, err := e.Describe(ctx, id)
		if err != nil {
			return false, err.Error()
		}
		return true, string(r.Status)
	}
	awaitStatus := func(id, want string) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			if ok, s := status(id); ok && s == want {
				return
			}
			if time.Now().After(deadline) {
				_, s := status(id)
				reportsMu.Lock()
				defer reportsMu.Unlock()
				t.Fatalf("run %s is %s, want %s (the hourly tick cannot have done it; listener reports: %v)", id, s, want, reports)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if err := durable.Start(ctx, e, wf, "r1", "in"); err != nil {
		t.Fatal(err)
	}
	// Parked on its signal means a poll claimed it: woken by the start.
	deadline := time.Now().Add(15 * time.Second)
	for {
		r, _, err := e.Describe(ctx, "r1")
		if err == nil && r.Status == durable.StatusWaiting && r.Attempts == 0 && r.WaitingSignal != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("run r1 was not claimed after its start: %+v %v", r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := durable.SignalValue(ctx, e, "r1", "approved", codec.String, "yes"); err != nil {
		t.Fatal(err)
	}
	awaitStatus("r1", string(durable.StatusDone))
}
