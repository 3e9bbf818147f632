package eval

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/compiler/diag"
	"skydurable/runtime/value"
)

var update = flag.Bool("update", false, "rewrite the .golden files of TestRuntimeErrorGolden")

// evalResult loads a module from src and returns Show of its `result`.
func evalResult(t *testing.T, src string) (string, error) {
	t.Helper()
	var out []string
	p, err := LoadSource("Main.sky", []byte(src), Options{Stdlib: testStdlib(&out)})
	if err != nil {
		return "", err
	}
	v, err := p.Value("result")
	if err != nil {
		return "", err
	}
	return value.Show(v), nil
}

func TestEvalSnippets(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"arith", `result = 1 + 2 * 3 - 4 // 3`, "6"},
		{"float widen", `result = 1 + 0.5`, "1.5"},
		{"division", `result = ( 7 / 2, [ 7 // 2, 2 ^ 10, -7 // 2 ] )`, "(3.5,[3,1024,-3])"},
		{"strings", `result = "a" ++ "b" ++ "c"`, `"abc"`},
		{"lists", `result = 1 :: [ 2 ] ++ [ 3, 4 ]`, "[1,2,3,4]"},
		{"compare", `result = [ 1 < 2, "b" >= "a", [ 1, 2 ] == [ 1, 2 ], Just 1 /= Nothing ]`, "[True,True,True,True]"},
		{"logic", `result = (True && not False) || False`, "True"},
		{"currying", "add a b = a + b\n\nresult = List3 (add 1) |> apply\n\ntype Wrap = List3 (Int -> Int)\n\napply (List3 f) = f 41", "42"},
		{"partial and pipe", "add a b c = a + b + c\n\nresult = 3 |> add 1 2", "6"},
		{"backward pipe", "double x = x * 2\n\nresult = double <| double <| 5", "20"},
		{"compose", "inc x = x + 1\n\ndouble x = x * 2\n\nresult = ( (inc >> double) 3, (inc << double) 3 )", "(8,7)"},
		{"op function", "result = ( (+) 1 2, (::) 1 [] )", "(3,[1])"},
		{"lambda patterns", `result = (\( a, b ) { c } -> a + b + c) ( 1, 2 ) { c = 3 }`, "6"},
		{"records", "r = { b = 2, a = 1 }\n\nresult = ( r.a, { r | b = 5 }, .b r )", "(1,{ a = 1, b = 5 },2)"},
		{"record alias ctor", "type alias P = { name : String, age : Int }\n\nresult = P \"ann\" 3", `{ age = 3, name = "ann" }`},
		{"custom ctor as function", "type T = Pair Int Int\n\napply f x = f x\n\nresult = apply (Pair 1) 2", "Pair 1 2"},
		{"case", "f m =\n    case m of\n        Just (x :: _) ->\n            x\n\n        Just [] ->\n            -1\n\n        Nothing ->\n            0\n\nresult = [ f (Just [ 5, 6 ]), f (Just []), f Nothing ]", "[5,-1,0]"},
		{"case literals", "f s =\n    case s of\n        \"a\" ->\n            1\n\n        _ ->\n            2\n\nresult = ( f \"a\", f \"z\" )", "(1,2)"},
		{"alias pattern", "f x =\n    case x of\n        (( a, _ ) as p) ->\n            ( a, p )\n\nresult = f ( 1, 2 )", "(1,(1,2))"},
		{"let mutual recursion", "result =\n    let\n        isEven n =\n            if n == 0 then True else isOdd (n - 1)\n\n        isOdd n =\n            if n == 0 then False else isEven (n - 1)\n    in\n    ( isEven 10, isOdd 7 )", "(True,True)"},
		{"let out of order", "result =\n    let\n        b = a + 1\n\n        a = 1\n    in\n    b", "2"},
		{"let destructure", "result =\n    let\n        ( x, y ) = ( 1, 2 )\n    in\n    x + y", "3"},
		{"closures capture", "make n = \\x -> x + n\n\nresult =\n    let\n        add5 = make 5\n    in\n    add5 10", "15"},
		{"tail loop 1e6", "loop n acc =\n    if n == 0 then\n        acc\n\n    else\n        loop (n - 1) (acc + 1)\n\nresult = loop 1000000 0", "1000000"},
		{"let tail loop", "result =\n    let\n        go n acc =\n            case n of\n                0 ->\n                    acc\n\n                _ ->\n                    go (n - 1) (acc + n)\n    in\n    go 1000000 0", "500000500000"},
		{"closures made in a tail loop keep their own values", "loop n acc =\n    if n == 0 then\n        acc\n\n    else\n        loop (n - 1) ((\\x -> x + n) :: acc)\n\napplyAll fs =\n    case fs of\n        [] ->\n            []\n\n        f :: rest ->\n            f 0 :: applyAll rest\n\nresult = applyAll (loop 3 [])", "[1,2,3]"},
		{"tail loop with pattern parameters", "count ( n, acc ) =\n    case n of\n        0 ->\n            acc\n\n        _ ->\n            count ( n - 1, acc + 2 )\n\nresult = count ( 100000, 0 )", "200000"},
		{"top-level lambda loops", "loop =\n    \\n acc ->\n        if n == 0 then\n            acc\n\n        else\n            loop (n - 1) (acc + 1)\n\nresult = loop 1000000 0", "1000000"},
		{"interpolation", "name = \"sky\"\n\nresult = \"\"\"hi {{name}}!\"\"\"", `"hi sky!"`},
		{"prelude", "result = ( identity 3, fst ( 1, 2 ), modBy 3 -1 )", "(3,1,2)"},
		{"char and unit", "result = ( 'x', () )", "('x',())"},
		{"negation", "x = 3\n\nresult = -x", "-3"},
		{"smallest int literal", "f n =\n    case n of\n        -9223372036854775808 ->\n            \"min\"\n\n        _ ->\n            \"other\"\n\nresult = ( -9223372036854775808, f -9223372036854775808, -9223372036854775807 - 1 == -9223372036854775808 )", `(-9223372036854775808,"min",True)`},
		{"qualified ctor", "type T = A | B\n\nresult = [ A, B ]", "[A,B]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := evalResult(t, c.src)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != c.want {
				t.Errorf("result = %s, want %s", got, c.want)
			}
		})
	}
}

