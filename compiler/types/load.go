package types

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// DefaultImports are the stdlib modules a user module may name by their
// last segment without importing them (`List.map`, `String.fromInt`), as
// Elm's default imports. The one list: the evaluator's loader uses it too.
var DefaultImports = []string{"Sky.Core.Basics", "Sky.Core.List", "Sky.Core.Maybe", "Sky.Core.Result",
	"Sky.Core.String", "Sky.Core.Char", "Sky.Core.Tuple", "Sky.Core.Task", "Sky.Core.Dict", "Sky.Core.Debug",
	// Real Sky resolves these kernel qualifiers without an import too.
	"Std.Cmd", "Std.Sub", "Sky.Core.System", "Sky.Core.Time", "Std.Log", "Sky.Core.Math", "Sky.Core.Crypto",
	"Sky.Core.Secret", "Sky.Core.Encoding", "Sky.Core.File", "Sky.Core.Path", "Sky.Core.Process", "Sky.Core.Io"}

// EntryModuleName is the module name of an entry file without a header.
const EntryModuleName = "Main"

// LoadProgram parses the entry file at path and, transitively, every module
// it imports: stdlib modules from stdlib (module name → source), user
// modules from root (module A.B is root/A/B.sky). An empty root means the
// entry file's directory and a `src` directory beside it. A module that
// cannot be found is left out (Check reports the import); a syntax error
// (a diag.List) or a file that cannot be read (a diag.Diagnostic) stops
// loading and is returned.
func LoadProgram(path, root string, stdlib map[string]string) (*Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, diag.Diagnostic{Title: "LOAD ERROR", File: path, Message: fmt.Sprintf("cannot read the program %s: %v", path, errors.Unwrap(err))}
	}
	roots := []string{root}
	if root == "" {
		roots = DefaultRoots(path)
	}
	l := &progLoader{
		prog: &Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{},
			Stdlib: slices.Sorted(maps.Keys(stdlib)), Looked: map[string][]string{}},
		stdlib: stdlib,
		roots:  roots,
	}
	if err := l.add(path, src, ""); err != nil {
		return nil, err
	}
	return l.prog, nil
}

// DefaultRoots are where user modules are looked up when no source root is
// configured: the entry file's directory, a `src` directory beside it, and
// a `src` directory beside that directory (so `tests/UserTest.sky` finds the
// project's modules under src/). An entry file below a `tests` directory
// (`tests/Lang/PatternTest.sky`, module Lang.PatternTest) also finds the
// modules of that tests tree (`Lang.Shapes` in tests/Lang/Shapes.sky) and
// the src/ beside it, as real Sky's test suites expect, and an entry file
// below a `src` directory (`src/Chess/Board.sky`, module Chess.Board) finds
// its fellow modules from that `src` (`Chess.Piece` in src/Chess/Piece.sky),
// however the path is written (`Lang/PatternTest.sky` from inside tests/
// too). An entry file that is already in a `src` directory is not looked for
// in src/src. The evaluator's loader uses the same list.
func DefaultRoots(entry string) []string {
	dir := filepath.Dir(entry)
	roots := []string{dir}
	var extra []string
	if filepath.Base(filepath.Clean(dir)) != "src" {
		extra = append(extra, filepath.Join(dir, "src"))
	}
	extra = append(extra, filepath.Join(dir, "..", "src"))
	extra = append(extra, enclosingRoots(dir)...)
	for _, r := range extra {
		if !slices.Contains(roots, filepath.Clean(r)) {
			roots = append(roots, filepath.Clean(r))
		}
	}
	return roots
}

// enclosingRoots are the nearest `tests` directory above dir (with the src/
// beside it) and the nearest `src` directory above dir, walking up the
// absolute path, given back relative to the working directory when dir was.
func enclosingRoots(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	rel := func(p string) string {
		if filepath.IsAbs(dir) {
			return p
		}
		if wd, err := os.Getwd(); err == nil {
			if r, err := filepath.Rel(wd, p); err == nil {
				return r
			}
		}
		return p
	}
	var out []string
	seenTests, seenSrc := false, false
	for d := abs; filepath.Dir(d) != d; d = filepath.Dir(d) {
		switch filepath.Base(d) {
		case "tests":
			if !seenTests {
				out = append(out, rel(d), rel(filepath.Join(filepath.Dir(d), "src")))
				seenTests = true
			}
		case "src":
			if !seenSrc {
				out = append(out, rel(d))
				seenSrc = true
			}
		}
	}
	return out
}

