package syntax

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/compiler/diag"
)

// FuzzParse checks that no input makes the parser panic or loop, that every
// error has a position inside the input and renders, and that internal
// errors (recovered panics) never happen. The seed corpus (the golden error
// files, the checkout example and the generated benchmark program) runs in
// every `go test`.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/errors/*.sky")
	for _, path := range files {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(src))
	}
	for _, s := range []string{
		checkoutSrc,
		generateProgram(2),
		"",
		"\t",
		"module",
		"x = \"\"\"{{",
		"x = \"\"\"{{a}",
		"x = '\\u{",
		"x = {- {- -}",
		"x = (((((",
		"f x = case x of\n  A -> let\n  in",
		"x = a.b.c.d .e (f).g",
		"type alias A = { a | }",
		"import A as b exposing (",
		"x = -",
		"x = 0x",
		"x = 1e",
		"x = \"\\u{D800}\"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, err := ParseFile("fuzz.sky", []byte(src))
		if file == nil {
			t.Fatalf("ParseFile returned a nil File")
		}
		_ = Print(file)
		if err != nil {
			checkErrors(t, src, err)
		}
		e, err := ParseExpr(src)
		if err == nil {
			_ = Print(e)
		} else {
			checkErrors(t, src, err)
		}
	})
}

func checkErrors(t *testing.T, src string, err error) {
	t.Helper()
	list, ok := err.(diag.List)
	if !ok || len(list) == 0 {
		t.Fatalf("error is %T %v, want a non-empty diag.List", err, err)
	}
	for _, e := range list {
		if e.Start.Line < 1 || e.Start.Col < 1 || e.Start.Line > strings.Count(src, "\n")+1 {
			t.Fatalf("error with bad position %+v in %q", e.Start, src)
		}
		if strings.Contains(e.Message, "internal parser error") {
			t.Fatalf("internal error on %q: %v", src, e)
		}
	}
	_ = list.Error()
}
