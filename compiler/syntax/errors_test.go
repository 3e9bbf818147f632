package syntax

import (
	"strings"
	"testing"
)

// TestErrorRendering checks the Elm-style layout of one error.
func TestErrorRendering(t *testing.T) {
	e := Error{
		Pos:        Pos{File: "src/Main.sky", Line: 12, Col: 9, Offset: 0},
		End:        Pos{File: "src/Main.sky", Line: 12, Col: 12},
		Msg:        "unexpected `foo`",
		Expected:   "`=`",
		Found:      "the name `foo`",
		Hint:       "write it like this",
		SourceLine: "    bar foo",
	}
	want := "src/Main.sky:12:9: unexpected `foo`\n" +
		"    |\n" +
		" 12 |     bar foo\n" +
		"    |         ^^^\n" +
		"expected: `=`\n" +
		"found:    the name `foo`\n" +
		"hint: write it like this"
	if got := e.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// TestErrorCaretWithTabs checks that a caret lines up under a column that
// comes after tabs (tabs expand to 4-column stops in the snippet).
func TestErrorCaretWithTabs(t *testing.T) {
	src := "f =\n\tx ;\n"
	_, err := ParseFile("tab.sky", []byte(src))
	list, ok := err.(ErrorList)
	if !ok || len(list) == 0 {
		t.Fatalf("want errors, got %v", err)
	}
	if list[0].Pos.Col != 7 {
		t.Errorf("column = %d, want 7 (tab to column 5, then `x `)", list[0].Pos.Col)
	}
	lines := strings.Split(list[0].Error(), "\n")
	srcLine, caretLine := lines[2], lines[3]
	if strings.Contains(srcLine, "\t") {
		t.Errorf("tabs not expanded in %q", srcLine)
	}
	if strings.Index(caretLine, "^") != strings.Index(srcLine, ";") {
		t.Errorf("caret misaligned:\n%s\n%s", srcLine, caretLine)
	}
}

// TestFormatErrorsSortsAndFillsSource checks FormatErrors on errors built
// without source lines and out of order.
func TestFormatErrorsSortsAndFillsSource(t *testing.T) {
	src := []byte("a = 1\nb = 2\n")
	errs := []Error{
		{Pos: Pos{File: "x.sky", Line: 2, Col: 1, Offset: 6}, Msg: "second"},
		{Pos: Pos{File: "x.sky", Line: 1, Col: 5, Offset: 4}, Msg: "first"},
	}
	got := FormatErrors(src, errs)
	want := "x.sky:1:5: first\n   |\n 1 | a = 1\n   |     ^\n\nx.sky:2:1: second\n   |\n 2 | b = 2\n   | ^"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if errs[0].Msg != "second" || errs[0].SourceLine != "" {
		t.Errorf("FormatErrors modified its argument: %+v", errs[0])
	}
}

// TestInterpDesugar checks the `++` chain an Interp stands for.
func TestInterpDesugar(t *testing.T) {
	e, err := ParseExpr(`"""Dear {{user.name}}, you owe {{String.fromInt n}}."""`)
	if err != nil {
		t.Fatal(err)
	}
	in, ok := e.(*Interp)
	if !ok {
		t.Fatalf("got %T, want *Interp", e)
	}
	want := `("Dear " ++ (user.name ++ (", you owe " ++ ((String.fromInt n) ++ "."))))`
	if got := Print(in.Desugar()); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got := Print((&Interp{}).Desugar()); got != `""` {
		t.Errorf("empty interp desugars to %s", got)
	}
	// Literal parts and interpolated expressions carry their real positions.
	if lit := in.Parts[2].(*StringLit); lit.Start.Col != 22 || lit.End.Col != 32 {
		t.Errorf("literal part spans columns %d-%d, want 22-32", lit.Start.Col, lit.End.Col)
	}
	v := in.Parts[1].(*Access)
	if v.Start.Line != 1 || v.Start.Col != 11 {
		t.Errorf("interpolated expr at %d:%d, want 1:11", v.Start.Line, v.Start.Col)
	}
}