// ModuleAliases are second names of stdlib modules, by alias: real Sky's
// name for a module this stdlib files under another (Sky.Http.Server is
// Std.Http.Server). Importing an alias imports the module itself, one
// module with one set of types, not a copy.
var ModuleAliases = map[string]string{"Sky.Http.Server": "Std.Http.Server"}

// ResolveElmImports lets Elm's module names stand for the stdlib's, as an
// Elm programmer writes them: an import (`import Dict exposing (Dict)`,
// `import Json.Decode as Decode`) that names no user module under roots but
// a `Sky.Core` module is rewritten to that module (`Sky.Core.Dict`,
// `Sky.Core.Json.Decode`). An import of one of the ModuleAliases is
// rewritten to its module. The evaluator's loader does the same, so both
// see one program.
func ResolveElmImports(f *syntax.File, roots []string, isStdlib func(string) bool) {
	for _, imp := range f.Imports {
		short := strings.Join(imp.Module.Parts, ".")
		if real, ok := ModuleAliases[short]; ok && isStdlib(real) {
			imp.Written = short
			imp.Module.Parts = strings.Split(real, ".")
			continue
		}
		if imp.Module.Parts[0] == "Sky" || !isStdlib("Sky.Core."+short) {
			continue
		}
		user := false
		for _, root := range roots {
			if _, err := os.Stat(filepath.Join(root, filepath.Join(imp.Module.Parts...)+".sky")); err == nil {
				user = true
			}
		}
		if !user {
			imp.Written = short
			imp.Module.Parts = append([]string{"Sky", "Core"}, imp.Module.Parts...)
		}
	}
}

// CheckFile loads the program whose entry is the file at path (see
// LoadProgram) and checks it. The error is for a file that cannot be read
// or parsed; type errors come back in the list.
func CheckFile(path string, stdlib map[string]string) (diag.List, error) {
	prog, err := LoadProgram(path, "", stdlib)
	if err != nil {
		return nil, err
	}
	_, errs := Check(prog)
	return errs, nil
}

type progLoader struct {
	prog   *Program
	stdlib map[string]string
	roots  []string
}

// add parses one file under module name (empty: from its header, or Main)
// and loads what it imports.
func (l *progLoader) add(path string, src []byte, name string) error {
	f, err := syntax.ParseFile(path, src)
	if err != nil {
		return err
	}
	ResolveElmImports(f, l.roots, func(name string) bool { _, ok := l.stdlib[name]; return ok })
	if name == "" {
		name = EntryModuleName
		if f.Module != nil {
			name = f.Module.String()
		}
	}
	l.prog.Modules[name] = f
	l.prog.Sources[path] = string(src)
	deps := []string{preludeName}
	for _, imp := range f.Imports {
		deps = append(deps, imp.Module.String())
	}
	if !isStdlibModule(name) {
		deps = append(deps, DefaultImports...)
	}
	for _, dep := range deps {
		if _, done := l.prog.Modules[dep]; done || dep == name {
			continue
		}
		if err := l.load(dep); err != nil {
			return err
		}
	}
	return nil
}

func (l *progLoader) load(name string) error {
	if src, ok := l.stdlib[name]; ok {
		return l.add("<stdlib>/"+strings.ReplaceAll(name, ".", "/")+".sky", []byte(src), name)
	}
	rel := filepath.Join(strings.Split(name, ".")...) + ".sky"
	var looked []string
	for _, root := range l.roots {
		p := filepath.Join(root, rel)
		src, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			looked = append(looked, p)
			continue
		}
		if err != nil {
			return diag.Diagnostic{Title: "LOAD ERROR", File: p, Message: fmt.Sprintf("cannot read module `%s` from %s: %v", name, p, errors.Unwrap(err))}
		}
		return l.add(p, src, name)
	}
	l.prog.Looked[name] = looked
	return nil // Check reports the unknown import (UnknownImport).
}
