package eval

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func loadProject(t *testing.T, path string, out *[]string) (*Program, error) {
	t.Helper()
	return Load(path, Options{Stdlib: testStdlib(out)})
}

func TestLoadModules(t *testing.T) {
	var out []string
	p, err := loadProject(t, "testdata/project/src/Main.sky", &out)
	if err != nil {
		t.Fatal(err)
	}
	v, err := p.Value("result")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := value.Show(v), `(9,"HI!","yo!")`; got != want {
		t.Errorf("result = %s, want %s", got, want)
	}
}

// The let-task rule: `_ = task` runs first, within the Task the let yields.
func TestLetTaskRunsInOrder(t *testing.T) {
	var out []string
	p, err := loadProject(t, "testdata/project/src/Main.sky", &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 0 {
		t.Fatalf("tasks ran while loading: %v", out)
	}
	if err := p.RunMain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one", "two 4", "three"}, out); diff != "" {
		t.Errorf("printed lines (-want +got):\n%s", diff)
	}
}

func TestLetTaskFailureFailsTheTask(t *testing.T) {
	src := "import Sky.Core.Task as Task\nimport Std.Log exposing (println)\n\nmain =\n    let\n        _ = Task.fail \"boom\"\n    in\n    println \"after\"\n"
	var out []string
	p, err := LoadSource("Main.sky", []byte(src), Options{Stdlib: testStdlib(&out)})
	if err != nil {
		t.Fatal(err)
	}
	err = p.RunMain(context.Background())
	if got := value.FromError(err); got != "boom" {
		t.Errorf("failure = %v (%v), want \"boom\"", got, err)
	}
	if len(out) != 0 {
		t.Errorf("the body ran after a failed `_ =` task: %v", out)
	}
}

func TestRunTestsOutput(t *testing.T) {
	var out []string
	p, err := loadProject(t, "testdata/project/src/Main.sky", &out)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep, err := p.RunTests(context.Background(), &b)
	if err != nil {
		t.Fatal(err)
	}
	want := "  ok    area\n  ok    text / shout\n  FAIL  text / wrong\n        Expected \"x\" but got \"y\"\n2 passed, 1 failed\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	if rep.Passed != 2 || rep.Failed != 1 {
		t.Errorf("report = %+v", rep)
	}
}

func TestImportCycleIsNamed(t *testing.T) {
	var out []string
	_, err := loadProject(t, "testdata/cycle/Main.sky", &out)
	if err == nil || !strings.Contains(err.Error(), "import cycle: A -> B -> C -> A") {
		t.Fatalf("err = %v, want the cycle A -> B -> C -> A", err)
	}
	if !strings.Contains(err.Error(), "testdata/cycle/C.sky:3:1") {
		t.Errorf("err does not point at the import in C.sky: %v", err)
	}
}

// Closures sharing a frame run concurrently under Task.parallel; run with
// -race to check the evaluator shares nothing mutable between them.
func TestParallelClosures(t *testing.T) {
	src := `import Sky.Core.Task as Task

work k n acc =
    if n == 0 then
        acc

    else
        work k (n - 1) (acc + k)

main =
    let
        base = 10

        job k =
            Task.succeed k |> Task.andThen (\x -> Task.succeed (work x 1000 base))
    in
    Task.parallel (List.map job [ 1, 2, 3, 4, 5, 6, 7, 8 ])

result =
    0
`
	var out []string
	lib := testStdlib(&out)
	lib.Modules["Sky.Core.List"] = "module Sky.Core.List exposing (map)\n\nmap f l =\n    case l of\n        [] ->\n            []\n\n        x :: xs ->\n            f x :: map f xs\n"
	p, err := LoadSource("Main.sky", []byte(src), Options{Stdlib: lib})
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Value("main")
	if err != nil {
		t.Fatal(err)
	}
	got, err := task.Run(context.Background(), m.(value.Task).T)
	if err != nil {
		t.Fatal(err)
	}
	if want := "[1010,2010,3010,4010,5010,6010,7010,8010]"; value.Show(got) != want {
		t.Errorf("parallel results = %s, want %s", value.Show(got), want)
	}
}
