package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
	"skydurable/runtime/project"
)

// The doc test of docs/stdlib.md: every value every stdlib module exposes
// (the compiler's module registry, compiler/ffi.Modules) has an entry with
// its type as the module declares it, and an example; the examples
// type-check as one program, an example whose value is a Bool is True, and
// the examples that are a Test (Sky.Test) pass when run.
//
// The format (docs/stdlib.md says it too):
//
//	## Sky.Core.List                 a module
//	```elm decls                     optional: declarations its examples use
//	### List.map                     an entry: the module's alias, the name
//	`map : (a -> b) -> List a -> List b`
//	```elm                           the example: one expression
//	List.map (\x -> x * 2) [ 1, 2 ] == [ 2, 4 ]
//	```
//
// docs/stdlib-todo.txt lists the entries that have no example yet (one
// `Module.name` a line); an entry listed there must not have one, so the
// list only shrinks.

const stdlibDoc = "../../docs/stdlib.md"
const stdlibTodo = "../../docs/stdlib-todo.txt"

// docAlias is the name a module's examples use for it: its last segment,
// except where two modules would share one.
func docAlias(module string) string {
	switch module {
	case "Std.Durable.Test":
		return "DurableTest"
	case "Std.Db.Decode":
		return "DbDecode"
	}
	return module[strings.LastIndex(module, ".")+1:]
}

// surfaceEntry is one exposed value of a stdlib module.
type surfaceEntry struct {
	module, name, typ, summary string
}

// stdlibSurface reads every exposed value of every stdlib module, with its
// annotation as written (whitespace made single spaces) and the first
// sentence of its doc comment.
func stdlibSurface(t *testing.T) []surfaceEntry {
	t.Helper()
	mods := ffi.Modules()
	var out []surfaceEntry
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range mods {
			if !yield(n) {
				return
			}
		}
	}) {
		f, err := syntax.ParseFile(name, []byte(mods[name]))
		if err != nil {
			t.Fatal(err)
		}
		decls := map[string]*syntax.ValueDecl{}
		for _, d := range f.Decls {
			if v, ok := d.(*syntax.ValueDecl); ok {
				decls[v.Name.Name] = v
			}
		}
		for _, it := range f.Exposing.Items {
			if it.Kind != syntax.ExposeValue {
				continue
			}
			v := decls[it.Name]
			if v == nil || v.Annotation == nil {
				t.Errorf("%s exposes %s, which has no annotated declaration in the module", name, it.Name)
				continue
			}
			sp := v.Annotation.Type.Range()
			e := surfaceEntry{module: name, name: it.Name, typ: normalType(mods[name][sp.Start.Offset:sp.End.Offset])}
			if v.Doc != nil {
				e.summary = firstSentence(v.Doc.Text)
			}
			out = append(out, e)
		}
	}
	return out
}

func normalType(s string) string { return strings.Join(strings.Fields(s), " ") }

func firstSentence(doc string) string {
	s := strings.Join(strings.Fields(doc), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}

// docEntry is one entry of docs/stdlib.md.
type docEntry struct {
	typ, example string
	line         int // of the heading
}

// docModule is one module section of docs/stdlib.md.
type docModule struct {
	decls   string
	entries map[string]*docEntry // by name
}

var typeLine = regexp.MustCompile("^`([a-z][A-Za-z0-9_]*) : (.*)`$")

// parseStdlibDoc reads the module sections and entries of docs/stdlib.md.
func parseStdlibDoc(t *testing.T, text string) map[string]*docModule {
	t.Helper()
	mods := map[string]*docModule{}
	var mod *docModule
	var modName string
	var entry *docEntry
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			modName = strings.TrimSpace(line[3:])
			mod = &docModule{entries: map[string]*docEntry{}}
			mods[modName] = mod
			entry = nil
		case strings.HasPrefix(line, "### ") && mod != nil:
			heading := strings.TrimSpace(line[4:])
			name := strings.TrimPrefix(heading, docAlias(modName)+".")
			entry = &docEntry{line: i + 1}
			if _, dup := mod.entries[name]; dup {
				t.Errorf("docs/stdlib.md:%d: a second entry for %s.%s", i+1, modName, name)
			}
			mod.entries[name] = entry
		case entry != nil && entry.typ == "" && typeLine.MatchString(line):
			entry.typ = normalType(typeLine.FindStringSubmatch(line)[2])
		case strings.HasPrefix(line, "```elm"):
			var body []string
			for i++; i < len(lines) && lines[i] != "```"; i++ {
				body = append(body, lines[i])
			}
			code := strings.Join(body, "\n")
			switch {
			case strings.TrimSpace(line) == "```elm decls" && mod != nil:
				mod.decls += code + "\n\n"
			case entry != nil && entry.example == "":
				entry.example = code
			}
		}
	}
	return mods
}

