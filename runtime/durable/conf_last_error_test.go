package durable

import (
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestLastErrorFormats pins what docs/durable.md ("What last_error says")
// promises: a failure of the body is stored as Sky's Error.toString,
// "Kind: message", a permanent one followed by the permanent note; the
// engine's own reasons, here FailSafe's missing version, are sentences
// without a kind.
func TestLastErrorFormats(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		failing := func(name string, err error) Def[string, string] {
			return Register(name, str, str, func(c *Ctx, in string) task.Task[string] { return task.Fail[string](err) })
		}
		transient := failing("transient", task.New(task.Unavailable, "bank offline"))
		permanent := failing("permanent", task.New(task.NotFound, "no order 42"))
		h.start(transient, "t", "x")
		h.start(permanent, "p", "x")
		h.drain(h.e, transient.Erase(), permanent.Erase())
		if got := h.wantStatus("t", StatusFailed).LastError; got != "Unavailable: bank offline" {
			t.Errorf("a failed attempt's last_error is %q, want %q", got, "Unavailable: bank offline")
		}
		if got, want := h.wantStatus("p", StatusDead).LastError, "NotFound: no order 42 (a permanent error: the run is not retried)"; got != want {
			t.Errorf("a permanent failure's last_error is %q, want %q", got, want)
		}

		h.start(transient.Versioned(2), "v", "x")
		if _, err := h.e.PollWith(h.ctx, []Workflow{transient.Erase()}, PollOptions{Versions: FailSafe}); err != nil {
			t.Fatal(err)
		}
		if got := h.wantStatus("v", StatusFailed).LastError; !strings.HasPrefix(got, "workflow transient version 2 is not registered in this worker (it has 1); hint: ") {
			t.Errorf("FailSafe's last_error is %q, want the sentence of docs/durable.md", got)
		}
	})
}
