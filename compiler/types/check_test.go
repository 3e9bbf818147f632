package types_test

import (
	"strings"
	"testing"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
)

// checkSources checks an entry module (Main) plus extra modules and returns
// the error titles and summaries.
func checkSources(t *testing.T, main string, extra map[string]string) (*types.Info, *types.Program, diag.List) {
	t.Helper()
	prog := stdlibProgram(t, extra)
	addEntry(t, prog, "Main.sky", main)
	info, errs := types.Check(prog)
	return info, prog, errs
}

func TestCheckCases(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		extra map[string]string
		want  string // "" for clean, else a substring of the first error's summary
	}{
		{name: "rigid vars differ", src: "f : a -> b\nf x =\n    x\n", want: "body of the `f` definition"},
		{name: "number annotation rejects ++", src: "f : number -> number\nf x =\n    x ++ x\n", want: "(++)"},
		{name: "comparable list ok", src: "f : List comparable -> List comparable\nf xs =\n    List.sort xs\n"},
		{name: "polymorphic recursion with annotation", src: "len : List a -> Int\nlen xs =\n    case xs of\n        [] ->\n            0\n\n        _ :: r ->\n            1 + len r\n"},
		{name: "lambda-bound is monomorphic", src: "g h =\n    ( h 1, h \"s\" )\n", want: "argument to `h`"},
		{name: "let-bound is polymorphic", src: "g =\n    let\n        h x =\n            x\n    in\n    ( h 1, h \"s\" )\n"},
		{name: "extensible update", src: "bump : { r | n : Int } -> { r | n : Int }\nbump r =\n    { r | n = r.n + 1 }\n\n\nuse =\n    bump { n = 1, m = \"x\" }\n"},
		{name: "extensible annotation too general", src: "get : { r | n : Int } -> Int\nget r =\n    r.m\n", want: "does not have a `m` field"},
		{name: "update keeps field type", src: "f : { n : Int } -> { n : Int }\nf r =\n    { r | n = \"x\" }\n", want: "record update"},
		{name: "opaque type hides constructors", src: "import Lib exposing (T)\n\n\nv =\n    MkT 1\n",
			extra: map[string]string{"Lib": "module Lib exposing (T)\n\n\ntype T\n    = MkT Int\n"}, want: "cannot find a `MkT` constructor"},
		{name: "open type exposes constructors", src: "import Lib exposing (T(..))\n\n\nv : T\nv =\n    MkT 1\n",
			extra: map[string]string{"Lib": "module Lib exposing (T(..))\n\n\ntype T\n    = MkT Int\n"}},
		{name: "unexposed value", src: "import Lib\n\n\nv =\n    Lib.secret\n",
			extra: map[string]string{"Lib": "module Lib exposing (open)\n\n\nopen =\n    1\n\n\nsecret =\n    2\n"}, want: "does not expose `secret`"},
		{name: "bare import last segment", src: "import Lib.User\n\n\nv : String\nv =\n    User.name\n",
			extra: map[string]string{"Lib.User": "module Lib.User exposing (name)\n\n\nname =\n    \"ann\"\n"}},
		{name: "alias import", src: "import Lib.User as U\n\n\nv : String\nv =\n    U.name\n",
			extra: map[string]string{"Lib.User": "module Lib.User exposing (name)\n\n\nname =\n    \"ann\"\n"}},
		{name: "record alias constructor", src: "type alias P =\n    { x : Int, y : String }\n\n\np : P\np =\n    P 1 \"a\"\n"},
		{name: "record alias constructor arg order", src: "type alias P =\n    { x : Int, y : String }\n\n\np : P\np =\n    P \"a\" 1\n", want: "1st argument to `P`"},
		{name: "kernel needs annotation", src: "f =\n    Ffi.kernel \"X_f\"\n", want: "kernel binding `f` has no type annotation"},
		{name: "kernel type from annotation", src: "f : Int -> String\nf =\n    Ffi.kernel \"X_f\"\n\n\nv : String\nv =\n    f 1\n"},
		{name: "parametric alias", src: "type alias Pair a =\n    ( a, a )\n\n\nswap : Pair a -> Pair a\nswap ( x, y ) =\n    ( y, x )\n\n\nv : Pair Int\nv =\n    swap ( 1, 2 )\n"},
		{name: "comparable tuple", src: "f : ( Int, String ) -> ( Int, String ) -> Bool\nf a b =\n    a < b\n"},
		{name: "function not comparable", src: "f : (Int -> Int) -> (Int -> Int) -> Bool\nf a b =\n    a < b\n", want: "comparable"},
		{name: "appendable list", src: "f : List Int -> List Int\nf xs =\n    xs ++ [ 1 ]\n"},
		{name: "number is not appendable", src: "f =\n    1 ++ 2\n", want: "(++)"},
		{name: "case on unit and tuple wildcards", src: "f : ( (), Bool ) -> Int\nf p =\n    case p of\n        ( (), True ) ->\n            1\n\n        ( (), False ) ->\n            0\n"},
		{name: "string case needs wildcard", src: "f : String -> Int\nf s =\n    case s of\n        \"a\" ->\n            1\n", want: "branches for all possibilities"},
		{name: "redundant wildcard", src: "f : Bool -> Int\nf b =\n    case b of\n        _ ->\n            1\n\n        True ->\n            2\n", want: "redundant"},
		{name: "let destructure unsafe", src: "f : Maybe Int -> Int\nf m =\n    let\n        (Just n) =\n            m\n    in\n    n\n", want: "does not cover all possible values"},
		{name: "annotation name mismatch ok-check", src: "x : Int\nx =\n    1.5\n", want: "body of the `x` definition"},
		{name: "mutual top-level inference", src: "a n =\n    if n > 0 then\n        b (n - 1)\n\n    else\n        0\n\n\nb n =\n    a n\n\n\nv : Int\nv =\n    a 3\n"},
		{name: "let annotation shares outer variable", src: "f : a -> List a\nf x =\n    let\n        g : a -> List a\n        g y =\n            [ x, y ]\n    in\n    g x\n"},
		{name: "unused import exposing missing type", src: "import Lib exposing (Nope)\n", extra: map[string]string{"Lib": "module Lib exposing (..)\n\n\nx =\n    1\n"}, want: "does not expose `Nope`"},
		{name: "ambiguous constructors qualified ok", src: "import Lib.A as A\nimport Lib.B as B\n\n\nv =\n    ( A.Red, B.Red )\n",
			extra: map[string]string{"Lib.A": "module Lib.A exposing (C(..))\n\n\ntype C\n    = Red\n", "Lib.B": "module Lib.B exposing (C(..))\n\n\ntype C\n    = Red\n"}},
		{name: "alias declared after use", src: "type Shape\n    = Poly Points\n\n\ntype alias Points =\n    List Point\n\n\ntype alias Point =\n    { x : Float, y : Float }\n\n\nv : Shape\nv =\n    Poly [ Point 1 2 ]\n"},
		{name: "mutually recursive types", src: "type Expr\n    = Num Int\n    | Block Stmts\n\n\ntype Stmts\n    = Stmts (List Expr)\n\n\nv : Expr\nv =\n    Block (Stmts [ Num 1 ])\n"},
		{name: "phantom parameter", src: "type Id a\n    = Id String\n\n\ntype User\n    = User\n\n\nuserId : Id User\nuserId =\n    Id \"u1\"\n\n\nwrong : Id Int\nwrong =\n    userId\n", want: "body of the `wrong` definition"},
		{name: "unbound type variable in alias", src: "type alias Box =\n    { value : a }\n", want: "type variable `a` is not declared"},
		{name: "constructor through a re-exporting module", src: "import Sky.Core.Error as Error\n\n\nkind : Error.ErrorKind\nkind =\n    Error.NotFound\n\n\nisMissing : Error.ErrorKind -> Bool\nisMissing k =\n    case k of\n        Error.NotFound ->\n            True\n\n        _ ->\n            False\n"},
		{name: "different types same name", src: "import Lib.A as A\nimport Lib.B as B\n\n\nv : A.C\nv =\n    B.Red\n",
			extra: map[string]string{"Lib.A": "module Lib.A exposing (C(..))\n\n\ntype C\n    = Red\n", "Lib.B": "module Lib.B exposing (C(..))\n\n\ntype C\n    = Red\n"}, want: "body of the `v` definition"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, errs := checkSources(t, tc.src, tc.extra)
			if tc.want == "" {
				for _, e := range errs {
					t.Errorf("unexpected error:\n%s", e.Error())
				}
				return
			}
			if len(errs) == 0 {
				t.Fatalf("no error; want one containing %q", tc.want)
			}
			if !strings.Contains(errs[0].Error(), tc.want) {
				t.Errorf("first error does not mention %q:\n%s", tc.want, diag.Render(errs))
			}
		})
	}
}

