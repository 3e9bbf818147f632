package durable_test

// The crash test of composed workflows: a parent that fanned out with
// Durable.all is SIGKILLed right after its children's start committed,
// before it awaits them; the next process resumes it. No child is started
// twice, each child's effect runs once, and the parent fans in.

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// crashFanKeys are the children of run "fan-1".
var crashFanKeys = []string{"berlin", "paris", "rome"}

// crashFanWorkflows are the parent "crash.fan" (Durable.all over
// crashFanKeys, output the children's outputs joined by "|") and the child
// "crash.item" (one plain step appending its idempotency key to effects).
func crashFanWorkflows(effects string) (durable.Def[string, string], durable.Def[string, string]) {
	item := durable.Register("crash.item", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		return durable.Step(c, codec.String, "pack", task.From(func(context.Context) (string, error) {
			return "packed:" + in, appendLine(effects, c.IdempotencyKey("pack"))
		}))
	})
	fan := durable.Register("crash.fan", codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] {
		kids := make([]durable.Child[string], len(crashFanKeys))
		for i, k := range crashFanKeys {
			kids[i] = durable.Child[string]{Key: k, Input: in + "@" + k}
		}
		return task.Map(durable.All(c, item, kids), func(outs []string) string { return strings.Join(outs, "|") })
	})
	return fan, item
}

// TestCrashFanChildProcess is the child process of TestCrashParentBetweenStartAndAwait:
// it polls until nothing is due, pausing (to be killed) once the parent's
// children are started when SKY_CRASH_PAUSE is "children-started". It
// prints how many child insert statements it sent.
func TestCrashFanChildProcess(t *testing.T) {
	if os.Getenv(crashEnvChild) != "1" {
		t.Skip("helper process of TestCrashParentBetweenStartAndAwait; it runs only when that test re-executes the test binary")
	}
	say := func(format string, args ...any) { fmt.Printf(crashChildPrefix+format+"\n", args...) }
	offset, err := strconv.ParseInt(os.Getenv(crashEnvOffsetMs), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", crashEnvOffsetMs, err)
	}
	ctx := context.Background()
	d, err := db.Open(ctx, os.Getenv(crashEnvDriver), os.Getenv(crashEnvDSN))
	if err != nil {
		t.Fatalf("child: open: %v", err)
	}
	defer d.Close()
	pause := os.Getenv(crashEnvPause) == "children-started"
	var inserts atomic.Int64
	e := durable.New(d, durable.Options{
		Clock:    func() time.Time { return time.Now().Add(time.Duration(offset) * time.Millisecond) },
		Lease:    crashLease,
		WorkerID: "child-" + strconv.Itoa(os.Getpid()),
		OnStatement: func(op, _ string) {
			if op == "children" {
				inserts.Add(1)
			}
		},
		OnBoundary: func(p durable.Point) error {
			if pause && p.StepID == "all:"+crashFanKeys[0] && p.Boundary == durable.AfterCommit {
				say("READY children-started")
				_, _ = io.Copy(io.Discard, os.Stdin)
				os.Exit(3)
			}
			return nil
		},
	})
	fan, item := crashFanWorkflows(os.Getenv(crashEnvEffects))
	defs := []durable.Workflow{fan.Erase(), item.Erase()}
	polls := 0
	for ; polls < 50; polls++ {
		worked, err := e.Poll(ctx, defs)
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if !worked {
			break
		}
	}
	say("POLLED polls=%d inserts=%d", polls, inserts.Load())
}

func TestCrashParentBetweenStartAndAwait(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			s := newCrashSetup(t, driver, 10)
			s.childTest = "TestCrashFanChildProcess"
			fan, _ := crashFanWorkflows(s.effects)
			if err := durable.Start(ctx, s.e, fan, "fan-1", "box"); err != nil {
				t.Fatal(err)
			}
			first := s.child(t, "children-started")
			first.await(t, "READY children-started")
			first.kill(t)
			kids, err := s.e.ListRuns(ctx, durable.ListFilter{Parent: "fan-1"})
			if err != nil || len(kids) != len(crashFanKeys) {
				t.Fatalf("after the kill the parent has %d children (%v), want %d", len(kids), err, len(crashFanKeys))
			}
			if r, _, _ := s.e.Describe(ctx, "fan-1"); r.Status != durable.StatusRunning {
				t.Fatalf("the killed parent is %s, want still running (its lease held)", r.Status)
			}

			second := s.child(t, "")
			got := second.await(t, "POLLED")
			second.finish(t)
			if !strings.HasSuffix(got, "inserts=0") {
				t.Errorf("the resuming process: %s; want no child insert statement (the start is replayed)", got)
			}
			r, j, err := s.e.Describe(ctx, "fan-1")
			if err != nil {
				t.Fatal(err)
			}
			want := `"packed:box@berlin|packed:box@paris|packed:box@rome"`
			if r.Status != durable.StatusDone || r.Output != want {
				t.Fatalf("parent: %s, output %s (last error %q); want done with %s", r.Status, r.Output, r.LastError, want)
			}
			var ids []string
			for _, e := range j {
				ids = append(ids, e.StepID)
			}
			if strings.Join(ids, ",") != "all:berlin,all-done:berlin" {
				t.Errorf("parent journal %v", ids)
			}
			keys := s.effectKeys(t)
			slices.Sort(keys)
			wantKeys := []string{"fan-1/berlin:pack", "fan-1/paris:pack", "fan-1/rome:pack"}
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("the children's effects ran for %q; want each child once: %q", keys, wantKeys)
			}
			kids, _ = s.e.ListRuns(ctx, durable.ListFilter{Parent: "fan-1"})
			for _, k := range kids {
				if k.Status != durable.StatusDone || k.Attempts != 1 {
					t.Errorf("child %s: %s after %d attempts; want done after 1", k.ID, k.Status, k.Attempts)
				}
			}
		})
	}
}
