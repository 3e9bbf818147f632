package main

import (
	"context"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
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