// TestSideTables checks what Check records for the evaluator.
func TestSideTables(t *testing.T) {
	src := `import Sky.Core.Task as Task


main : Task Error ()
main =
    let
        _ =
            Task.succeed 1

        n =
            Just 2
    in
    Task.succeed ()
`
	info, prog, errs := checkSources(t, src, nil)
	if len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
	f := prog.Modules["Main"]
	let := f.Decls[0].(*syntax.ValueDecl).Body.(*syntax.Let)
	d := let.Bindings[0].(*syntax.Destructure)
	if !info.TaskDiscards[d] {
		t.Errorf("the `_ = Task.succeed 1` binding is not recorded as a Task discard")
	}
	just := let.Bindings[1].(*syntax.ValueDecl).Body.(*syntax.App)
	if got := types.TypeString(info.Types[just]); got != "Maybe number" {
		t.Errorf("type of `Just 2` = %s, want Maybe number", got)
	}
	ref := info.Refs[just.Fn]
	if ref.Kind != types.RefCtor || ref.Module != "Sky.Core.Prelude" || ref.Name != "Just" {
		t.Errorf("Just resolved to %+v", ref)
	}
	body := let.Body.(*syntax.App).Fn
	if r := info.Refs[body]; r.Kind != types.RefTopLevel || r.Module != "Sky.Core.Task" || r.Name != "succeed" {
		t.Errorf("Task.succeed resolved to %+v", r)
	}
	if k := info.Kernels["Sky.Core.Prelude.errorToString"]; k != "Error_toString" {
		t.Errorf("kernel of errorToString = %q", k)
	}
}

