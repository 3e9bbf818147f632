package types_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
)

// BenchmarkCheckStdlibAndCheckout type-checks the whole stdlib plus the
// durable checkout example (examples/checkout; testdata/bench's saga when
// the example is absent), parsing excluded.
func BenchmarkCheckStdlibAndCheckout(b *testing.B) {
	stdlib := corpusStdlib(b)
	entry := filepath.Join(repoRoot, "examples/checkout/src/Main.sky")
	if _, err := os.Stat(entry); err != nil {
		entry = "testdata/bench/src/Main.sky"
	}
	prog, err := types.LoadProgram(entry, "", stdlib)
	if err != nil {
		b.Fatal(err)
	}
	for name, src := range stdlib {
		if _, ok := prog.Modules[name]; !ok {
			f, err := syntax.ParseFile(name, []byte(src))
			if err != nil {
				b.Fatal(err)
			}
			prog.Modules[name] = f
		}
	}
	lines := 0
	for _, s := range prog.Sources {
		lines += strings.Count(s, "\n")
	}
	for name, src := range stdlib {
		if _, ok := prog.Sources["<stdlib>/"+strings.ReplaceAll(name, ".", "/")+".sky"]; !ok {
			lines += strings.Count(src, "\n")
		}
	}
	b.ResetTimer()
	per := time.Duration(0)
	for i := 0; i < max(b.N, 3); i++ {
		start := time.Now()
		if _, errs := types.Check(prog); len(errs) > 0 {
			b.Fatal(diag.Render(errs))
		}
		if d := time.Since(start); per == 0 || d < per {
			per = d
		}
	}
	b.ReportMetric(float64(lines), "lines")
	fmt.Printf("check stdlib + %s: %d modules, %d lines, %v per check\n", entry, len(prog.Modules), lines, per)
}

// BenchmarkCheckGenerated checks generated programs of about 1k, 5k and
// 20k lines; the printed time per line shows how checking grows.
func BenchmarkCheckGenerated(b *testing.B) {
	for _, size := range []int{1000, 5000, 20000} {
		b.Run(fmt.Sprintf("lines=%d", size), func(b *testing.B) {
			mods := generateProgram(size)
			prog := stdlibProgram(b, nil)
			lines := 0
			for name, src := range mods {
				f, err := syntax.ParseFile(name+".sky", []byte(src))
				if err != nil {
					b.Fatalf("generated %s does not parse: %v", name, err)
				}
				prog.Modules[name] = f
				prog.Sources[name+".sky"] = src
				lines += strings.Count(src, "\n")
			}
			b.ResetTimer()
			per := time.Duration(0)
			// The printed figure is the best of at least three runs, so one
			// run's GC pause does not hide the growth rate.
			for i := 0; i < max(b.N, 3); i++ {
				start := time.Now()
				if _, errs := types.Check(prog); len(errs) > 0 {
					b.Fatal(diag.Render(errs[:1]))
				}
				if d := time.Since(start); per == 0 || d < per {
					per = d
				}
			}
			// Allocations do not depend on the machine's load: they show the
			// growth rate exactly.
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			types.Check(prog)
			runtime.ReadMemStats(&after)
			allocs := float64(after.Mallocs-before.Mallocs) / float64(lines)
			bytes := float64(after.TotalAlloc-before.TotalAlloc) / float64(lines)
			b.ReportMetric(float64(per.Nanoseconds())/float64(lines), "ns/line")
			b.ReportMetric(allocs, "allocs/line")
			fmt.Printf("check generated program: %6d lines in %2d modules: %v (%.0f ns/line, %.0f allocs/line, %.0f B/line)\n",
				lines, len(mods), per, float64(per.Nanoseconds())/float64(lines), allocs, bytes)
		})
	}
}

// TestGeneratedProgramChecks keeps the benchmark's generator honest: a
// small generated program checks clean.
func TestGeneratedProgramChecks(t *testing.T) {
	prog := stdlibProgram(t, generateProgram(300))
	if _, errs := types.Check(prog); len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
}

// generateProgram returns modules (name → source) totalling about lines
// lines: custom types, records, case, let, pipelines over Tasks, and calls
// across blocks and modules. Each module holds about 1000 lines.
func generateProgram(lines int) map[string]string {
	const blockLines = 62
	const perModule = 1000 / blockLines
	blocks := lines / blockLines
	mods := map[string]string{}
	var b strings.Builder
	mod := 0
	start := func() {
		b.Reset()
		fmt.Fprintf(&b, "module Gen.M%d exposing (..)\n\nimport Sky.Core.Task as Task\n", mod)
		if mod > 0 {
			fmt.Fprintf(&b, "import Gen.M%d as Prev\n", mod-1)
		}
		b.WriteString("\n\n")
	}
	flush := func() {
		mods[fmt.Sprintf("Gen.M%d", mod)] = b.String()
		mod++
	}
	start()
	for i := 0; i < blocks; i++ {
		if i > 0 && i%perModule == 0 {
			flush()
			start()
		}
		prev := ""
		switch {
		case i%perModule > 0:
			prev = fmt.Sprintf("step%d", i-1)
		case mod > 0:
			prev = fmt.Sprintf("Prev.step%d", i-1)
		}
		fmt.Fprintf(&b, `type Shape%[1]d
    = Circle%[1]d Float
    | Rect%[1]d Float Float
    | Empty%[1]d


type alias Item%[1]d =
    { name : String, qty : Int, shape : Shape%[1]d }


area%[1]d : Shape%[1]d -> Float
area%[1]d shape =
    case shape of
        Circle%[1]d r ->
            3.14 * r * r

        Rect%[1]d w h ->
            w * h

        Empty%[1]d ->
            0


summarize%[1]d items =
    let
        total =
            List.foldl (\item acc -> acc + item.qty) 0 items

        names =
            List.map .name items

        biggest =
            List.foldl (\item best -> max best (area%[1]d item.shape)) 0 items
    in
    { total = total, names = names, joined = String.join ", " names, biggest = biggest }


describe%[1]d : List (Item%[1]d) -> String
describe%[1]d items =
    let
        s =
            summarize%[1]d items
    in
    case ( s.total > 10, List.head s.names ) of
        ( True, Just first ) ->
            first ++ " and more"

        ( True, Nothing ) ->
            "many"

        ( False, _ ) ->
            String.fromInt s.total ++ " items"


step%[1]d : Int -> Task Error Int
step%[1]d n =
    Task.succeed n
        |> Task.map (\x -> x + %[1]d)
        |> Task.andThen (\x -> %[2]s)
`, i, stepBody(prev))
		b.WriteString("\n\n")
	}
	flush()
	return mods
}

func stepBody(prev string) string {
	if prev == "" {
		return "Task.succeed (x * 2)"
	}
	return prev + " (x * 2)"
}
