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

// TestDurableCountsOfOneAreSingular: show, signals --orphans, ls, compact
// and a bulk cancel say "1 entry", "1 event", "1 orphan signal", "1 run"
// ("with its unfinished children"), and keep
// the plural for other counts, on both stores.
func TestDurableCountsOfOneAreSingular(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, _, e := cliEngine(t, driver, "plural-test")
			greetDone(t, e, "g-1", "g-2")
			for _, id := range []string{"nobody-1", "nobody-2"} {
				if err := e.Signal(ctx, id, "go", `1`); err != nil {
					t.Fatal(err)
				}
			}
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"show", "g-1"}, "\njournal (1 entry):\n"},
				{[]string{"show", "g-1"}, "\nhistory (1 event):\n"},
				{[]string{"signals", "--orphans", "--limit", "1"}, "note: showing the oldest 1 orphan signal of more; use --limit N for more\n"},
				{[]string{"ls", "--limit", "1"}, "note: showing 1 run of more;"},
				{[]string{"compact", "--older-than", "0s"}, "compacted 2 runs finished more than 0s ago: deleted "},
			} {
				code, out := runDurableOn(dsn, "", c.args...)
				if code != exitOK || !strings.Contains(out, c.want) {
					t.Errorf("sky durable %s: exit %d, want 0 with %q; got:\n%s", strings.Join(c.args, " "), code, c.want, out)
				}
			}
			greetDone(t, e, "g-3")
			if code, out := runDurableOn(dsn, "", "compact", "--older-than", "0s"); code != exitOK || !strings.Contains(out, "compacted 1 run finished more than 0s ago: deleted 1 journal and signal row in 1 batch") {
				t.Errorf("compact of one run: exit %d:\n%s", code, out)
			}
			later := durable.Register("later", codec.String, codec.String,
				func(c *durable.Ctx, in string) task.Task[string] { return task.Succeed(in) })
			if err := e.StartJSON(ctx, later.Erase(), "l-1", `"x"`); err != nil {
				t.Fatal(err)
			}
			if code, out := runDurableOn(dsn, "", "cancel", "--workflow", "later", "--yes"); code != exitOK || !strings.Contains(out, "1 run to cancel\ncancelled 1 run (with its unfinished children) in 3 batches\n") {
				t.Errorf("bulk cancel of one run: exit %d:\n%s", code, out)
			}
		})
	}
}
