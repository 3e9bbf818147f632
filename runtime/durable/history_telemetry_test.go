package durable_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestHistoryEventsAreSpanEvents: each event of an attempt is an event of
// the attempt's span (claimed, suspended, dead, done, with the worker, the
// detail and the step), and an operator's retry is an event of the
// operator's span.
func TestHistoryEventsAreSpanEvents(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, _ string, d *db.DB) {
		ctx := context.Background()
		fail := true
		w := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "evented", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.AwaitSignal(c, codec.String, "go"), func(s string) task.Task[string] {
				return durable.Step(c, codec.String, "charge", task.From(func(context.Context) (string, error) {
					if fail {
						fail = false
						return "", task.New(task.Unavailable, "provider down")
					}
					return s, nil
				}))
			})
		})
		o := newOtelEngine(t, d)
		if err := durable.Start(ctx, o.e, w, "r", ""); err != nil {
			t.Fatal(err)
		}
		poll := func() {
			t.Helper()
			if worked, err := o.e.Poll(ctx, []durable.Workflow{w.Erase()}); err != nil || !worked {
				t.Fatalf("poll = %v, %v", worked, err)
			}
		}
		poll()
		if err := o.e.Signal(ctx, "r", "go", `"x"`); err != nil {
			t.Fatal(err)
		}
		poll()
		opCtx, op := o.tp.Tracer("test").Start(ctx, "operator")
		if err := o.e.Retry(durable.WithActor(opCtx, "ann@box via sky durable"), "r"); err != nil {
			t.Fatal(err)
		}
		op.End()
		poll()

		var got []string
		for _, s := range o.spans.Ended() {
			if strings.HasPrefix(s.Name(), "durable attempt") || s.Name() == "operator" {
				for _, e := range s.Events() {
					got = append(got, s.Name()+": "+eventText(e))
				}
			}
		}
		worker := o.e.WorkerID()
		want := []string{
			"durable attempt evented: durable.claimed durable.actor=" + worker,
			"durable attempt evented: durable.suspended durable.actor=" + worker + ` durable.detail=signal "go"`,
			"durable attempt evented: durable.claimed durable.actor=" + worker,
			"durable attempt evented: durable.dead durable.actor=" + worker + " durable.detail=Unavailable: provider down durable.step_id=charge",
			"operator: durable.retried durable.run_id=r durable.actor=ann@box via sky durable durable.detail=",
			"durable attempt evented: durable.claimed durable.actor=" + worker,
			"durable attempt evented: durable.done durable.actor=" + worker,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("span events (-want +got):\n%s", diff)
		}
	})
}

func eventText(e sdktrace.Event) string {
	s := e.Name
	for _, kv := range e.Attributes {
		s += fmt.Sprintf(" %s=%s", kv.Key, kv.Value.String())
	}
	return s
}
