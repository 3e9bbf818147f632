package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
)

// gateBenchProgram has three steps, then waits for a signal: the runs of
// the benchmark have journalled the three steps.
const gateBenchProgram = `module Main exposing (main)

import Std.Codec as Codec
import Std.Durable as Durable exposing (Ctx, WorkflowDef)


order : WorkflowDef String String
order =
    Durable.register "order" Codec.string Codec.string (\ctx id ->
        Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ id))
            |> Task.andThen (\r -> Durable.step ctx Codec.int "charge" (Task.succeed 42) |> Task.map (\c -> r ++ String.fromInt c))
            |> Task.andThen (\c -> Durable.step ctx Codec.string "ship" (Task.succeed (c ++ "/s")))
            |> Task.andThen (\s -> Durable.awaitSignal ctx Codec.string "settled" |> Task.map (\t -> s ++ t)))


main : Task Error ()
main =
    Task.succeed ()
`

// BenchmarkReplayFrom10k is what `sky durable replay --from runs.jsonl FILE`
// does after loading FILE: read 10,000 exported three-step runs and give
// each a verdict. Target: under 1 s (ms/10k-runs).
func BenchmarkReplayFrom10k(b *testing.B) {
	const runs = 10_000
	ctx := context.Background()
	dir := b.TempDir()
	file := filepath.Join(dir, "runs.jsonl")
	fh, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(fh)
	enc := json.NewEncoder(w)
	for i := range runs {
		id := fmt.Sprintf("o-%d", i)
		r := durable.Run{ID: id, Workflow: "order", Version: 1, Status: durable.StatusWaiting, Input: `"` + id + `"`}
		j := []durable.JournalEntry{
			{Seq: 1, StepID: "reserve", Kind: durable.KindStep, Result: `"r-` + id + `"`},
			{Seq: 2, StepID: "charge", Kind: durable.KindStep, Result: `42`},
			{Seq: 3, StepID: "ship", Kind: durable.KindStep, Result: `"r-` + id + `42/s"`},
		}
		if err := enc.Encode(durable.Export(r, j)); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	fh.Close()
	d, err := db.Open(ctx, "sqlite", ":memory:")
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	g, err := durable.New(d, durable.Options{WorkerID: "bench"}).Gate(loadGateDefs(b, dir, gateBenchProgram))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		n := 0
		err := eachExported(file, func(r durable.Run, j []durable.JournalEntry) error {
			if f := g.Check(ctx, r, j); f.Verdict != durable.Compatible {
				return fmt.Errorf("%s", f)
			}
			n++
			return nil
		})
		if err != nil || n != runs {
			b.Fatalf("checked %d runs: %v", n, err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Milliseconds())/float64(b.N), "ms/10k-runs")
}
