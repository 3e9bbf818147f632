package syntax

import (
	"fmt"
	"strings"
	"testing"
)

// lexAll returns "kind:text" strings for every token of src (without EOF).
func lexAll(t *testing.T, src string) ([]string, []token) {
	t.Helper()
	errs := &errorSink{src: []byte(src)}
	lx := newLexer("l.sky", []byte(src), Pos{File: "l.sky", Line: 1, Col: 1}, len(src), errs)
	var out []string
	var toks []token
	for {
		tok := lx.nextToken()
		if tok.kind == tEOF {
			break
		}
		toks = append(toks, tok)
		desc := tok.text
		if tok.module != "" {
			desc = tok.module + "|" + tok.name
		}
		out = append(out, desc)
	}
	if len(errs.errs) > 0 {
		t.Fatalf("lexing %q: %v", src, errs.errs)
	}
	return out, toks
}

func TestLexerTokens(t *testing.T) {
	tests := []struct{ src, want string }{
		{"Durable.step ctx", "Durable|step ctx"},
		{"Sky.Core.List.map", "Sky.Core.List|map"},
		{"Durable.FailSafe", "Durable|FailSafe"},
		{"r.a.b", "r .a .b"},
		{"(f x).y", "( f x ) .y"},
		{"List.map .name", "List|map .name"},
		{"a|>b<|c>>d<<e", "a |> b <| c >> d << e"},
		{"x::xs ++ ys", "x :: xs ++ ys"},
		{"a // b /= c", "a // b /= c"},
		{"exposing (..)", "exposing ( .. )"},
		{"\\x -> x", "\\ x -> x"},
		{"0xFF 1.5 1e-3 42", "0xFF 1.5 1e-3 42"},
		{"x -- comment\ny", "x y"},
		{"x {- a {- nested -} b -} y", "x y"},
		{"if then else case of let in", "if then else case of let in"},
	}
	for _, tc := range tests {
		got, _ := lexAll(t, tc.src)
		if strings.Join(got, " ") != tc.want {
			t.Errorf("lex %q = %q, want %q", tc.src, strings.Join(got, " "), tc.want)
		}
	}
}

func TestLexerLayoutFacts(t *testing.T) {
	_, toks := lexAll(t, "f -1\n  a - b\n\tc-d")
	var got []string
	for _, tok := range toks {
		got = append(got, fmt.Sprintf("%s@%d:%d first=%v before=%v after=%v", tok.text, tok.pos.Line, tok.pos.Col, tok.first, tok.spaceBefore, tok.spaceAfter))
	}
	want := []string{
		"f@1:1 first=true before=true after=true",
		"-@1:3 first=false before=true after=false",
		"1@1:4 first=false before=false after=true",
		"a@2:3 first=true before=true after=true",
		"-@2:5 first=false before=true after=true",
		"b@2:7 first=false before=true after=true",
		"c@3:5 first=true before=true after=false",
		"-@3:6 first=false before=false after=false",
		"d@3:7 first=false before=false after=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLexerLiterals(t *testing.T) {
	_, toks := lexAll(t, `0x1f 007 1.25e2 'x' '\'' "a\u{41}\\" "q\x01\x7e" '\x41'`)
	if toks[0].intVal != 31 || toks[1].intVal != 7 || toks[2].floatVal != 125 {
		t.Errorf("numbers = %d %d %g", toks[0].intVal, toks[1].intVal, toks[2].floatVal)
	}
	if toks[3].charVal != 'x' || toks[4].charVal != '\'' {
		t.Errorf("chars = %q %q", toks[3].charVal, toks[4].charVal)
	}
	if toks[5].strVal != `aA\` {
		t.Errorf("string = %q", toks[5].strVal)
	}
	if toks[6].strVal != "q\x01~" || toks[7].charVal != 'A' {
		t.Errorf("\\xHH escapes = %q %q", toks[6].strVal, toks[7].charVal)
	}
}

func TestLexerCRLF(t *testing.T) {
	f, err := ParseFile("crlf.sky", []byte("module M exposing (..)\r\n\r\nf x =\r\n    case x of\r\n        A -> 1\r\n        B -> 2\r\ns = \"\"\"a\r\nb\"\"\"\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Print(f); got != "module M exposing (..)\nf x = (case x of A -> 1; B -> 2)\ns = \"a\\nb\"\n" {
		t.Errorf("got %q", got)
	}
}

func TestLexerDocComments(t *testing.T) {
	src := "{-| one -}\nx = 1\n{- not doc -}\n{-| two\n  lines -}\ny = 2\n"
	errs := &errorSink{src: []byte(src)}
	lx := newLexer("d.sky", []byte(src), Pos{File: "d.sky", Line: 1, Col: 1}, len(src), errs)
	for lx.nextToken().kind != tEOF {
	}
	if len(lx.docs) != 2 || lx.docs[0].Text != " one " || lx.docs[1].Text != " two\n  lines " {
		t.Fatalf("docs = %+v", lx.docs)
	}
	if lx.docs[1].Start.Line != 4 || lx.docs[1].End.Line != 5 {
		t.Errorf("second doc span = %+v", lx.docs[1].Span)
	}
}
