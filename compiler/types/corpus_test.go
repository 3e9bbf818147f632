package types_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"skydurable/compiler/ffi"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
)

// repoRoot is the module root, two levels above this package.
const repoRoot = "../.."

// corpusStdlib is every stdlib module: ffi.Modules() plus any stdlib/**/*.sky
// file not yet in the table (named by its module header).
func corpusStdlib(t testing.TB) map[string]string {
	t.Helper()
	mods := ffi.Modules()
	err := filepath.WalkDir(filepath.Join(repoRoot, "stdlib"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sky") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, perr := syntax.ParseFile(path, src)
		if perr != nil {
			t.Errorf("stdlib file %s does not parse: %v", path, perr)
			return nil
		}
		if f.Module == nil {
			return nil
		}
		if _, ok := mods[f.Module.String()]; !ok {
			mods[f.Module.String()] = string(src)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return mods
}

// TestCorpusStdlib checks every stdlib module together.
func TestCorpusStdlib(t *testing.T) {
	mods := corpusStdlib(t)
	prog := &types.Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{}}
	for name, src := range mods {
		file := "<stdlib>/" + name + ".sky"
		f, err := syntax.ParseFile(file, []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		prog.Modules[name] = f
		prog.Sources[file] = src
	}
	_, errs := types.Check(prog)
	for _, e := range errs {
		t.Errorf("%s", e.Error())
	}
	t.Logf("%d stdlib modules checked", len(mods))
}

// TestCorpusProjects checks the Sky programs in the repository that are
// meant to be valid: every examples/**/src/*.sky as an entry (with its
// src/ as the source root), any other examples/**/*.sky, and the
// evaluator's sample project.
func TestCorpusProjects(t *testing.T) {
	stdlib := corpusStdlib(t)
	var entries []string
	filepath.WalkDir(filepath.Join(repoRoot, "examples"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(path, ".sky") && !strings.Contains(path, string(filepath.Separator)+"src"+string(filepath.Separator)) {
			entries = append(entries, path)
		}
		if d.IsDir() && d.Name() == "src" {
			// Every file of a project's source root is checked as an
			// entry: a second program (a starter, a worker) may not be
			// reachable from Main.
			files, _ := filepath.Glob(filepath.Join(path, "*.sky"))
			entries = append(entries, files...)
			return filepath.SkipDir
		}
		return nil
	})
	entries = append(entries, filepath.Join(repoRoot, "compiler/eval/testdata/project/src/Main.sky"))
	for _, entry := range entries {
		t.Run(strings.TrimPrefix(entry, repoRoot+"/"), func(t *testing.T) {
			errs, err := types.CheckFile(entry, stdlib)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range errs {
				t.Errorf("%s", e.Error())
			}
		})
	}
}

// knownIllTyped lists testscript programs that are run successfully (or to
// a runtime error) by their scripts but are ill-typed; the checker must keep
// rejecting them with the given title until their scripts change (they
// exercise runtime errors the checker now catches at compile time).
var knownIllTyped = map[string]string{}

// shellSky finds `sky run|test|check [args]` in a shell line, up to a
// redirection, pipe or `&`.
var shellSky = regexp.MustCompile(`(?:^|\|)\s*sky\s+(?:run|test|check)\b([^<>&|]*)`)

var execLine = regexp.MustCompile(`^(!\s+)?exec\s+sky\s+(run|test|check)\b\s*(.*)$`)

// compiledMarkers in a script's assertions after a failing `exec sky`
// show that the program compiled and failed later (at run time or in a
// test), so it must check clean.
var compiledMarkers = regexp.MustCompile(`RUNTIME ERROR|\^Error: |passed, |\bFAIL\b`)

// TestCorpusTestscripts checks the programs of testscripts/*.txtar. The
// rule: the file of every `exec sky run|test|check [FILE]` line must check
// clean; a `! exec sky ...` line (expected to fail) is skipped unless its
// assertions, up to the next exec, show the program compiled (a runtime
// error, an `Error:` from main, or a test summary) — a script expecting a
// compile error is never checked — and a line run with `--unchecked` is
// skipped (it deliberately bypasses the checker).
func TestCorpusTestscripts(t *testing.T) {
	stdlib := corpusStdlib(t)
	scripts, _ := filepath.Glob(filepath.Join(repoRoot, "testscripts", "*.txtar"))
	nested, _ := filepath.Glob(filepath.Join(repoRoot, "testscripts", "*", "*.txtar"))
	scripts = append(scripts, nested...)
	for _, script := range scripts {
		ar, err := txtar.ParseFile(script)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, f := range ar.Files {
			p := filepath.Join(dir, f.Name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		entry, root := projectDefaults(dir)
		lines := strings.Split(string(ar.Comment), "\n")
		var files []string
		for i, line := range lines {
			m := execLine.FindStringSubmatch(strings.TrimSpace(line))
			if m == nil {
				continue
			}
			if m[1] != "" && !compiledAfter(lines[i+1:]) {
				continue
			}
			files = append(files, m[3])
		}
		// Shell scripts of the archive (run by `exec sh x.sh`) start sky
		// too, in the background or in a pipe; those runs must succeed.
		for _, f := range ar.Files {
			if !strings.HasSuffix(f.Name, ".sh") {
				continue
			}
			for _, line := range strings.Split(string(f.Data), "\n") {
				if m := shellSky.FindStringSubmatch(line); m != nil {
					files = append(files, m[1])
				}
			}
		}
		seen := map[string]bool{}
		for _, args := range files {
			if strings.Contains(args, "--unchecked") {
				continue // deliberately run without the checker
			}
			file := ""
			if fields := strings.Fields(args); len(fields) > 0 {
				file = fields[len(fields)-1]
			}
			if file == "" {
				file = entry
			}
			if _, err := os.Stat(filepath.Join(dir, file)); err != nil || seen[file] {
				continue // not in the archive (copied in by the script)
			}
			seen[file] = true
			key := filepath.Base(script) + ":" + file
			t.Run(key, func(t *testing.T) {
				prog, err := types.LoadProgram(filepath.Join(dir, file), root, stdlib)
				if err != nil {
					t.Fatal(err)
				}
				_, errs := types.Check(prog)
				if want, known := knownIllTyped[key]; known {
					if len(errs) == 0 || errs[0].Title != want {
						t.Errorf("%s was known ill-typed (%s) but now reports %v; update knownIllTyped", key, want, errs)
					}
					return
				}
				for _, e := range errs {
					t.Errorf("%s", e.Error())
				}
			})
		}
	}
}

func compiledAfter(lines []string) bool {
	for _, l := range lines {
		if execLine.MatchString(strings.TrimSpace(l)) || strings.HasPrefix(strings.TrimSpace(l), "exec ") {
			return false
		}
		if (strings.HasPrefix(l, "stderr") || strings.HasPrefix(l, "stdout")) && compiledMarkers.MatchString(l) {
			return true
		}
	}
	return false
}

// projectDefaults reads the entry and source root from dir/sky.toml (the
// two keys the CLI uses); without one the entry is src/Main.sky.
func projectDefaults(dir string) (entry, root string) {
	entry = "src/Main.sky"
	data, err := os.ReadFile(filepath.Join(dir, "sky.toml"))
	if err != nil {
		return entry, ""
	}
	section := ""
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "[") {
			section = strings.Trim(l, "[]")
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"`)
		switch {
		case section == "" && k == "entry":
			entry = v
		case section == "source" && k == "root":
			root = filepath.Join(dir, v)
		}
	}
	return entry, root
}
