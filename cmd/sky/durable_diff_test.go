package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/codec"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// TestDurableDiffOfCompactedRuns: `sky durable diff` of two runs with the
// same journal says identical; once a run's journal is compacted it says
// which run's was and that the journals were not compared, never
// identical (text and --json), exit 0, on both stores.
func TestDurableDiffOfCompactedRuns(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, _, e := cliEngine(t, driver, "diff-test")
			greetDone(t, e, "a-1", "b-1")
			diff := func(args ...string) string {
				t.Helper()
				code, out := runDurableOn(dsn, "", append([]string{"diff", "a-1", "b-1"}, args...)...)
				if code != exitOK {
					t.Fatalf("sky durable diff a-1 b-1 %v = %d, want 0:\n%s", args, code, out)
				}
				return out
			}
			if out := diff(); !strings.HasSuffix(out, "\nidentical\n") {
				t.Fatalf("diff of two runs with the same journal:\n%s", out)
			}

			if _, err := e.Compact(ctx, "b-1"); err != nil {
				t.Fatal(err)
			}
			out := diff()
			if strings.Contains(out, "identical") || strings.Contains(out, "only-a") ||
				!strings.Contains(out, "journals not compared: run b-1 was compacted at ") || strings.Contains(out, "run a-1 was compacted") {
				t.Errorf("diff with b-1 compacted does not say b-1's journal was compacted (and only that):\n%s", out)
			}
			if _, err := e.Compact(ctx, "a-1"); err != nil {
				t.Fatal(err)
			}
			out = diff()
			if strings.Contains(out, "identical") || strings.Count(out, "journals not compared: run ") != 2 {
				t.Errorf("diff of two compacted runs does not name both:\n%s", out)
			}
			js := diff("--json")
			for _, want := range []string{`"identical": false`, `"entries": []`, "\"compacted\": [\n    \"a-1\",\n    \"b-1\"\n  ]"} {
				if !strings.Contains(js, want) {
					t.Errorf("diff --json of two compacted runs lacks %s:\n%s", want, js)
				}
			}
		})
	}
}

// TestDurableDiffIsAsTheDocsShowIt: the diff of docs/durable.md ("Time
// travel"), a run and its fork without --set, is what `sky durable diff`
// prints for those runs, column for column.
func TestDurableDiffIsAsTheDocsShowIt(t *testing.T) {
	ctx := context.Background()
	dsn, _, e := cliEngine(t, "sqlite", "diff-doc")
	order := durable.Register("order", codec.String, codec.String, func(c *durable.Ctx, _ string) task.Task[string] {
		uid := durable.StepValue(c, codec.String, "uid", func() string { return "5b0c…" })
		return task.AndThen(uid, func(u string) task.Task[string] {
			charge := durable.Step(c, codec.String, "charge", task.Succeed("charged-"+u))
			return task.AndThen(charge, func(ch string) task.Task[string] {
				return task.Map(durable.Step(c, codec.String, "ship", task.Succeed("shipped")), func(s string) string { return ch + " " + s })
			})
		})
	})
	if err := e.StartJSON(ctx, order.Erase(), "order-42", `"x"`); err != nil {
		t.Fatal(err)
	}
	drainRuns(t, e, order.Erase())
	if _, err := e.Fork(ctx, "order-42", "ship", durable.ForkOptions{NewID: "order-42-again"}); err != nil {
		t.Fatal(err)
	}
	drainRuns(t, e, order.Erase())
	code, out := runDurableOn(dsn, "", "diff", "order-42", "order-42-again")
	if code != exitOK {
		t.Fatalf("sky durable diff = %d:\n%s", code, out)
	}
	page, err := os.ReadFile("../../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}
	const cmd = "$ sky durable diff order-42 order-42-again\n"
	_, shown, found := strings.Cut(string(page), cmd)
	shown, _, ended := strings.Cut(shown, "```")
	if !found || !ended {
		t.Fatalf("docs/durable.md has no block after %q", cmd)
	}
	if diff := cmp.Diff(shown, out); diff != "" {
		t.Errorf("docs/durable.md shows another diff than sky durable diff prints (-docs +printed):\n%s", diff)
	}
}
