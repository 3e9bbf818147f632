package ui

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// holdRuns adds to f a run held by its key (k-2: k-1, of key a, is running
// until the returned function is called) and one held by a rate limit
// (h-2: h-1 took the hour's one claim).
func holdRuns(t *testing.T, f *fixture) (release func()) {
	t.Helper()
	hourly := durable.RegisterWithLimits(durable.Limits{RatePerSecond: 1.0 / 3600}, nil, durable.DefaultRetryPolicy, "hourly", codec.String, codec.String,
		func(c *durable.Ctx, in string) task.Task[string] { return task.Succeed(in) })
	entered, done := make(chan struct{}), make(chan struct{})
	send := durable.RegisterWithLimits(durable.Limits{PerKey: 1}, func(in string) (string, error) { return in, nil }, durable.DefaultRetryPolicy, "send", codec.String, codec.String,
		func(c *durable.Ctx, in string) task.Task[string] {
			return durable.Step(c, codec.String, "send", task.From(func(context.Context) (string, error) {
				close(entered)
				<-done
				return in, nil
			}))
		})
	for _, r := range []struct {
		def       durable.Workflow
		id, input string
	}{{hourly.Erase(), "h-1", `"x"`}, {hourly.Erase(), "h-2", `"y"`}, {send.Erase(), "k-1", `"a"`}, {send.Erase(), "k-2", `"a"`}} {
		if err := f.e.StartJSON(f.ctx, r.def, r.id, r.input); err != nil {
			t.Fatal(err)
		}
	}
	for _, def := range []durable.Workflow{hourly.Erase(), hourly.Erase()} {
		if _, err := f.e.Poll(f.ctx, []durable.Workflow{def}); err != nil {
			t.Fatal(err)
		}
	}
	polled := make(chan error, 1)
	go func() {
		_, err := f.e.Poll(f.ctx, []durable.Workflow{send.Erase()})
		polled <- err
	}()
	<-entered
	return func() {
		close(done)
		if err := <-polled; err != nil {
			t.Error(err)
		}
	}
}

// TestHeldRunPages: a due run a limit holds back is held, not stuck, on
// every page: the overview counts it apart from the oldest due run, the
// runs list and the run page say which limit holds it.
func TestHeldRunPages(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		release := holdRuns(t, f)
		defer release()
		f.page("/", `id="oldest-due">none due<`, `id="held">2 due runs are held by their workflows&#39; limits (claimed as they allow)<`,
			"not for a worker")
		list := f.page("/runs")
		for id, want := range map[string]string{"h-2": "held by rate limit", "k-2": "held by concurrency (key a)", "k-1": "running"} {
			row := regexp.MustCompile(`<a href="/runs/` + id + `">` + id + `</a>.*\n.*`).FindString(list)
			if !strings.Contains(row, "<td>"+want+"</td>") {
				t.Errorf("the runs list's row of %s reads %q, want %q in its wake column", id, row, want)
			}
		}
		f.page("/runs/k-2", `id="wake">held by concurrency (key a)<`)
		f.page("/runs/h-2", `id="wake">held by rate limit<`)
		f.page("/runs/k-1", `id="wake">running<`)
	})
}

// TestRunPageSaysWhenTheLeaseEnds: a running run's page says when its
// worker's lease ends, and once it has, that any worker may take the run
// over (the overview's "stuck past their lease" links there), in the words
// of `sky durable show`.
func TestRunPageSaysWhenTheLeaseEnds(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		f := newFixture(t, d, Options{})
		release := holdRuns(t, f)
		defer release()
		f.page("/runs/k-1", `id="expires">`, "renewed by its worker&#39;s heartbeat while it lives")
		if body := f.page("/runs/k-2"); strings.Contains(body, `id="expires"`) {
			t.Error("a waiting run's page shows a lease expiry")
		}
		later, err := New(f.e, Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(later)
		defer srv.Close()
		resp, err := http.Get(srv.URL + "/runs/k-1")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if want := "ago): its worker stopped renewing it, so any worker may take the run over; `sky durable release k-1` frees it now"; !strings.Contains(string(body), want) {
			t.Errorf("an hour later the run page of k-1 lacks %q:\n%s", want, body)
		}
	})
}
