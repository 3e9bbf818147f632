package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/project"
	skydurable "skydurable/stdlib/durable"
)

// gateBase is the workflow of the corpus: two steps, a sleep, a signal, then
// a wait for a second signal. Run "deep" has consumed "settled" and waits
// for "shipped" (4 entries: reserve, charge, sleep:1, signal:settled); run
// "shallow" waits for "settled" (3 entries).
const gateBase = `module Main exposing (main)

import Std.Codec as Codec
import Std.Durable as Durable exposing (Ctx, WorkflowDef)


order : WorkflowDef String String
order =
    Durable.register "order" Codec.string Codec.string (\ctx id ->
        Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ id))
            |> Task.andThen (\r ->
                Durable.step ctx Codec.int "charge" (Task.succeed 42)
                    |> Task.andThen (\c ->
                        Durable.sleep ctx 0
                            |> Task.andThen (\_ ->
                                Durable.awaitSignal ctx Codec.string "settled")
                            |> Task.andThen (\s ->
                                Durable.awaitSignal ctx Codec.string "shipped"
                                    |> Task.map (\t -> r ++ String.fromInt c ++ s ++ t)))))


main : Task Error ()
main =
    Task.succeed ()
`

// Pieces of gateBase the edits replace.
const (
	gateFirstTwo = `Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ id))
            |> Task.andThen (\r ->
                Durable.step ctx Codec.int "charge" (Task.succeed 42)
                    |> Task.andThen (\c ->`
	gateSwapped = `Durable.step ctx Codec.int "charge" (Task.succeed 42)
            |> Task.andThen (\c ->
                Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ id))
                    |> Task.andThen (\r ->`
	gateSleep    = `Durable.sleep ctx 0`
	gateRegister = `order : WorkflowDef String String
order =
    Durable.register "order"`
)

// gateEdit is one edit of gateBase: each pair replaces old with new; the
// verdicts expected for deep and shallow, with a piece of each line.
type gateEdit struct {
	name                  string
	replace               []string
	deep, shallow         durable.Verdict
	deepLine, shallowLine string
}

