package main

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// red is a terminal escape sequence a program could store in a workflow
// name, a step id or an error's text.
const red = "\x1b[31m"

// TestDurableCLIQuotesControlCharacters: ls, show and stats print a run
// whose workflow name, step id, input and error carry an escape sequence with
// the sequence quoted (no raw ESC reaches the terminal), and the tab and
// line break of the error as \t and \n, on both stores;
// --json keeps the exact values. The engine refuses control characters in
// names (durable's validate.go), so the names are written into the rows
// directly, as an older version or another tool may have left them.
func TestDurableCLIQuotesControlCharacters(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, d, e := cliEngine(t, driver, "safe-test")
			evil := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "evil", codec.String, codec.String,
				func(c *durable.Ctx, in string) task.Task[string] {
					ok := durable.Step(c, codec.String, "fine", task.Succeed(in))
					return task.AndThen(ok, func(string) task.Task[string] {
						return durable.Step(c, codec.String, "charge", task.Fail[string](task.Errorf(task.Unavailable, "boom "+red+"\u009b2J\tand\nmore")))
					})
				})
			id := "run-1" // run ids refuse control characters (StartJSON)
			if err := e.StartJSON(ctx, evil.Erase(), id, `"in`+"\x7f"+`"`); err != nil {
				t.Fatal(err)
			}
			drainRuns(t, e, evil.Erase())
			if _, err := d.Exec(ctx, "UPDATE _sky_durable_runs SET workflow = ? WHERE id = ?", "evil"+red+"name", id); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Exec(ctx, "UPDATE _sky_durable_journal SET step_id = ? WHERE run_id = ? AND step_id = 'fine'", "fine"+red+"step", id); err != nil {
				t.Fatal(err)
			}
			cli := func(args ...string) string {
				t.Helper()
				code, out := runDurableOn(dsn, "", args...)
				if code != exitOK {
					t.Fatalf("sky durable %v = %d: %s", args, code, out)
				}
				return out
			}
			for _, args := range [][]string{{"ls"}, {"show", id}, {"stats"}} {
				out := cli(args...)
				if strings.ContainsAny(out, "\x1b\x7f\u009b") {
					t.Errorf("sky durable %s printed a raw control character:\n%q", args[0], out)
				}
				if !strings.Contains(out, `evil\x1b[31mname`) {
					t.Errorf("sky durable %s does not show the quoted workflow name:\n%s", args[0], out)
				}
			}
			show := cli("show", id)
			for _, want := range []string{`fine\x1b[31mstep`, `"in\x7f"`} {
				if !strings.Contains(show, want) {
					t.Errorf("show lacks %s:\n%s", want, show)
				}
			}
			// The error's text, on one line in ls, in show's error field
			// and in its history line.
			escaped := `boom \x1b[31m\u009b2J\tand\nmore`
			if ls := cli("ls"); !strings.Contains(ls, escaped) {
				t.Errorf("ls does not escape the error's text as %s:\n%s", escaped, ls)
			}
			if n := strings.Count(show, escaped); n != 2 {
				t.Errorf("show has %s %d times, want 2 (its error field and its history line):\n%s", escaped, n, show)
			}
			if js := cli("show", id, "--json"); !strings.Contains(js, `"workflow": "evil\u001b[31mname"`) || !strings.Contains(js, "\u009b2J") {
				t.Errorf("show --json does not keep the exact values:\n%s", js)
			}
		})
	}
}