func TestStdlibDoc(t *testing.T) {
	text, err := os.ReadFile(stdlibDoc)
	if err != nil {
		t.Fatal(err)
	}
	todoText, err := os.ReadFile(stdlibTodo)
	if err != nil {
		t.Fatal(err)
	}
	todo := map[string]bool{}
	for _, l := range strings.Split(string(todoText), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			todo[l] = true
		}
	}
	doc := parseStdlibDoc(t, string(text))
	surface := stdlibSurface(t)

	// Every exposed value has an entry with its type.
	var missing []string
	var stubs strings.Builder
	lastModule := ""
	known := map[string]bool{}
	for _, e := range surface {
		full := e.module + "." + e.name
		known[full] = true
		m := doc[e.module]
		var de *docEntry
		if m != nil {
			de = m.entries[e.name]
		}
		switch {
		case de == nil:
			missing = append(missing, full+" : "+e.typ)
			if e.module != lastModule {
				if m == nil {
					fmt.Fprintf(&stubs, "\n## %s\n", e.module)
				} else {
					fmt.Fprintf(&stubs, "\n(in ## %s)\n", e.module)
				}
				lastModule = e.module
			}
			fmt.Fprintf(&stubs, "\n### %s\n\n`%s : %s`\n\n%s\n\n```elm\n\n```\n", entryHeading(e), e.name, e.typ, e.summary)
		case de.typ != e.typ:
			t.Errorf("docs/stdlib.md:%d: %s has the type `%s` in the doc, but the module declares `%s`", de.line, full, de.typ, e.typ)
		case de.example == "" && !todo[full]:
			t.Errorf("docs/stdlib.md:%d: %s has no example; write one (an expression in an ```elm block), or list it in docs/stdlib-todo.txt", de.line, full)
		case de.example != "" && todo[full]:
			t.Errorf("docs/stdlib.md:%d: %s has an example now: remove it from docs/stdlib-todo.txt", de.line, full)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/stdlib.md lacks an entry for %d stdlib value(s):\n  %s\nAdd these entries (type and summary from the module; write the example):\n%s",
			len(missing), strings.Join(missing, "\n  "), stubs.String())
	}
	for full := range todo {
		if !known[full] {
			t.Errorf("docs/stdlib-todo.txt lists %s, which no stdlib module exposes", full)
		}
	}
	for name, m := range doc {
		if _, ok := ffi.Modules()[name]; !ok {
			t.Errorf("docs/stdlib.md has a section ## %s, which is not a stdlib module", name)
			continue
		}
		for entry, de := range m.entries {
			if !known[name+"."+entry] {
				t.Errorf("docs/stdlib.md:%d: %s.%s is not exposed by %s", de.line, name, entry, name)
			}
		}
	}

	checkDocExamples(t, doc, surface)
}

func entryHeading(e surfaceEntry) string {
	if e.module == "Sky.Core.Prelude" {
		return e.name
	}
	return docAlias(e.module) + "." + e.name
}

