package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"skydurable/runtime/durable"
)

// The docs test: every ```elm block of README.md and docs/ is checked
// by the real `sky`, and the complete programs and test modules are run
// with the output the page states. (docs/stdlib.md has its own format and
// test, TestStdlibDoc.) The word after `elm` on the fence line says what a
// block is; docs/language.md ("Examples in these docs") tells writers:
//
//	```elm            a fragment: declarations (imports first, if any),
//	                  checked as a module of their own that imports Codec,
//	                  Db (Db, SqlValue(..)), Durable (Ctx, WorkflowDef),
//	                  Error, Time and println unless it imports them itself
//	```elm module     a complete module: checked, and importable by the
//	                  page's later blocks
//	```elm program    a complete program: checked, run with `sky run`; its
//	                  stdout must be the page's next ```output block
//	```elm test       a test module: run with `sky test`; its stdout must
//	                  be the page's next ```output block
//	```elm refused    a complete program `sky check` refuses: what it
//	                  prints must be the page's next ```output block
//	```elm signatures standard-library signatures, `Module.name : type`
//	                  (continued on indented lines): each must be the
//	                  type the module declares
//
// What a fragment needs and the page does not show (the types and modules
// it uses) is written in an HTML comment just before its fence, invisible
// on the rendered page: `<!-- elm context` then txtar text — lines before
// the first `-- src/Name.sky --` header are added to the fragment (imports
// go with its imports), each header a file of the fragment's project —
// then `-->`.

// docBlock is one ```elm block of a page.
type docBlock struct {
	page    string
	line    int
	role    string
	code    string
	context string
	output  *string
}

// docFence matches a fence line: its indent, backticks and info string.
var docFence = regexp.MustCompile("^( *)(```+)(.*)$")

// fragmentImports are the imports every fragment gets, keyed by module.
var fragmentImports = [][2]string{
	{"Std.Codec", "import Std.Codec as Codec"},
	{"Std.Db", "import Std.Db as Db exposing (Db, SqlValue(..))"},
	{"Std.Durable", "import Std.Durable as Durable exposing (Ctx, WorkflowDef)"},
	{"Std.Log", "import Std.Log exposing (println)"},
	{"Sky.Core.Error", "import Sky.Core.Error as Error"},
	{"Sky.Core.Time", "import Sky.Core.Time as Time"},
}

// parseDocBlocks reads the elm blocks of a page, each with its context and
// (for a program or a test) its stated output.
func parseDocBlocks(t *testing.T, page, text string) []docBlock {
	t.Helper()
	lines := strings.Split(text, "\n")
	var blocks []docBlock
	var context string
	waiting := -1 // the block whose output block is still to come
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "<!-- elm context" {
			j := i + 1
			for j < len(lines) && strings.TrimSpace(lines[j]) != "-->" {
				j++
			}
			context = strings.Join(lines[i+1:j], "\n") + "\n"
			i = j
			continue
		}
		m := docFence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent, ticks, info := m[1], m[2], strings.Fields(m[3])
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != ticks {
			j++
		}
		var body strings.Builder
		for _, l := range lines[i+1 : j] {
			body.WriteString(strings.TrimPrefix(l, indent) + "\n")
		}
		switch {
		case len(info) > 0 && info[0] == "output" && waiting >= 0:
			out := body.String()
			blocks[waiting].output = &out
			waiting = -1
		case len(info) > 0 && info[0] == "elm":
			b := docBlock{page: page, line: i + 1, code: body.String(), context: context}
			if len(info) > 1 {
				b.role = info[1]
			}
			switch b.role {
			case "", "module", "program", "test", "refused", "signatures":
			default:
				t.Errorf("%s:%d: unknown kind of example %q (fragment, module, program, test or refused: see docs_test.go)", page, i+1, b.role)
			}
			if waiting >= 0 {
				t.Errorf("%s:%d: the example has no ```output block after it", page, blocks[waiting].line)
				waiting = -1
			}
			if b.role == "program" || b.role == "test" || b.role == "refused" {
				waiting = len(blocks)
			}
			blocks = append(blocks, b)
		}
		context = "" // a context is for the next block only
		i = j
	}
	if waiting >= 0 {
		t.Errorf("%s:%d: the example has no ```output block after it", page, blocks[waiting].line)
	}
	return blocks
}

// moduleName is the name in a module's header, or "".
func moduleName(code string) string {
	m := regexp.MustCompile(`(?m)^module\s+([A-Z][\w.]*)`).FindStringSubmatch(code)
	if m == nil {
		return ""
	}
	return m[1]
}

// fragmentSource makes a fragment (and its context's preamble) a module.
func fragmentSource(fragment, preamble string) string {
	var imports, decls []string
	for _, part := range []string{preamble, fragment} {
		for _, l := range strings.Split(strings.TrimRight(part, "\n"), "\n") {
			if strings.HasPrefix(l, "import ") {
				imports = append(imports, l)
			} else {
				decls = append(decls, l)
			}
		}
	}
	var std []string
	for _, imp := range fragmentImports {
		mine := false
		for _, l := range imports {
			mine = mine || strings.HasPrefix(l, "import "+imp[0]+" ") || l == "import "+imp[0]
		}
		if !mine {
			std = append(std, imp[1])
		}
	}
	return strings.Join(append(std, imports...), "\n") + "\n\n\n" + strings.Join(decls, "\n") + "\n"
}

