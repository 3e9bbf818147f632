package durabletest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

const day = 24 * time.Hour

func TestAdvanceFiresEveryTimerOnTheWay(t *testing.T) {
	ctx := context.Background()
	wf := durable.Register("reminders", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return task.AndThen(durable.Sleep(c, (30*day).Milliseconds()), func(struct{}) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "first", task.Succeed("1")), func(a string) task.Task[string] {
				return task.AndThen(durable.Sleep(c, day.Milliseconds()), func(struct{}) task.Task[string] {
					return durable.Step(c, codec.String, "second", task.Succeed(a+"2"))
				})
			})
		})
	})
	h, err := New(ctx, []durable.Workflow{wf.Erase()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.Start(ctx, wf.Erase(), "r", `"x"`); err != nil {
		t.Fatal(err)
	}
	if err := h.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	wantRun(t, h, "r", durable.StatusWaiting, "")
	if err := h.Advance(ctx, 30*day-time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wantRun(t, h, "r", durable.StatusWaiting, "")
	// Both the 30-day sleep and the 1-day sleep it leads to end in here.
	if err := h.Advance(ctx, day+time.Millisecond); err != nil {
		t.Fatal(err)
	}
	wantRun(t, h, "r", durable.StatusDone, `"12"`)
	if got, want := h.Now(), Epoch.Add(31*day); !got.Equal(want) {
		t.Errorf("clock %s, want %s", got, want)
	}
	if err := h.Advance(ctx, -time.Second); err == nil {
		t.Error("moving the clock back succeeded")
	}
}

func wantRun(t *testing.T, h *Harness, runID string, status durable.Status, output string) {
	t.Helper()
	r, _, err := h.Describe(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != status || r.Output != output {
		t.Fatalf("run %s is %s with output %q (last error %q), want %s with %q", runID, r.Status, r.Output, r.LastError, status, output)
	}
}

// chargeWorkflow counts its plain step "quote" in *quotes and inserts a
// charges row in step "charge": inside the step's transaction when honest,
// on a context that escapes it (so it commits on its own) when not.
func chargeWorkflow(quotes *int, honest bool) durable.Workflow {
	return durable.Register("checkout", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		quote := durable.Step(c, codec.String, "quote", task.From(func(context.Context) (string, error) {
			*quotes++
			return "q", nil
		}))
		return task.AndThen(quote, func(q string) task.Task[string] {
			charge := durable.Step(c, codec.String, "charge", task.From(func(ctx context.Context) (string, error) {
				if !honest {
					ctx = context.Background()
				}
				_, err := c.DB().Exec(ctx, `INSERT INTO charges (run_id) VALUES (?)`, c.RunID())
				return "c", err
			}))
			return task.AndThen(charge, func(ch string) task.Task[string] {
				return task.Map(durable.AwaitSignal(c, codec.String, "settled"), func(s string) string { return q + ch + s })
			})
		})
	}).Erase()
}

func checkoutScript(w durable.Workflow) Script {
	return func(ctx context.Context, h *Harness) error {
		if _, err := h.DB().ExecRaw(ctx, `CREATE TABLE charges (run_id TEXT NOT NULL)`); err != nil {
			return err
		}
		if err := h.Start(ctx, w, "order-1", `"book"`); err != nil {
			return err
		}
		if err := h.Drain(ctx); err != nil {
			return err
		}
		if err := h.Signal(ctx, "order-1", "settled", `"s"`); err != nil {
			return err
		}
		return h.Drain(ctx)
	}
}

func TestCrashEverywhereOnACorrectWorkflow(t *testing.T) {
	var quotes int
	w := chargeWorkflow(&quotes, true)
	rep, err := CrashEverywhere(context.Background(), w, "order-1", checkoutScript(w))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"quote", "charge", "signal:settled"}, rep.Journal); diff != "" {
		t.Errorf("crash-free journal (-want +got):\n%s", diff)
	}
	if rep.Status != durable.StatusDone || rep.Output != `"qcs"` {
		t.Errorf("crash-free run %s with %s, want done with \"qcs\"", rep.Status, rep.Output)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("failures on a correct workflow:\n%s", strings.Join(f, "\n"))
	}
	var names, twice []string
	for _, p := range rep.Points {
		names = append(names, p.Name())
		if !p.OutputMatched {
			t.Errorf("%s: the output did not match", p.Name())
		}
		if len(p.RanTwice) > 0 {
			twice = append(twice, p.Name()+": "+strings.Join(p.RanTwice, ","))
		}
	}
	wantNames := []string{
		`crash before the effect of step "quote"`,
		`crash after the effect of step "quote", before its journal commit`,
		`crash after the journal commit of step "quote"`,
		`crash before the effect of step "charge"`,
		`crash after the effect of step "charge", before its journal commit`,
		`crash after the journal commit of step "charge"`,
		`crash after the effect of signal "signal:settled", before its journal commit`,
		`crash after the journal commit of signal "signal:settled"`,
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("crash points (-want +got):\n%s", diff)
	}
	// Only a crash between the plain step's effect and its commit runs it
	// again; the transactional step rolls back instead.
	if diff := cmp.Diff([]string{`crash after the effect of step "quote", before its journal commit: quote`}, twice); diff != "" {
		t.Errorf("steps that ran twice (-want +got):\n%s", diff)
	}
}

