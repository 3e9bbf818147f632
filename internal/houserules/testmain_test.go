package houserules

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPostgresTestsStartAPrivateServer holds the README's promise that the
// tests need no PostgreSQL at the default address when the binaries are
// installed: a package whose tests open a PostgreSQL database through
// runtime/db/dbtest runs them under dbtest.Main (or MainPrepared, or Run), which
// starts a private cluster when none answers. Tests that open only SQLite
// (dbtest.Open or dbtest.URL with "sqlite") need none.
func TestPostgresTestsStartAPrivateServer(t *testing.T) {
	r := loadRepo(t)
	for _, p := range r.packages {
		usesPostgres, startsServer := false, false
		for _, f := range slices.Concat(p.TestGoFiles, p.XTestGoFiles) {
			parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			dbtest := importName(parsed, modulePath+"/runtime/db/dbtest")
			if dbtest == "" {
				continue
			}
			ast.Inspect(parsed, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				pkg, fn := calledFunc(call)
				if pkg != dbtest {
					return true
				}
				switch fn {
				case "Main", "MainPrepared", "Run":
					startsServer = true
				case "Open", "URL":
					usesPostgres = usesPostgres || !sqliteOnly(call)
				default:
					usesPostgres = true
				}
				return true
			})
		}
		if usesPostgres && !startsServer && rel(p.ImportPath) != "runtime/db/dbtest" {
			t.Errorf("%s: its tests open PostgreSQL through dbtest but do not run under dbtest.Main; hint: add `func TestMain(m *testing.M) { dbtest.Main(m) }`, so they pass on a machine with the PostgreSQL binaries and no server", rel(p.ImportPath))
		}
	}
}

// calledFunc returns pkg and fn of a call pkg.fn(…), or "".
func calledFunc(call *ast.CallExpr) (pkg, fn string) {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok {
		return "", ""
	}
	return id.Name, sel.Sel.Name
}

// sqliteOnly reports whether a dbtest.Open or dbtest.URL call names
// "sqlite" as its driver.
func sqliteOnly(call *ast.CallExpr) bool {
	if len(call.Args) != 2 {
		return false
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, _ := strconv.Unquote(lit.Value)
	return s == "sqlite"
}

// importName is the name a file imports importPath under, or "".
func importName(f *ast.File, importPath string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return filepath.Base(importPath)
		}
	}
	return ""
}

// TestMakeRunSaysWhatItBuilds holds that `make run` prints what it is doing
// before the first build, which compiles every dependency for a minute or
// two and would otherwise sit silent after one `go build` line.
func TestMakeRunSaysWhatItBuilds(t *testing.T) {
	r := loadRepo(t)
	out, err := run(r.root, "make", "-n", "run")
	if err != nil {
		t.Skipf("make is not installed: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	say, build := -1, -1
	for i, l := range lines {
		switch {
		case say < 0 && strings.Contains(l, "echo") && strings.Contains(l, "building bin/sky"):
			say = i
		case build < 0 && strings.Contains(l, "go build") && strings.Contains(l, "bin/sky"):
			build = i
		}
	}
	if say < 0 || build < 0 || say > build {
		t.Errorf("make run does not say \"building bin/sky …\" before its go build; it runs:\n%s", out)
	}
}