// docScript is the testscript that checks (and runs) block b, given the
// complete modules of its page before it.
func docScript(t *testing.T, b docBlock, modules map[string]string) []byte {
	t.Helper()
	ar := txtar.Parse([]byte(b.context))
	files := map[string]string{}
	for name, src := range modules {
		files["src/"+strings.ReplaceAll(name, ".", "/")+".sky"] = src
	}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	var script strings.Builder
	entry := "src/Main.sky"
	switch b.role {
	case "":
		files[entry] = fragmentSource(b.code, string(ar.Comment))
		fmt.Fprintf(&script, "exec sky check %s\n", entry)
	case "test":
		entry = "tests/" + moduleName(b.code) + ".sky"
		files[entry] = b.code
	default:
		if name := moduleName(b.code); name != "" {
			entry = "src/" + strings.ReplaceAll(name, ".", "/") + ".sky"
		}
		files[entry] = b.code
		if b.role != "refused" {
			fmt.Fprintf(&script, "exec sky check %s\n", entry)
		}
	}
	if b.output != nil && b.role == "refused" {
		fmt.Fprintf(&script, "! exec sky check %s\ncmp stderr want.txt\n", entry)
		files["want.txt"] = *b.output
	} else if b.output != nil {
		cmd := map[string]string{"program": "run", "test": "test"}[b.role]
		fmt.Fprintf(&script, "exec sky %s %s\ncmp stdout want.txt\n", cmd, entry)
		files["want.txt"] = *b.output
	}
	out := &txtar.Archive{Comment: []byte(fmt.Sprintf("# %s:%d\n", b.page, b.line) + script.String())}
	for name, data := range files {
		out.Files = append(out.Files, txtar.File{Name: name, Data: []byte(data)})
	}
	return txtar.Format(out)
}

// TestDocExamples checks every Sky example of README.md and docs/*.md
// (but docs/stdlib.md) with the real sky, one script per example, named
// after its page and line.
func TestDocExamples(t *testing.T) {
	pages := []string{"../../README.md"}
	for _, pattern := range []string{"../../docs/*.md", "../../docs/*/*.md"} {
		more, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, more...)
	}
	dir := t.TempDir()
	surface := map[string]string{}
	for _, e := range stdlibSurface(t) {
		surface[docAlias(e.module)+"."+e.name] = e.typ
	}
	n := 0
	for _, path := range pages {
		if filepath.Base(path) == "stdlib.md" {
			continue
		}
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		page := strings.TrimPrefix(path, "../../")
		modules := map[string]string{}
		for _, b := range parseDocBlocks(t, page, string(text)) {
			if b.role == "signatures" {
				checkSignatures(t, b, surface)
				continue
			}
			name := strings.NewReplacer("/", "-", ".md", "").Replace(page) + fmt.Sprintf("-%d.txtar", b.line)
			if err := os.WriteFile(filepath.Join(dir, name), docScript(t, b, modules), 0o644); err != nil {
				t.Fatal(err)
			}
			if b.role == "module" {
				modules[moduleName(b.code)] = b.code
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no Sky example found in README.md and docs/*.md")
	}
	testscript.Run(t, testscript.Params{Dir: dir, RequireExplicitExec: true, Setup: hermeticScript})
}

// docSignature is the start of a `Module.name : type` line.
var docSignature = regexp.MustCompile(`^([A-Z]\w*\.[a-z]\w*) : `)

// checkSignatures compares each signature of b with the type its module
// declares (surface maps `Alias.name` to it).
func checkSignatures(t *testing.T, b docBlock, surface map[string]string) {
	t.Helper()
	sigs := map[string]string{}
	var order []string
	for _, l := range strings.Split(strings.TrimRight(b.code, "\n"), "\n") {
		if m := docSignature.FindStringSubmatch(l); m != nil {
			order = append(order, m[1])
			sigs[m[1]] = strings.TrimPrefix(l, m[0])
		} else if len(order) > 0 && strings.HasPrefix(l, " ") {
			sigs[order[len(order)-1]] += " " + l
		} else {
			t.Errorf("%s:%d: %q is not a signature `Module.name : type`", b.page, b.line, l)
		}
	}
	for _, name := range order {
		want, ok := surface[name]
		switch {
		case !ok:
			t.Errorf("%s:%d: the standard library has no %s", b.page, b.line, name)
		case normalType(sigs[name]) != normalType(want):
			t.Errorf("%s:%d: %s is documented as\n\t%s\nbut declared as\n\t%s", b.page, b.line, name, normalType(sigs[name]), normalType(want))
		}
	}
}

// TestDurableDocsQuoteTheSignalWords: docs/durable.md quotes, word for word,
// the line `sky durable signal` prints for each outcome (a script that
// matches the page's text must match the command's).
func TestDurableDocsQuoteTheSignalWords(t *testing.T) {
	page, err := os.ReadFile("../../docs/durable.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(page)), " ") // quotes wrap across lines
	for _, o := range []durable.SignalOutcome{durable.SignalStored, durable.SignalDuplicate, durable.SignalRunCancelled,
		durable.SignalReplaced, durable.SignalSentNew} {
		if m := o.Message("ID", "NAME"); !strings.Contains(text, "`"+m+"`") {
			t.Errorf("docs/durable.md does not quote what sky durable signal prints:\n\t%s", m)
		}
	}
}