func TestCrashEverywhereFindsAnEffectThatCommitsTwice(t *testing.T) {
	var quotes int
	w := chargeWorkflow(&quotes, false)
	rep, err := CrashEverywhere(context.Background(), w, "order-1", checkoutScript(w))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`crash after the effect of step "charge", before its journal commit: after the commit of step "charge" (journal position 2) the database differs from the crash-free run: table charges has 2 rows, the crash-free run has 1; row {run_id="order-1"} is not in the crash-free run`,
	}
	if diff := cmp.Diff(want, rep.Failures()); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

func TestCrashEverywhereNeedsTheRun(t *testing.T) {
	w := chargeWorkflow(new(int), true)
	_, err := CrashEverywhere(context.Background(), w, "order-2", checkoutScript(w))
	if err == nil || !strings.Contains(err.Error(), `never started run "order-2"`) {
		t.Errorf("error %v, want one saying the script never started order-2", err)
	}
	_, err = CrashEverywhere(context.Background(), w, "order-1", func(context.Context, *Harness) error {
		return task.Errorf(task.InvalidInput, "no script")
	})
	if err == nil || !strings.Contains(err.Error(), "no script") {
		t.Errorf("error %v, want the script's", err)
	}
}

// TestCrashEverywhereGivesBackTheRateToken: a crash's lost claim costs no
// rate-limit token, so the resumed run is claimed at once, as the crash-free
// run was, both on its first claim (the limit unused) and on a later one
// (after a sleep); the script only drains, never moving the clock to the
// next token.
func TestCrashEverywhereGivesBackTheRateToken(t *testing.T) {
	w := durable.RegisterWithLimits(durable.Limits{RatePerSecond: 1}, nil, durable.DefaultRetryPolicy, "rated", codec.String, codec.String,
		func(c *durable.Ctx, in string) task.Task[string] {
			return task.AndThen(durable.Step(c, codec.String, "a", task.Succeed(in)), func(a string) task.Task[string] {
				return task.AndThen(durable.Sleep(c, 2000), func(struct{}) task.Task[string] {
					return durable.Step(c, codec.String, "b", task.Succeed(a+"b"))
				})
			})
		}).Erase()
	script := func(ctx context.Context, h *Harness) error {
		if err := h.Start(ctx, w, "r", `"x"`); err != nil {
			return err
		}
		if err := h.Drain(ctx); err != nil {
			return err
		}
		return h.Advance(ctx, 2*time.Second)
	}
	rep, err := CrashEverywhere(context.Background(), w, "r", script)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != durable.StatusDone || rep.Output != `"xb"` {
		t.Errorf("crash-free run %s with %s, want done with \"xb\"", rep.Status, rep.Output)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("failures on a correct rate-limited workflow:\n%s", strings.Join(f, "\n"))
	}
}

// TestCrashEverywhereNeedsTheChildrensWorkflows: a child whose workflow
// the harness does not poll never runs, so the crash-free and the crashed
// runs would agree on a parent stuck waiting; that is an error naming the
// child's workflow, and passing it makes the report.
func TestCrashEverywhereNeedsTheChildrensWorkflows(t *testing.T) {
	child := durable.Register("child", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "work", task.Succeed("child "+in))
	})
	parent := durable.Register("parent", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return task.AndThen(durable.StartChild(c, child, "one", in), func(struct{}) task.Task[string] {
			return durable.AwaitChild(c, child, "one")
		})
	})
	script := func(ctx context.Context, h *Harness) error {
		if err := h.Start(ctx, parent.Erase(), "p", `"x"`); err != nil {
			return err
		}
		return h.Drain(ctx)
	}
	_, err := CrashEverywhereWith(context.Background(), SQLiteCopies(), []durable.Workflow{parent.Erase()}, "p", script)
	if err == nil || !strings.Contains(err.Error(), `run "p" starts a child of workflow "child", which the harness does not poll`) ||
		!strings.Contains(err.Error(), "hint: ") {
		t.Errorf("error %v, want one naming the child's workflow with a hint", err)
	}
	rep, err := CrashEverywhereWith(context.Background(), SQLiteCopies(), []durable.Workflow{parent.Erase(), child.Erase()}, "p", script)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Status != durable.StatusDone || rep.Output != `"child x"` {
		t.Errorf("crash-free run %s with %s, want done with \"child x\"", rep.Status, rep.Output)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Errorf("failures:\n%s", strings.Join(f, "\n"))
	}
}
