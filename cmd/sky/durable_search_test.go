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

// TestDurableLsSearch: `sky durable ls --search TEXT` on both stores finds
// runs by input, output and last error, any case, pages with --before, and
// refuses a text too short to search.
func TestDurableLsSearch(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, _, e := cliEngine(t, driver, "search-test")
			greet := durable.RegisterWith(durable.RetryPolicy{MaxAttempts: 1}, "greet", codec.String, codec.String,
				func(c *durable.Ctx, in string) task.Task[string] {
					if strings.HasPrefix(in, "bounce") {
						return durable.Step(c, codec.String, "mail", task.Fail[string](task.Errorf(task.Unavailable, "mailbox full for %s", in)))
					}
					return durable.Step(c, codec.String, "mail", task.Succeed("receipt for "+in))
				})
			for _, r := range [][2]string{{"g-1", `"alice@example.com"`}, {"g-2", `"bob@example.com"`}, {"g-3", `"bounce-carol@example.com"`}} {
				if err := e.StartJSON(ctx, greet.Erase(), r[0], r[1]); err != nil {
					t.Fatal(err)
				}
			}
			drainRuns(t, e, greet.Erase())
			// Not yet run: found among the unfinished runs.
			if err := e.StartJSON(ctx, greet.Erase(), "g-4", `"dave@example.com"`); err != nil {
				t.Fatal(err)
			}
			ls := func(wantCode int, args ...string) string {
				t.Helper()
				code, out := runDurableOn(dsn, "", append([]string{"ls"}, args...)...)
				if code != wantCode {
					t.Fatalf("sky durable ls %v = %d, want %d:\n%s", args, code, wantCode, out)
				}
				return out
			}
			ids := func(out string) []string {
				var found []string
				for _, id := range []string{"g-1", "g-2", "g-3", "g-4"} {
					if strings.Contains(out, id) {
						found = append(found, id)
					}
				}
				return found
			}
			for _, c := range []struct {
				text string
				want []string
			}{
				{"ALICE@", []string{"g-1"}},          // input, any case
				{"RECEIPT for bob", []string{"g-2"}}, // output
				{"Mailbox Full", []string{"g-3"}},    // last error
				{"dave", []string{"g-4"}},            // a waiting run
				{"example.com", []string{"g-1", "g-2", "g-3", "g-4"}},
				{"nobody@", nil},
			} {
				if got := ids(ls(exitOK, "--search", c.text)); strings.Join(got, ",") != strings.Join(c.want, ",") {
					t.Errorf("ls --search %q listed %v, want %v", c.text, got, c.want)
				}
			}
			first := ls(exitOK, "--search", "example", "--limit", "2")
			if got := ids(first); strings.Join(got, ",") != "g-3,g-4" || !strings.Contains(first, "--before g-3") {
				t.Errorf("the first page of 2 listed %v:\n%s", got, first)
			}
			if got := ids(ls(exitOK, "--search", "example", "--limit", "2", "--before", "g-3")); strings.Join(got, ",") != "g-1,g-2" {
				t.Errorf("the second page listed %v, want g-1,g-2", got)
			}
			if out := ls(exitOK, "--search", "bounce", "--json"); !strings.Contains(out, `"id": "g-3"`) && !strings.Contains(out, `"id":"g-3"`) {
				t.Errorf("ls --search --json lacks g-3:\n%s", out)
			}
			out := ls(exitFailure, "--search", "ab")
			if !strings.Contains(out, `the search text "ab" is shorter than 3 characters`) || !strings.Contains(out, "hint:") {
				t.Errorf("ls --search ab printed:\n%s", out)
			}
		})
	}
}
