package syntax

import (
	"strings"
	"testing"

	"skydurable/compiler/diag"
)

// parseOK parses src as a file and fails the test on any error.
func parseOK(t *testing.T, src string) *File {
	t.Helper()
	f, err := ParseFile("test.sky", []byte(src))
	if err != nil {
		t.Fatalf("ParseFile:\n%s\nerror:\n%v", src, err)
	}
	return f
}

// TestParseDecls checks headers, imports and every declaration form.
func TestParseDecls(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"no header", "x = 1\n", "x = 1\n"},
		{"header exposing all", "module Main exposing (..)\n\nx = 1\n", "module Main exposing (..)\nx = 1\n"},
		{"header items", "module A.B exposing (x, T, U(..), (|>))\n", "module A.B exposing (x, T, U(..), (|>))\n"},
		{"listed constructors", "module A exposing (T(B, C))\nimport M exposing (U(X))\n", "module A exposing (T(B, C))\nimport M exposing (U(X))\n"},
		{"import as _", "import Std.Log as _ exposing (println)\n", "import Std.Log as _ exposing (println)\n"},
		{"imports",
			"import Sky.Core.Task as Task\nimport Std.Db as Db exposing (Db, SqlValue(..))\nimport Std.Log exposing (println)\nimport Lib.User\nimport Std.Durable exposing (..)\n",
			"import Sky.Core.Task as Task\nimport Std.Db as Db exposing (Db, SqlValue(..))\nimport Std.Log exposing (println)\nimport Lib.User\nimport Std.Durable exposing (..)\n"},
		{"annotated function", "add : Int -> Int -> Int\nadd a b =\n    a + b\n", "add : (Int -> (Int -> Int)); add a b = (a + b)\n"},
		{"ctor pattern param", "conn (Ctx c) = c.db\n", "conn (Ctx c) = c.db\n"},
		{"param patterns", "f _ ( a, b ) { c } [] Nothing = a\n", "f _ (a, b) {c} [] Nothing = a\n"},
		{"ffi kernel", "step : Ctx -> Codec a -> String -> Task Error a -> Task Error a\nstep =\n    Ffi.kernel \"Durable_step\"\n",
			"step : (Ctx -> ((Codec a) -> (String -> ((Task Error a) -> (Task Error a))))); step = (Ffi.kernel \"Durable_step\")\n"},
		{"type alias record", "type alias R = { a : Int }\n", "type alias R = {a : Int}\n"},
		{"type alias params", "type alias Pair a b = ( a, b )\n", "type alias Pair a b = (a, b)\n"},
		{"type alias extensible", "type alias Named r = { r | name : String, age : Int }\n", "type alias Named r = {r | name : String, age : Int}\n"},
		{"type alias multi-line record",
			"type alias User =\n    { name : String\n    , tags : List String\n    , meta : Maybe (Dict String String)\n    }\n",
			"type alias User = {name : String, tags : (List String), meta : (Maybe (Dict String String))}\n"},
		{"custom type", "type T = A | B Int | C { x : Int }\n", "type T = A | B Int | C {x : Int}\n"},
		{"custom type params multiline", "type Result e a\n    = Ok a\n    | Err e\n", "type Result e a = Ok a | Err e\n"},
		{"custom type arg kinds", "type Shape = Poly (List ( Float, Float )) Db.Handle () (Int -> Int)\n", "type Shape = Poly (List (Float, Float)) Db.Handle () (Int -> Int)\n"},
		{"types", "f : Task Error () -> ( Int, String, a ) -> (a -> b) -> {} -> Durable.WorkflowDef i o\nf a = a\n",
			"f : ((Task Error ()) -> ((Int, String, a) -> ((a -> b) -> ({} -> (Durable.WorkflowDef i o))))); f a = a\n"},
		{"unit type", "main : Task Error ()\nmain = Task.succeed ()\n", "main : (Task Error ()); main = (Task.succeed ())\n"},
		{"several decls", "a = 1\nb = 2\n\n\nc = 3\n", "a = 1\nb = 2\nc = 3\n"},
		{"comments everywhere", "-- top\nx = {- inline {- nested -} -} 1 -- trailing\n{- block\n-}\ny = 2\n", "x = 1\ny = 2\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := parseOK(t, tc.src)
			if got := Print(f); got != tc.want {
				t.Errorf("source:\n%s\n got  %q\n want %q", tc.src, got, tc.want)
			}
		})
	}
}

