package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// The `sky durable` tests' shared set-up: a fresh database with the tables,
// runs drained, and the command run in-process.

// cliEngine opens a fresh database of driver and an engine (worker) set up
// on it; the database closes when the test ends.
func cliEngine(t *testing.T, driver, worker string) (string, *db.DB, *durable.Engine) {
	t.Helper()
	ctx := context.Background()
	dsn := dbtest.URL(t, driver)
	d, err := db.Open(ctx, driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e := durable.New(d, durable.Options{WorkerID: worker})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	return dsn, d, e
}

// greetDone runs the one-step workflow "greet" for each of ids (input
// "ann", output "hello ann") on e until each is done.
func greetDone(t *testing.T, e *durable.Engine, ids ...string) {
	t.Helper()
	greet := durable.Register("greet", codec.String, codec.String,
		func(c *durable.Ctx, in string) task.Task[string] {
			return durable.Step(c, codec.String, "greet", task.Succeed("hello "+in))
		})
	for _, id := range ids {
		if err := e.StartJSON(context.Background(), greet.Erase(), id, `"ann"`); err != nil {
			t.Fatal(err)
		}
	}
	drainRuns(t, e, greet.Erase())
}

// drainRuns polls wfs until no run is due.
func drainRuns(t *testing.T, e *durable.Engine, wfs ...durable.Workflow) {
	t.Helper()
	for {
		worked, err := e.Poll(context.Background(), wfs)
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			return
		}
	}
}

// runDurableOn runs `sky durable args... --db dsn` with stdin and returns its exit
// code and its output (stdout, then stderr).
func runDurableOn(dsn, stdin string, args ...string) (int, string) {
	var out, errOut bytes.Buffer
	code := runDurable(context.Background(), append(args, "--db", dsn), streams{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut})
	return code, out.String() + errOut.String()
}

// TestLsUnknownWorkflowNamesTenAtMost: the note of `ls --workflow` for a
// workflow no run has names the first maxWorkflowsNamed workflows and
// counts the others.
func TestLsUnknownWorkflowNamesTenAtMost(t *testing.T) {
	dsn, _, e := cliEngine(t, "sqlite", "w")
	for i := 1; i <= maxWorkflowsNamed+2; i++ {
		name := fmt.Sprintf("w%02d", i)
		wf := durable.Register(name, codec.String, codec.String, func(c *durable.Ctx, in string) task.Task[string] { return task.Succeed(in) })
		if err := e.StartJSON(context.Background(), wf.Erase(), name+"-1", `"x"`); err != nil {
			t.Fatal(err)
		}
	}
	code, out := runDurableOn(dsn, "", "ls", "--workflow", "nope")
	want := "no runs\nnote: no run of this namespace has workflow \"nope\"; hint: its workflows are w01, w02, w03, w04, w05, w06, w07, w08, w09, w10 and 2 more\n"
	if code != exitOK || out != want {
		t.Fatalf("exit %d, output\n%s\nwant exit 0 and\n%s", code, out, want)
	}
}
