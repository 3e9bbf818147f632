package houserules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A layerRule forbids the packages it applies to some imports. Paths are the
// module's packages relative to its root ("runtime/durable") or external
// import paths ("github.com/jackc/pgx/v5").
type layerRule struct {
	// rule says the rule in words (and keys the allow-list).
	rule string
	// applies selects the module packages the rule binds.
	applies func(pkg string) bool
	// forbidden selects the imports they may not have.
	forbidden func(imp string) bool
	// direct checks only what a package imports itself (a driver may sit
	// under runtime/db); otherwise every transitive dependency counts, of
	// the package and of its in-package tests. External tests (package
	// x_test) are the package's consumers, free to drive it from a layer
	// above (a store's benchmark through the engine, the checker's corpus
	// over the stdlib sources), as Go's own tree uses them.
	direct bool
}

// under matches the packages at or below any of roots.
func under(roots ...string) func(string) bool {
	return func(p string) bool {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, r+"/") {
				return true
			}
		}
		return false
	}
}

// isEngine matches the engine: runtime/durable and its subpackages except
// the stores below it.
func isEngine(p string) bool {
	return under("runtime/durable")(p) && !under("runtime/durable/store")(p)
}

// isStore matches the store packages of particular databases (everything
// under runtime/durable/store but the seam itself and its registry list).
func isStore(p string) bool {
	return under("runtime/durable/store")(p) &&
		!under("runtime/durable/store/stores", "runtime/durable/store/storetest")(p) && p != "runtime/durable/store"
}

// isDriver matches a database driver's packages.
var isDriver = under("github.com/jackc/pgx", "github.com/jackc/pgconn", "github.com/lib/pq",
	"modernc.org/sqlite", "github.com/mattn/go-sqlite3")

// layerRules are DESIGN.md's dependency rules: `cmd → compiler → stdlib →
// runtime`; inside runtime, `durable → store → db`; the engine imports no
// Sky value and no database driver.
var layerRules = []layerRule{
	{rule: "nothing in runtime/ imports compiler/, stdlib/ or cmd/",
		applies: under("runtime"), forbidden: under("compiler", "stdlib", "cmd")},
	{rule: "the engine imports no Sky value and no TEA runtime",
		applies: under("runtime/durable"), forbidden: under("runtime/value", "runtime/app")},
	{rule: "a store imports nothing of the engine above it",
		applies: under("runtime/durable/store"), forbidden: isEngine},
	{rule: "the engine imports no database driver (drivers live in runtime/db and the stores)",
		applies: isEngine, forbidden: isDriver, direct: true},
	{rule: "the engine names no store: it opens one through store.Open (store/stores registers them)",
		applies: isEngine, forbidden: isStore, direct: true},
	{rule: "the parser knows nothing of the phases after it",
		applies: under("compiler/syntax", "compiler/diag"), forbidden: under("compiler/types", "compiler/eval", "compiler/ffi")},
	{rule: "the checker knows nothing of the evaluator",
		applies: under("compiler/types"), forbidden: under("compiler/eval", "compiler/ffi")},
	{rule: "stdlib imports neither the compiler nor a command",
		applies: under("stdlib"), forbidden: under("compiler", "cmd")},
	{rule: "the compiler imports no command",
		applies: under("compiler"), forbidden: under("cmd")},
}

// layerExceptions are today's known breaches, each "rule: package → import".
// The list can only shrink: an entry that no longer happens fails the test
// until it is deleted, and a new breach is not fixed by adding one here.
var layerExceptions = map[string]string{
	// An in-package test (durable_api_test.go, helpers_test.go) reads the
	// stdlib's sources from compiler/ffi's module table to check the
	// workflow rules' classification of every Std.Durable export against
	// Durable.sky's types; the checker's own code imports neither.
	"the checker knows nothing of the evaluator: compiler/types → compiler/ffi": "tests read the stdlib sources",
}

// TestLayerRules checks the dependency direction of every module package
// (and of its in-package tests, for the transitive rules) against
// layerRules.
func TestLayerRules(t *testing.T) {
	r := loadRepo(t)
	pkgs := r.byPath()
	seen := map[string]bool{}
	for _, p := range r.packages {
		for _, lr := range layerRules {
			if !lr.applies(rel(p.ImportPath)) {
				continue
			}
			for _, v := range lr.breaches(p, pkgs) {
				key := lr.rule + ": " + rel(p.ImportPath) + " → " + v.imp
				if _, ok := layerExceptions[key]; ok {
					seen[key] = true
					continue
				}
				t.Errorf("%s: %s imports %s%s", lr.rule, rel(p.ImportPath), v.imp, v.via)
			}
		}
	}
	for key := range layerExceptions {
		if !seen[key] {
			t.Errorf("the layer exception %q no longer happens: delete it from layerExceptions", key)
		}
	}
}

// breach is one forbidden import: what, and through which direct import.
type breach struct{ imp, via string }

// breaches lists what p (with its in-package tests, unless the rule is
// direct) imports against lr, sorted.
func (lr layerRule) breaches(p goPackage, pkgs map[string]goPackage) []breach {
	name := func(imp string) string {
		if inModule(imp) {
			return rel(imp)
		}
		return imp
	}
	found := map[string]string{}
	direct := p.Imports
	if !lr.direct {
		direct = slices.Concat(p.Imports, p.TestImports)
	}
	for _, imp := range direct {
		if lr.forbidden(name(imp)) {
			found[name(imp)] = ""
		}
		if lr.direct {
			continue
		}
		for _, dep := range pkgs[imp].Deps {
			if _, ok := found[name(dep)]; !ok && lr.forbidden(name(dep)) {
				found[name(dep)] = fmt.Sprintf(" (through %s)", name(imp))
			}
		}
	}
	var out []breach
	for imp, via := range found {
		out = append(out, breach{imp, via})
	}
	slices.SortFunc(out, func(a, b breach) int { return strings.Compare(a.imp, b.imp) })
	return out
}

// TestEngineAsksNoDialect: what differs between databases is the store's
// to know (store.Store answers it, DatabaseClock say), so no file of the
// engine's package asks a database which dialect it speaks. (The test
// kit, runtime/durable/durabletest, reads the user's own tables and may.)
func TestEngineAsksNoDialect(t *testing.T) {
	r := loadRepo(t)
	for _, p := range r.packages {
		if rel(p.ImportPath) != "runtime/durable" {
			continue
		}
		for _, name := range p.GoFiles {
			src, err := os.ReadFile(filepath.Join(p.Dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(src), ".Dialect()") {
				t.Errorf("%s/%s asks a database its dialect; hint: ask the store (store.Store) instead", rel(p.ImportPath), name)
			}
		}
	}
}
