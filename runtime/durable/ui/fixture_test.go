package ui

import (
	"context"
	"net/http/httptest"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// xss is a payload that must reach every page as text, never as markup.
const xss = `<script>document.title='pwned'</script>`

// fixture is a dashboard over a database holding one run of each kind the
// pages show: waiting on a signal (its input is xss), done (its signal
// payload and output carry xss), and dead.
type fixture struct {
	t    *testing.T
	ctx  context.Context
	e    *durable.Engine
	defs []durable.Workflow
	srv  *httptest.Server
	ui   *Server
}

func newFixture(t *testing.T, d *db.DB, opts Options) *fixture {
	t.Helper()
	ctx := context.Background()
	e := durable.New(d, durable.Options{WorkerID: "ui-test"})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	checkout := durable.Register("checkout", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		reserve := durable.Step(c, codec.String, "reserve", task.Succeed("r:"+in))
		return task.AndThen(reserve, func(r string) task.Task[string] {
			return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(s string) task.Task[string] {
				return durable.Step(c, codec.String, "finish", task.Succeed(r+"/"+s))
			})
		})
	})
	broken := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "broken", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "charge", task.Fail[string](task.Errorf(task.Unavailable, "payment provider down <b>%s</b>", in)))
	})
	f := &fixture{t: t, ctx: ctx, e: e, defs: []durable.Workflow{checkout.Erase(), broken.Erase()}}
	for _, start := range []struct {
		def       durable.Workflow
		id, input string
	}{
		{checkout.Erase(), "order-1", `"` + xss + `"`},
		{checkout.Erase(), "order-2", `"two"`},
		{broken.Erase(), "broken-1", `"card-9"`},
	} {
		if err := e.StartJSON(ctx, start.def, start.id, start.input); err != nil {
			t.Fatal(err)
		}
	}
	f.drain()
	if err := e.Signal(ctx, "order-2", "go", `"`+xss+`"`); err != nil {
		t.Fatal(err)
	}
	f.drain()
	for id, want := range map[string]durable.Status{"order-1": durable.StatusWaiting, "order-2": durable.StatusDone, "broken-1": durable.StatusDead} {
		if got := f.status(id); got != want {
			t.Fatalf("fixture run %s is %s, want %s", id, got, want)
		}
	}
	if f.ui, _ = New(e, opts); f.ui == nil {
		t.Fatal("New failed")
	}
	f.srv = httptest.NewServer(f.ui)
	t.Cleanup(f.srv.Close)
	return f
}

// drain polls until no run is due.
func (f *fixture) drain() {
	f.t.Helper()
	for {
		worked, err := f.e.Poll(f.ctx, f.defs)
		if err != nil {
			f.t.Fatal(err)
		}
		if !worked {
			return
		}
	}
}

func (f *fixture) status(id string) durable.Status {
	f.t.Helper()
	r, _, err := f.e.Describe(f.ctx, id)
	if err != nil {
		f.t.Fatal(err)
	}
	return r.Status
}
