package eval

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"skydurable/compiler/ffi"
	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// The workflow benchmarks run one durable run of three journalled steps to
// completion on SQLite (start, then poll until idle): once written in Sky
// and run by this evaluator against the real stdlib, once written in Go on
// the engine's API. Their ratio is the evaluator's cost on a real workflow.

const workflowSteps = 3

const workflowSrc = `
import Sky.Core.Task as Task
import Std.Codec as Codec
import Std.Db as Db
import Std.Durable as Durable exposing (Ctx)


chain : Ctx -> Int -> Int -> Int -> Task Error Int
chain ctx i n acc =
    if i == n then
        Task.succeed acc

    else
        Durable.step ctx Codec.int ("s" ++ String.fromInt i) (Task.succeed (acc + i))
            |> Task.andThen (\v -> chain ctx (i + 1) n v)


flow : Durable.WorkflowDef Int Int
flow =
    Durable.register "bench" Codec.int Codec.int (\ctx n -> chain ctx 0 n 0)


drain : Db.Db -> Task Error ()
drain db =
    Durable.poll db [ Durable.erase flow ]
        |> Task.andThen
            (\didWork ->
                if didWork then
                    drain db

                else
                    Task.succeed ()
            )


open : String -> Task Error Db.Db
open path =
    Db.open "sqlite" path
        |> Task.andThen (\db -> Durable.setup db |> Task.map (\_ -> db))


runOne : Db.Db -> String -> Task Error ()
runOne db id =
    Durable.start db flow id 3
        |> Task.andThen (\_ -> drain db)


outcome : Db.Db -> String -> Task Error String
outcome db id =
    Durable.describe db id
        |> Task.map (\info -> info.status ++ " " ++ Maybe.withDefault "-" info.output)
`

// reportCPU adds the process CPU time per iteration (user+system), a figure
// less disturbed than wall time by other load on the machine.
func reportCPU(b *testing.B, start time.Duration, iters int) {
	if iters > 0 {
		b.ReportMetric(float64(processCPU()-start)/float64(iters), "cpu-ns/op")
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWorkflowSky(b *testing.B) {
	lib := Stdlib{Modules: ffi.Modules(), Kernels: ffi.KernelsWith(ffi.DefaultEnv())}
	p, err := LoadSource("Bench.sky", []byte(workflowSrc), Options{Stdlib: lib})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	run := func(name string, args ...value.Value) value.Value {
		f, err := p.Value(name)
		if err != nil {
			b.Fatal(err)
		}
		t, err := value.Apply(f, args...)
		if err != nil {
			b.Fatal(err)
		}
		v, err := task.Run(ctx, t.(value.Task).T)
		if err != nil {
			b.Fatal(err)
		}
		return v
	}
	d := run("open", filepath.Join(b.TempDir(), "bench.db"))
	i := 0
	cpu := processCPU()
	for b.Loop() {
		i++
		run("runOne", d, fmt.Sprintf("run-%d", i))
	}
	reportCPU(b, cpu, i)
	// 0+1+2: every step ran and the run completed.
	if got := run("outcome", d, fmt.Sprintf("run-%d", i)); got != "done 3" {
		b.Fatalf("last run: %v, want done 3", got)
	}
}

func BenchmarkWorkflowGo(b *testing.B) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	e := durable.New(d, durable.Options{})
	if err := e.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	var chain func(c *durable.Ctx, i, n, acc int64) task.Task[int64]
	chain = func(c *durable.Ctx, i, n, acc int64) task.Task[int64] {
		if i == n {
			return task.Succeed(acc)
		}
		st := durable.Step(c, codec.Int, fmt.Sprintf("s%d", i), task.Succeed(acc+i))
		return task.AndThen(st, func(v int64) task.Task[int64] { return chain(c, i+1, n, v) })
	}
	flow := durable.Register("bench", codec.Int, codec.Int, func(c *durable.Ctx, n int64) task.Task[int64] {
		return chain(c, 0, n, 0)
	})
	defs := []durable.Workflow{flow.Erase()}
	i := 0
	cpu := processCPU()
	defer func() { reportCPU(b, cpu, i) }()
	for b.Loop() {
		i++
		if err := durable.Start(ctx, e, flow, fmt.Sprintf("run-%d", i), workflowSteps); err != nil {
			b.Fatal(err)
		}
		for {
			did, err := e.Poll(ctx, defs)
			if err != nil {
				b.Fatal(err)
			}
			if !did {
				break
			}
		}
	}
}