func TestRigidVariableEscape(t *testing.T) {
	escaping := "f x =\n    let\n        g : b -> b\n        g y =\n            x\n    in\n    g\n"
	_, _, errs := checkSources(t, escaping, nil)
	if len(errs) == 0 || !strings.Contains(errs[0].Hint, "outside the definition") {
		t.Fatalf("want an escaping-variable error, got:\n%s", diag.Render(errs))
	}
	fine := "f : a -> List a\nf x =\n    let\n        g : b -> b\n        g y =\n            y\n\n        h z =\n            [ z, x ]\n    in\n    h (g x)\n"
	if _, _, errs := checkSources(t, fine, nil); len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
}

func TestOperatorExposingIsHarmless(t *testing.T) {
	src := "import Lib exposing ((|>), x)\n\n\nv : Int\nv =\n    x |> identity\n"
	lib := "module Lib exposing ((|>), x)\n\n\nx : Int\nx =\n    1\n"
	f, err := syntax.ParseFile("Lib.sky", []byte(lib))
	if err != nil {
		t.Skipf("the parser does not accept operator exposing: %v", err)
	}
	_ = f
	if _, _, errs := checkSources(t, src, map[string]string{"Lib": lib}); len(errs) > 0 {
		t.Fatal(diag.Render(errs))
	}
}