// TestDocComments checks that doc comments attach to the declaration that
// follows them and that the module doc is recorded separately.
func TestDocComments(t *testing.T) {
	src := `module Shop exposing (..)

{-| The shop module. -}

import Std.Log

{-| The price of a thing. -}
price : Int
price = 3

-- not a doc
helper = 1

{-| An item. -}
type alias Item = { name : String }

{-| A colour. -}
type Colour = Red | Blue
`
	f := parseOK(t, src)
	if f.Docs == nil || f.Docs.Text != " The shop module. " {
		t.Fatalf("module docs = %+v, want %q", f.Docs, " The shop module. ")
	}
	want := map[string]string{"price": " The price of a thing. ", "helper": "", "Item": " An item. ", "Colour": " A colour. "}
	for _, d := range f.Decls {
		var name string
		var doc *DocComment
		switch d := d.(type) {
		case *ValueDecl:
			name, doc = d.Name.Name, d.Doc
		case *TypeAlias:
			name, doc = d.Name.Name, d.Doc
		case *CustomType:
			name, doc = d.Name.Name, d.Doc
		}
		got := ""
		if doc != nil {
			got = doc.Text
		}
		if got != want[name] {
			t.Errorf("doc of %s = %q, want %q", name, got, want[name])
		}
	}
	if len(f.Decls) != 4 {
		t.Errorf("got %d decls, want 4", len(f.Decls))
	}
}

// TestDocCommentsWithoutImports: with no import between them, the module's
// doc comment and the first declaration's each keep their own.
func TestDocCommentsWithoutImports(t *testing.T) {
	f := parseOK(t, "module Pair exposing (pair)\n\n{-| Pairs. -}\n\n{-| Make a pair. -}\npair a b =\n    ( a, b )\n")
	if f.Docs == nil || f.Docs.Text != " Pairs. " {
		t.Errorf("module docs = %+v, want %q", f.Docs, " Pairs. ")
	}
	d := f.Decls[0].(*ValueDecl)
	if d.Doc == nil || d.Doc.Text != " Make a pair. " {
		t.Errorf("doc of pair = %+v, want %q", d.Doc, " Make a pair. ")
	}
}

// TestPositions checks that nodes carry their file, line, column and end.
func TestPositions(t *testing.T) {
	src := "module M exposing (..)\n\nmain =\n    foo.bar (x + 1)\n"
	f := parseOK(t, src)
	d := f.Decls[0].(*ValueDecl)
	app := d.Body.(*App)
	check := func(what string, got Span, line, col, endLine, endCol int) {
		t.Helper()
		if got.Start.File != "test.sky" || got.Start.Line != line || got.Start.Col != col || got.End.Line != endLine || got.End.Col != endCol {
			t.Errorf("%s span = %s:%d:%d-%d:%d, want test.sky:%d:%d-%d:%d", what, got.Start.File,
				got.Start.Line, got.Start.Col, got.End.Line, got.End.Col, line, col, endLine, endCol)
		}
	}
	check("decl", d.Span, 3, 1, 4, 20)
	check("name", d.Name.Span, 3, 1, 3, 5)
	check("app", app.Span, 4, 5, 4, 20)
	check("access", app.Fn.Range(), 4, 5, 4, 12)
	check("field", app.Fn.(*Access).Field.Span, 4, 9, 4, 12)
	check("binop", app.Args[0].Range(), 4, 14, 4, 19)
	check("op", app.Args[0].(*BinOp).OpSpan, 4, 16, 4, 17)
	if got := app.Span.Start.Offset; got != strings.Index(src, "foo") {
		t.Errorf("offset = %d, want %d", got, strings.Index(src, "foo"))
	}
}

// TestTabsAreFourColumns checks the tab rule on positions and layout.
func TestTabsAreFourColumns(t *testing.T) {
	src := "f x =\n\tcase x of\n\t\tA ->\n\t\t\t1\n\t\tB ->\n\t\t\t2\n"
	f := parseOK(t, src)
	c := f.Decls[0].(*ValueDecl).Body.(*Case)
	if got := c.Start.Col; got != 5 {
		t.Errorf("case column = %d, want 5", got)
	}
	if got := c.Branches[1].Start.Col; got != 9 {
		t.Errorf("second branch column = %d, want 9", got)
	}
	if got := Print(c); got != "(case x of A -> 1; B -> 2)" {
		t.Errorf("got %s", got)
	}
}

// TestErrorsKeepGoing checks that errors in several declarations are all
// reported, sorted, and that good declarations still parse.
func TestErrorsKeepGoing(t *testing.T) {
	src := "a = (1\n\nb = 2\n\nc = ]\n\nd = 4\n\ne = a < b < c\n"
	f, err := ParseFile("many.sky", []byte(src))
	list, ok := err.(diag.List)
	if !ok || len(list) != 3 {
		t.Fatalf("want 3 errors, got %T %v", err, err)
	}
	wantLines := []int{3, 5, 9}
	for i, e := range list {
		if e.Start.Line != wantLines[i] {
			t.Errorf("error %d at line %d, want %d: %v", i, e.Start.Line, wantLines[i], e)
		}
	}
	if got := Print(f); got != "b = 2\nd = 4\n" {
		t.Errorf("partial file = %q", got)
	}
}
