package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestDurableBulkCLI: `sky durable retry|cancel|release` with filters, on
// both stores: the count, --dry-run, the refusal without a terminal or
// --yes, the exit codes of usage errors, and the confirmation a terminal
// answers.
func TestDurableBulkCLI(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, _, e := cliEngine(t, driver, "bulk-test")
			broken := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "broken", codec.String, codec.String,
				func(c *durable.Ctx, in string) task.Task[string] {
					return durable.Step(c, codec.String, "charge", task.Fail[string](task.Errorf(task.Unavailable, "down in %s", in)))
				})
			for i := range 5 {
				if err := e.StartJSON(ctx, broken.Erase(), fmt.Sprintf("b-%d", i), fmt.Sprintf(`"r%d"`, i%2)); err != nil {
					t.Fatal(err)
				}
			}
			drainRuns(t, e, broken.Erase())
			dead := func() int64 {
				n, err := e.CountBulk(ctx, durable.BulkRetry, durable.BulkFilter{Statuses: []durable.Status{durable.StatusDead}})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			cli := func(wantCode int, args ...string) string {
				t.Helper()
				code, out := runDurableOn(dsn, "y\n", args...)
				if code != wantCode {
					t.Fatalf("sky durable %v = %d, want %d:\n%s", args, code, wantCode, out)
				}
				return out
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"retry", "b-1", "--status", "dead"}, "not both"},
				{[]string{"retry"}, "needs a run id or filters"},
				{[]string{"cancel", "b-1", "--dry-run"}, "--dry-run goes with filters, and an id alone would act"},
				{[]string{"retry", "--dry-run"}, "--dry-run counts the runs filters match, but no filter was given; hint: sky durable retry --status failed --dry-run"},
				{[]string{"retry", "--status", "waiting", "--yes"}, `retry applies to failed and dead runs, not "waiting"`},
				{[]string{"release", "--status", "dead,bogus", "--yes"}, `--status "bogus" is not a run status`},
				{[]string{"retry", "--created-after", "soon", "--yes"}, `--created-after "soon" is neither a time nor an age`},
				{[]string{"retry", "--status", "dead"}, "stdin is not a terminal"}, // a strings.Reader is no terminal
				// An empty value (an unset shell variable) is no filter left out:
				// it would widen the action to every workflow.
				{[]string{"retry", "--workflow", "", "--status", "dead", "--yes"}, "--workflow is empty"},
				{[]string{"cancel", "--parent=", "--yes"}, "--parent is empty"},
			} {
				if out := cli(exitNoBuild, c.args...); !strings.Contains(out, c.want) {
					t.Errorf("sky durable %v lacks %q:\n%s", c.args, c.want, out)
				}
			}
			if n := dead(); n != 5 {
				t.Fatalf("the refused commands changed runs: %d dead, want 5", n)
			}
			if out := cli(exitOK, "retry", "--workflow", "broken", "--dry-run"); !strings.Contains(out, "5 runs to retry\ndry run: nothing changed") {
				t.Errorf("--dry-run printed:\n%s", out)
			}

			// A terminal's answer: no keeps everything, yes acts.
			var out, ask bytes.Buffer
			b := &bulkFlags{errorText: "down in r1", stdin: strings.NewReader("n\n"), terminal: true}
			if err := durableBulk(ctx, e, durable.BulkRetry, b, &out, &ask); err == nil || !strings.Contains(err.Error(), "not confirmed") {
				t.Errorf("answering n = %v", err)
			}
			if ask.String() != "retry 2 runs? [y/N] " || dead() != 5 {
				t.Errorf("asked %q, %d dead runs left; want the question and 5", ask.String(), dead())
			}
			b.stdin = strings.NewReader("yes\n")
			if err := durableBulk(ctx, e, durable.BulkRetry, b, &out, &ask); err != nil || dead() != 3 {
				t.Errorf("answering yes = %v, %d dead runs left, want 3:\n%s", err, dead(), out.String())
			}
			if got := cli(exitOK, "retry", "--status", "dead", "--created-before", "2999-01-01T00:00:00Z", "--yes"); !strings.Contains(got, "3 runs to retry\nretried 3 runs (due now with their attempts reset, journals kept) in 1 batch\n") {
				t.Errorf("retry --yes printed:\n%s", got)
			}
			if got := cli(exitOK, "cancel", "--parent", "nobody", "--yes"); !strings.Contains(got, "0 runs to cancel") {
				t.Errorf("cancel of no run printed:\n%s", got)
			}
			// One walk per status: waiting, running and failed, one batch each.
			if got := cli(exitOK, "cancel", "--created-after", "1h", "--yes"); !strings.Contains(got, "cancelled 5 runs (with their unfinished children) in 3 batches\n") {
				t.Errorf("cancel of the runs of the last hour printed:\n%s", got)
			}
		})
	}
}

// TestNullDeviceIsNoTerminal: a bulk action whose stdin is /dev/null (cron,
// systemd, docker without -i) is refused with the --yes hint (exit 2), as
// from a pipe, rather than asked a question nobody answers.
func TestNullDeviceIsNoTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("isTerminal(%s) = true, want false", os.DevNull)
	}
}
