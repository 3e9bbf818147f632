package types_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/compiler/diag"
	"skydurable/compiler/types"
)

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const userModule = "module Lib.User exposing (name)\n\n\nname : String\nname =\n    \"ann\"\n"

func TestLoadProgramFindsModules(t *testing.T) {
	stdlib := corpusStdlib(t)
	dir := writeFiles(t, map[string]string{
		"src/Main.sky":     "import Lib.User\n\n\nmain : String\nmain =\n    User.name\n",
		"src/Lib/User.sky": userModule,
		"app/Other.sky":    "import Lib.User\n\n\nv : Int\nv =\n    User.name\n",
	})
	// Without a root, the entry's directory is the root.
	prog, err := types.LoadProgram(filepath.Join(dir, "src/Main.sky"), "", stdlib)
	if err != nil {
		t.Fatal(err)
	}
	if prog.Modules["Lib.User"] == nil || prog.Modules["Main"] == nil || prog.Modules["Sky.Core.Prelude"] == nil {
		t.Fatalf("modules loaded: %v", keys(prog.Modules))
	}
	if _, errs := types.Check(prog); len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
	// With an explicit root, modules come from there.
	errs, err := checkWithRoot(filepath.Join(dir, "app/Other.sky"), filepath.Join(dir, "src"), stdlib)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "body of the `v` definition") {
		t.Fatalf("want one mismatch for v, got:\n%s", diag.Render(errs))
	}
}

func checkWithRoot(path, root string, stdlib map[string]string) (diag.List, error) {
	prog, err := types.LoadProgram(path, root, stdlib)
	if err != nil {
		return nil, err
	}
	_, errs := types.Check(prog)
	return errs, nil
}

func TestLoadProgramSrcBesideEntry(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Main.sky":         "import Lib.User\n\n\nmain : String\nmain =\n    User.name\n",
		"src/Lib/User.sky": userModule,
	})
	errs, err := types.CheckFile(filepath.Join(dir, "Main.sky"), corpusStdlib(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
}

func TestLoadProgramNestedTestFindsTestsAndSrc(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"tests/Lang/ShapeTest.sky": "module Lang.ShapeTest exposing (v)\n\nimport Lang.Shapes\nimport Lib.User\n\n\nv : String\nv =\n    Shapes.label ++ User.name\n",
		"tests/Lang/Shapes.sky":    "module Lang.Shapes exposing (label)\n\n\nlabel : String\nlabel =\n    \"shape\"\n",
		"src/Lib/User.sky":         userModule,
	})
	errs, err := types.CheckFile(filepath.Join(dir, "tests/Lang/ShapeTest.sky"), corpusStdlib(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
}

func TestCheckFileMissingModuleAndSyntaxError(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Main.sky":  "import Lib.Gone\n\n\nmain =\n    Gone.x\n",
		"Bad.sky":   "main =\n    (1 +\n",
		"Std.sky":   "import Std.Nope\n",
		"Cycle.sky": "import A\n",
		"A.sky":     "module A exposing (..)\n\nimport B\n\n\na =\n    1\n",
		"B.sky":     "module B exposing (..)\n\nimport A\n\n\nb =\n    2\n",
	})
	stdlib := corpusStdlib(t)
	errs, err := types.CheckFile(filepath.Join(dir, "Main.sky"), stdlib)
	if err != nil {
		t.Fatal(err)
	}
	if len(errs) != 1 || errs[0].Title != "UNKNOWN IMPORT" || !strings.Contains(errs[0].Detail, filepath.Join(dir, "src", "Lib", "Gone.sky")) {
		t.Fatalf("want one UNKNOWN IMPORT naming Lib/Gone.sky, got:\n%s", diag.Render(errs))
	}
	errs, _ = types.CheckFile(filepath.Join(dir, "Std.sky"), stdlib)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "not a module of the standard library") || !strings.Contains(errs[0].Detail, "Std.Log,") {
		t.Fatalf("want a stdlib hint, got:\n%s", diag.Render(errs))
	}
	errs, _ = types.CheckFile(filepath.Join(dir, "Cycle.sky"), stdlib)
	if len(errs) == 0 || errs[0].Title != "IMPORT CYCLE" || !strings.Contains(errs[0].Message, "A -> B -> A") {
		t.Fatalf("want an import cycle A -> B -> A, got:\n%s", diag.Render(errs))
	}
	_, err = types.CheckFile(filepath.Join(dir, "Bad.sky"), stdlib)
	var list diag.List
	if !errors.As(err, &list) || len(list) == 0 || list[0].Title != "SYNTAX ERROR" {
		t.Fatalf("want the syntax error list, got %v", err)
	}
	if _, err := types.CheckFile(filepath.Join(dir, "Missing.sky"), stdlib); err == nil {
		t.Fatal("an unreadable entry file must be an error")
	}
}

func keys[T any](m map[string]T) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
