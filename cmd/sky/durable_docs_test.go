package main

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/codec"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// The output of `sky durable` commands as docs/durable.md shows it, run on
// the runs the page describes.

// docsOutput is what docs/durable.md shows after the line cmd, up to the end
// of its block.
func docsOutput(t *testing.T, cmd string) string {
	t.Helper()
	page, err := os.ReadFile("../../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}
	_, shown, found := strings.Cut(string(page), cmd)
	shown, _, ended := strings.Cut(shown, "```")
	if !found || !ended {
		t.Fatalf("docs/durable.md has no block after %q", cmd)
	}
	return shown
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
	if diff := cmp.Diff(docsOutput(t, "$ sky durable diff order-42 order-42-again\n"), out); diff != "" {
		t.Errorf("docs/durable.md shows another diff than sky durable diff prints (-docs +printed):\n%s", diff)
	}
}

// TestDurableShowIsAsTheDocsShowIt: the `sky durable show` of
// docs/durable.md (a checkout whose settlement arrived before it started)
// is what the command prints for that run, times, gaps and the worker aside.
func TestDurableShowIsAsTheDocsShowIt(t *testing.T) {
	ctx := context.Background()
	dsn, _, e := cliEngine(t, "sqlite", "show-doc")
	type settlement struct{ Reference string }
	settled := codec.Object[settlement]().
		With(codec.Field("reference", func(s settlement) string { return s.Reference }, func(s *settlement, v string) { s.Reference = v }, codec.String)).
		Build()
	checkout := durable.Register("checkout", codec.String, codec.String, func(c *durable.Ctx, id string) task.Task[string] {
		reserve := durable.Step(c, codec.String, "reserve", task.Succeed("r-"+id))
		return task.AndThen(reserve, func(r string) task.Task[string] {
			return task.AndThen(durable.AwaitSignal(c, settled, "payment.settled"), func(s settlement) task.Task[string] {
				return durable.Step(c, codec.String, "finalise", task.Succeed(r+"/"+s.Reference))
			})
		})
	})
	if err := e.Signal(ctx, "order-2", "payment.settled", `{"reference":"stl-2"}`); err != nil {
		t.Fatal(err)
	}
	if err := e.StartJSON(ctx, checkout.Erase(), "order-2", `"order-2"`); err != nil {
		t.Fatal(err)
	}
	drainRuns(t, e, checkout.Erase())
	code, out := runDurableOn(dsn, "", "show", "order-2")
	if code != exitOK {
		t.Fatalf("sky durable show = %d:\n%s", code, out)
	}
	vary := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z|\+[0-9.hms]+ +|by [a-z0-9-]+ \(`)
	blur := func(s string) string { return vary.ReplaceAllString(s, "…") }
	if diff := cmp.Diff(blur(docsOutput(t, "$ sky durable show order-2\n")), blur(out)); diff != "" {
		t.Errorf("docs/durable.md shows another show than sky durable show prints (-docs +printed):\n%s", diff)
	}
}