// checkDocExamples writes every example as a top-level value of one program
// that imports every stdlib module under its doc alias, type-checks and
// loads it, checks that each Bool example is True and runs the Test
// examples as the program's tests.
func checkDocExamples(t *testing.T, doc map[string]*docModule, surface []surfaceEntry) {
	var src strings.Builder
	src.WriteString("module Main exposing (main)\n\n")
	modules := ffi.Modules()
	names := make([]string, 0, len(modules))
	for n := range modules {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&src, "import %s as %s\n", n, docAlias(n))
	}
	src.WriteString("\n\n")
	for _, n := range names {
		if m := doc[n]; m != nil && m.decls != "" {
			src.WriteString(m.decls)
		}
	}
	// which maps a program line to the entry whose example it is.
	type span struct {
		from, to int
		entry    string
		line     int
	}
	var spans []span
	var values []string
	for i, e := range surface {
		m := doc[e.module]
		if m == nil || m.entries[e.name] == nil || m.entries[e.name].example == "" {
			continue
		}
		de := m.entries[e.name]
		v := fmt.Sprintf("example%d", i)
		values = append(values, v)
		from := strings.Count(src.String(), "\n") + 1
		fmt.Fprintf(&src, "%s =\n", v)
		for _, l := range strings.Split(de.example, "\n") {
			fmt.Fprintf(&src, "    %s\n", l)
		}
		src.WriteString("\n\n")
		spans = append(spans, span{from, strings.Count(src.String(), "\n"), e.module + "." + e.name, de.line})
	}
	src.WriteString("main : Task Error ()\nmain =\n    Task.succeed ()\n")

	dir := t.TempDir()
	file := filepath.Join(dir, "Main.sky")
	if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	where := func(line int) string {
		for _, s := range spans {
			if line >= s.from && line <= s.to {
				return fmt.Sprintf("the example of %s (docs/stdlib.md:%d)", s.entry, s.line)
			}
		}
		return "the decls blocks"
	}
	lib := standardLibrary(loadOptions{}, project.Project{Root: dir})
	checked, err := types.LoadProgram(file, dir, lib.Modules)
	if err != nil {
		t.Fatalf("the examples do not load: %v", err)
	}
	info, errs := types.Check(checked)
	if len(errs) > 0 {
		for _, d := range errs {
			t.Errorf("%s does not type-check: %s %s", where(d.Start.Line), d.Title, d.Message)
		}
		return
	}
	// The examples that are a Test are run, as `sky test` runs a module's
	// tests, each in a suite named after its entry: a test the doc shows
	// must pass.
	var suites []string
	for i, v := range values {
		vi := info.Values["Main"][v]
		if c, ok := types.Prune(vi.Scheme.Type).(*types.Con); ok && c.Module == "Sky.Test" && c.Name == "Test" {
			suites = append(suites, fmt.Sprintf("Test.suite %q [ %s ]", fmt.Sprintf("%s (docs/stdlib.md:%d)", spans[i].entry, spans[i].line), v))
		}
	}
	if len(suites) > 0 {
		src.WriteString("\n\ntests =\n    [ " + strings.Join(suites, "\n    , ") + "\n    ]\n")
		if err := os.WriteFile(file, []byte(src.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := eval.Load(file, eval.Options{Root: dir, Stdlib: lib})
	if err != nil {
		t.Fatalf("the examples do not load: %v", err)
	}
	for i, v := range values {
		got, err := prog.Value(v)
		if err != nil {
			t.Errorf("%s: %v", where(spans[i].from), err)
			continue
		}
		if b, ok := got.(bool); ok && !b {
			t.Errorf("%s is False; an example that is a Bool must be True", where(spans[i].from))
		}
	}
	if len(suites) == 0 {
		t.Fatal("no example of docs/stdlib.md is a Test; the test that runs them finds none")
	}
	var out strings.Builder
	rep, err := prog.RunTests(context.Background(), &out)
	if err != nil || rep.Failed > 0 {
		t.Errorf("the examples that are a Test must pass; sky test says (%v):\n%s", err, out.String())
	}
}