var gateCorpus = []gateEdit{
	// Incompatible edits.
	{name: "reorder two steps", replace: []string{gateFirstTwo, gateSwapped},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 1 the new code asks for step "charge" but the journal recorded step "reserve"`},
	{name: "remove a step", replace: []string{`Durable.step ctx Codec.int "charge" (Task.succeed 42)`, `Task.succeed 42`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 2 the new code asks for sleep "sleep:1" but the journal recorded step "charge"`},
	{name: "rename a step id", replace: []string{`"charge"`, `"pay"`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 2 the new code asks for step "pay" but the journal recorded step "charge"`},
	{name: "change a step's codec type", replace: []string{`Codec.int "charge" (Task.succeed 42)`, `Codec.string "charge" (Task.succeed "42")`, `String.fromInt c`, `c`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `the journalled result of step "charge" (position 2) does not decode`},
	{name: "the sleep's length now comes from a step", replace: []string{gateSleep, `(Durable.stepValue ctx Codec.int "delay" (\_ -> 0) |> Task.andThen (Durable.sleep ctx))`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 3 the new code asks for step "delay" but the journal recorded sleep "sleep:1"`},
	{name: "the sleep gets an explicit id", replace: []string{gateSleep, `Durable.sleepAs ctx "cool-off" 0`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 3 the new code asks for sleep "cool-off" but the journal recorded sleep "sleep:1"`},
	{name: "change a signal's payload type", replace: []string{`Codec.string "settled"`, `Codec.int "settled"`, `++ s ++`, `++ String.fromInt s ++`},
		deep: durable.Incompatible, shallow: durable.Compatible, // shallow has not consumed it yet
		deepLine: `the journalled result of signal "signal:settled" (position 4) does not decode`},
	{name: "insert a step at the start", replace: []string{`Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ id))`,
		`(Durable.step ctx Codec.string "audit" (Task.succeed id) |> Task.andThen (\a -> Durable.step ctx Codec.string "reserve" (Task.succeed ("r-" ++ a))))`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 1 the new code asks for step "audit" but the journal recorded step "reserve"`},
	{name: "insert a step inside the journalled prefix", replace: []string{gateSleep, `(Durable.step ctx Codec.string "audit" (Task.succeed id) |> Task.andThen (\_ -> Durable.sleep ctx 0))`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `at journal position 3 the new code asks for step "audit" but the journal recorded sleep "sleep:1"`},
	{name: "reordered as version 2 alone", replace: []string{gateFirstTwo, gateSwapped, `Durable.register "order"`, `Durable.registerVersioned "order" 2`},
		deep: durable.Incompatible, shallow: durable.Incompatible,
		deepLine: `the new code does not register version 1 of order (it has 2); keep version 1 registered`},

	// needs-version: the edit ships as version 2, version 1 is kept.
	{name: "reordered as version 2, version 1 kept", replace: []string{gateRegister,
		"orderV2 : WorkflowDef String String\norderV2 =\n    Durable.registerVersioned \"order\" 2 Codec.string Codec.string (\\ctx id -> Durable.step ctx Codec.int \"charge\" (Task.succeed 1) |> Task.map String.fromInt)\n\n\n" + gateRegister},
		deep: durable.NeedsVersion, shallow: durable.NeedsVersion,
		deepLine: `keep version 1 registered until the run finishes: its journal replays on version 1, and the newest version is 2`},

	// Compatible edits: no false alarm.
	{name: "append a step after the prefix", replace: []string{`|> Task.map (\t -> r ++ String.fromInt c ++ s ++ t)`,
		`|> Task.andThen (\t -> Durable.step ctx Codec.string "ship" (Task.succeed (r ++ String.fromInt c ++ s ++ t)))`},
		deep: durable.Compatible, shallow: durable.Compatible},
	{name: "insert a step where the journal ends", replace: []string{`Durable.awaitSignal ctx Codec.string "shipped"`,
		`(Durable.step ctx Codec.string "notify" (Task.succeed s) |> Task.andThen (\_ -> Durable.awaitSignal ctx Codec.string "shipped"))`},
		deep: durable.Compatible, shallow: durable.Compatible},
	{name: "change code inside a step's task", replace: []string{`(Task.succeed ("r-" ++ id))`, `(Task.succeed ("reservation-" ++ id ++ "!"))`, `(Task.succeed 42)`, `(Task.succeed (40 + 2) |> Task.map (\n -> n * 1))`},
		deep: durable.Compatible, shallow: durable.Compatible},
	{name: "rename local variables", replace: []string{`(\r ->`, `(\reservation ->`, `(\c ->`, `(\charged ->`, `r ++ String.fromInt c ++ s ++ t`, `reservation ++ String.fromInt charged ++ s ++ t`, `\ctx id`, `\context orderId`,
		`"r-" ++ id`, `"r-" ++ orderId`, `Durable.step ctx`, `Durable.step context`, `Durable.sleep ctx`, `Durable.sleep context`, `Durable.awaitSignal ctx`, `Durable.awaitSignal context`},
		deep: durable.Compatible, shallow: durable.Compatible},
	{name: "comments", replace: []string{`order : WorkflowDef`, "{-| The order workflow. -}\norder : WorkflowDef", gateSleep, gateSleep + " -- cool off"},
		deep: durable.Compatible, shallow: durable.Compatible},
	{name: "formatting", replace: []string{"Durable.sleep ctx 0\n                            |> Task.andThen (\\_ ->\n                                Durable.awaitSignal ctx Codec.string \"settled\")",
		"Durable.sleep   ctx  0 |> Task.andThen (\\_ -> Durable.awaitSignal ctx Codec.string \"settled\")"},
		deep: durable.Compatible, shallow: durable.Compatible},
	// Not detectable by a replay, so compatible: the journal keeps the wake
	// time, not the length (the run wakes when it was due to)...
	{name: "the sleep's length changes", replace: []string{gateSleep, `Durable.sleep ctx 60000`},
		deep: durable.Compatible, shallow: durable.Compatible},
	// ... and a codec whose new type still decodes the recorded JSON.
	{name: "a codec type that still decodes", replace: []string{`Codec.int "charge" (Task.succeed 42)`, `Codec.float "charge" (Task.succeed 42.0)`, `String.fromInt c`, `String.fromFloat c`},
		deep: durable.Compatible, shallow: durable.Compatible},
}

// TestGateCorpus gives the runs of gateBase, exported, a verdict against
// each edit of the corpus, loaded through the real loader and checker.
func TestGateCorpus(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs.jsonl")
	exportGateRuns(t, ctx, dir, runs)

	offline, err := db.Open(ctx, "sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer offline.Close()
	e := durable.New(offline, durable.Options{WorkerID: "test"})
	for _, ed := range append([]gateEdit{{name: "unchanged", deep: durable.Compatible, shallow: durable.Compatible}}, gateCorpus...) {
		t.Run(ed.name, func(t *testing.T) {
			src := gateBase
			for i := 0; i < len(ed.replace); i += 2 {
				if !strings.Contains(src, ed.replace[i]) {
					t.Fatalf("the edit's %q is not in the program", ed.replace[i])
				}
				src = strings.ReplaceAll(src, ed.replace[i], ed.replace[i+1])
			}
			g, err := e.Gate(loadGateDefs(t, dir, src))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]durable.Finding{}
			if err := eachExported(runs, func(r durable.Run, j []durable.JournalEntry) error {
				got[r.ID] = g.Check(ctx, r, j)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			for _, want := range []struct {
				id      string
				verdict durable.Verdict
				line    string
			}{{"deep", ed.deep, ed.deepLine}, {"shallow", ed.shallow, ed.shallowLine}} {
				f, ok := got[want.id]
				switch {
				case !ok:
					t.Errorf("run %s was not checked", want.id)
				case f.Verdict != want.verdict:
					t.Errorf("run %s: %s, want %s", want.id, f, want.verdict)
				case !strings.Contains(f.String(), want.line):
					t.Errorf("run %s: %q, want it to contain %q", want.id, f, want.line)
				}
			}
		})
	}
}

// exportGateRuns starts deep and shallow with gateBase on a SQLite file,
// advances them until they wait, and exports them to runs as `sky durable
// export` does.
func exportGateRuns(t *testing.T, ctx context.Context, dir, runs string) {
	t.Helper()
	d, err := db.Open(ctx, "sqlite", filepath.Join(dir, "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	e := durable.New(d, durable.Options{WorkerID: "test"})
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	defs := loadGateDefs(t, dir, gateBase)
	for _, id := range []string{"deep", "shallow"} {
		if err := e.StartJSON(ctx, defs[0], id, `"`+id+`"`); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.Signal(ctx, "deep", "settled", `"stl-1"`); err != nil {
		t.Fatal(err)
	}
	for {
		worked, err := e.Poll(ctx, defs)
		if err != nil {
			t.Fatal(err)
		}
		if !worked {
			break
		}
	}
	var buf bytes.Buffer
	err = e.EachRun(ctx, nil, "", func(r durable.Run, j []durable.JournalEntry) error {
		return json.NewEncoder(&buf).Encode(durable.Export(r, j))
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range map[string]int{"deep": 4, "shallow": 3} {
		if _, j, err := e.Describe(ctx, id); err != nil || len(j) != n {
			t.Fatalf("run %s has %d journal entries (%v), want %d", id, len(j), err, n)
		}
	}
	if err := os.WriteFile(runs, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// loadGateDefs writes src as dir/Main.sky and loads its workflows as `sky
// durable replay` does.
func loadGateDefs(t testing.TB, dir, src string) []durable.Workflow {
	t.Helper()
	file := filepath.Join(dir, "Main.sky")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	proj, err := project.Find(file)
	if err != nil {
		t.Fatal(err)
	}
	var errs bytes.Buffer
	prog, _, _ := loadProgram(file, proj, loadOptions{}, streams{stdout: io.Discard, stderr: &errs})
	if prog == nil {
		t.Fatalf("the program does not load:\n%s\n%s", errs.String(), src)
	}
	defs, err := skydurable.WorkflowsIn(prog.Values())
	if err != nil || len(defs) == 0 {
		t.Fatalf("workflows %v, %v", defs, err)
	}
	return defs
}