// TestRuntimeErrorGolden evaluates each testdata/runtime/*.sky and compares
// the runtime error with the .golden file beside it (go test -update
// rewrites them).
func TestRuntimeErrorGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/runtime/*.sky")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".sky"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			p, err := LoadSource(filepath.Base(file), src, Options{Stdlib: testStdlib(&out)})
			if err == nil {
				_, err = p.Value("result")
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !value.IsRuntimeError(err) {
				t.Errorf("%T is not a runtime error: %v", err, err)
			}
			ds, ok := Diagnostics(err)
			if !ok {
				t.Fatalf("no diagnostics for %v", err)
			}
			got := diag.Render(ds)
			golden := strings.TrimSuffix(file, ".sky") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("error message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"unknown variable", "result = foo", "Main.sky:1:10\n\nI cannot find a `foo` variable"},
		{"unknown module", "import Nope.Thing\n\nresult = 1", "I cannot find a module named `Nope.Thing`"},
		{"unknown kernel", "x = Ffi.kernel \"Nope\"\n\nresult = 1", `no Go kernel is registered under the name "Nope"`},
		{"let cycle", "result =\n    let\n        a = b\n\n        b = a\n    in\n    a", "depend on each other in a cycle: `a` -> `b` -> `a`"},
		{"unexposed", "import Sky.Core.Task as Task\n\nresult = Task.secret", "module Sky.Core.Task does not expose `secret`"},
		{"ctor arity", "f x =\n    case x of\n        Just ->\n            1\n\n        _ ->\n            2\n\nresult = 1", "the constructor `Just` takes 1 argument(s), but this pattern gives 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := evalResult(t, c.src)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error:\n%s\nwant it to contain:\n%s", err, c.want)
			}
			var l diag.List
			if !errors.As(err, &l) || len(l) == 0 {
				t.Errorf("%T is not a diag.List of load or compile errors", err)
			}
		})
	}
}
