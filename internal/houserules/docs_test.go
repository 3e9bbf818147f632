package houserules

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryPackageSaysWhatItOwnsAndMayImport holds STYLE.md's rule that a
// package's doc comment says what it owns (its first sentence, "Package x
// is …" or "Command x …") and what it may import (a sentence with "may
// import"), so a newcomer reads the layer rules where the code is. A
// package made only of tests keeps its comment in a test file.
func TestEveryPackageSaysWhatItOwnsAndMayImport(t *testing.T) {
	r := loadRepo(t)
	for _, p := range r.packages {
		files := slices.Concat(p.GoFiles, p.CgoFiles)
		if len(files) == 0 {
			files = slices.Concat(p.TestGoFiles, p.XTestGoFiles)
		}
		doc, name := "", ""
		for _, f := range files {
			parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join(p.Dir, f), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			if parsed.Doc != nil {
				doc, name = parsed.Doc.Text(), parsed.Name.Name
				break
			}
		}
		where := rel(p.ImportPath)
		switch {
		case doc == "":
			t.Errorf("%s has no package doc comment; hint: a doc.go saying \"Package %s is …\" and what it may import", where, p.Name)
		case !strings.HasPrefix(doc, "Package "+name+" ") && !(name == "main" && strings.HasPrefix(doc, "Command ")):
			t.Errorf("%s: its package doc begins %q; hint: begin with \"Package %s \" (\"Command NAME \" for a command)", where, firstLine(doc), name)
		case !strings.Contains(doc, "may import"):
			t.Errorf("%s: its package doc does not say what it may import; hint: add a sentence such as \"It may import runtime/task and the standard library.\"", where)
		}
	}
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
