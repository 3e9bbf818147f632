package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// generateProgram returns a Sky program of n functions (about 25 lines
// each) exercising records, let, case, pipelines, lambdas and strings.
func generateProgram(n int) string {
	var b strings.Builder
	b.WriteString("module Generated exposing (..)\n\nimport Std.Log as Log exposing (println)\nimport Sky.Core.Task as Task\n\n\n")
	b.WriteString("type alias Item =\n    { name : String\n    , price : Int\n    , tags : List String\n    }\n\n\n")
	b.WriteString("type Shape\n    = Circle Float\n    | Rect Float Float\n    | Named { label : String }\n\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{-| Function number %[1]d. -}
fn%[1]d : Int -> List Item -> Task Error String
fn%[1]d n items =
    let
        total =
            items
                |> List.map .price
                |> List.foldl (+) 0
        ( small, big ) =
            List.partition (\item -> item.price < n * %[1]d) items
        label k =
            case k of
                Just (Circle r) ->
                    "circle " ++ String.fromFloat r
                Just (Rect w h) ->
                    if w == h then "square" else "rect"
                _ ->
                    """other {{k}}"""
    in
    Task.succeed { count = List.length small, rest = big }
        |> Task.andThen (\r -> Log.println (label Nothing))
        |> Task.map (\_ -> String.fromInt (total - -1 + 0x%[1]X))


`, i)
	}
	return b.String()
}

// BenchmarkParse parses a generated program of about 2,000 lines and
// reports lines per second (a figure, not asserted).
func BenchmarkParse(b *testing.B) {
	src := []byte(generateProgram(80))
	lines := strings.Count(string(src), "\n")
	if _, err := ParseFile("gen.sky", src); err != nil {
		b.Fatalf("generated program does not parse: %v", err)
	}
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseFile("gen.sky", src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(lines), "lines")
}

// TestGeneratedProgramParses keeps the benchmark input valid.
func TestGeneratedProgramParses(t *testing.T) {
	src := generateProgram(80)
	f, err := ParseFile("gen.sky", []byte(src))
	if err != nil {
		t.Fatalf("generated program does not parse: %v", err)
	}
	if got := len(f.Decls); got != 82 {
		t.Errorf("got %d declarations, want 82", got)
	}
	if n := strings.Count(src, "\n"); n < 1900 {
		t.Errorf("generated program has %d lines, want about 2,000", n)
	}
}
