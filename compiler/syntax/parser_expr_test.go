package syntax

import (
	"strings"
	"testing"

	"skydurable/compiler/diag"
)

// TestParseExpr checks the tree of every expression form through Print's
// fully parenthesised rendering.
func TestParseExpr(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		// literals
		{"int", "123", "123"},
		{"hex", "0xFF", "255"},
		{"float", "1.5", "1.5"},
		{"exponent", "1e-3", "0.001"},
		{"float exponent", "2.5E2", "250"},
		{"char", "'c'", "'c'"},
		{"char escape", `'\n'`, `'\n'`},
		{"char unicode", `'\u{1F600}'`, `'😀'`},
		{"string escapes", `"a\tb\n\"q\" \\ \' \r"`, `"a\tb\n\"q\" \\ ' \r"`},
		{"string unicode", `"smile \u{1F600}"`, `"smile 😀"`},
		{"multi string raw", "\"\"\"line1\n  \\n \"quoted\" \"\"\"", `"line1\n  \\n \"quoted\" "`},
		{"interp name", `"""Hi {{name}}!"""`, `(interp "Hi " name "!")`},
		{"interp field and app", `"""{{user.name}} has {{String.fromInt n}}"""`, `(interp user.name " has " (String.fromInt n))`},
		{"interp escaped braces", `"""a \{{b}} {{c}}"""`, `(interp "a {{b}} " c)`},
		{"escaped braces only", `"""\{{x}}"""`, `"{{x}}"`},
		{"interp parenthesised argument", `"""{{String.fromInt (n + 1)}}"""`, `(interp (String.fromInt (n + 1)))`},
		{"unit", "()", "()"},
		// names
		{"var", "x", "x"},
		{"underscore-prefixed var", "_req", "_req"},
		{"real Sky's != is /=", "a != b", "(a /= b)"},
		{"!= section", "(!=)", "(/=)"},
		{"qualified var", "Durable.step", "Durable.step"},
		{"deep qualified var", "Sky.Core.List.map", "Sky.Core.List.map"},
		{"ctor", "Nothing", "Nothing"},
		{"qualified ctor", "Durable.FailSafe", "Durable.FailSafe"},
		// application
		{"app", "f a b", "(f a b)"},
		{"ctor app", "Just 1", "(Just 1)"},
		{"app nested", "f (g x) y", "(f (g x) y)"},
		{"record alias ctor", "R 1 2", "(R 1 2)"},
		// access and accessors
		{"access", "r.a", "r.a"},
		{"access chain", "r.a.b", "r.a.b"},
		{"access qualified", "Config.default.port", "Config.default.port"},
		{"access paren", "(f x).field", "(f x).field"},
		{"access record literal", "{ a = 1 }.a", "{a = 1}.a"},
		{"accessor", ".name", ".name"},
		{"accessor arg", "List.map .name users", "(List.map .name users)"},
		{"space before dot is accessor", "f .x", "(f .x)"},
		// operators
		{"precedence mul add", "1 + 2 * 3", "(1 + (2 * 3))"},
		{"left assoc minus", "a - b - c", "((a - b) - c)"},
		{"right assoc pow", "a ^ b ^ c", "(a ^ (b ^ c))"},
		{"int div and mod", "a // b % c", "((a // b) % c)"},
		{"append right", "a ++ b ++ c", "(a ++ (b ++ c))"},
		{"cons right", "1 :: 2 :: xs", "(1 :: (2 :: xs))"},
		{"cons with append", "x :: a ++ b", "(x :: (a ++ b))"},
		{"comparison", "a + 1 < b * 2", "((a + 1) < (b * 2))"},
		{"and or", "a || b && c", "(a || (b && c))"},
		{"and right", "a && b && c", "(a && (b && c))"},
		{"eq and", "a == b && c /= d", "((a == b) && (c /= d))"},
		{"pipe left assoc", "x |> f |> g", "((x |> f) |> g)"},
		{"backward pipe right", "f <| g <| x", "(f <| (g <| x))"},
		{"compose right", "f >> g >> h", "((f >> g) >> h)"},
		{"compose left", "f << g << h", "(f << (g << h))"},
		{"app binds tighter", "f x + g y", "((f x) + (g y))"},
		{"pipe with lambda", "x |> List.map (\\y -> y + 1)", "(x |> (List.map (\\y -> (y + 1))))"},
		{"backward pipe lambda", "Task.andThen <| \\r -> f r", "(Task.andThen <| (\\r -> (f r)))"},
		{"op func", "(+)", "(+)"},
		{"op func cons", "(::)", "(::)"},
		{"op func applied", "List.foldl (+) 0 xs", "(List.foldl (+) 0 xs)"},
		{"op func minus", "(-)", "(-)"},
		// negation
		{"negate var", "-x", "(-x)"},
		{"negate literal", "-1", "(-1)"},
		{"negative argument", "f -1", "(f (-1))"},
		{"negative argument var", "f -x y", "(f (-x) y)"},
		{"binary minus spaced", "a - 1", "(a - 1)"},
		{"binary minus tight", "a-1", "(a - 1)"},
		{"minus then negative", "a - -1", "(a - (-1))"},
		{"smallest int", "-9223372036854775808", "(-9223372036854775808)"},
		{"smallest int argument", "f -9223372036854775808", "(f (-9223372036854775808))"},
		{"smallest int hex", "-0x8000000000000000", "(-9223372036854775808)"},
		{"negate in parens", "(-x)", "(-x)"},
		{"negate access", "-r.x", "(-r.x)"},
		{"negate then multiply", "-a * b", "((-a) * b)"},
		// tuples, lists, records
		{"pair", "( 1, x )", "(1, x)"},
		{"triple", "(a, b, c)", "(a, b, c)"},
		{"paren", "(a)", "a"},
		{"empty list", "[]", "[]"},
		{"list", "[ 1, 2, 3 ]", "[1, 2, 3]"},
		{"list of exprs", "[ f x, a + b ]", "[(f x), (a + b)]"},
		{"empty record", "{}", "{}"},
		{"record", "{ x = 1, y = f z }", "{x = 1, y = (f z)}"},
		{"update", "{ r | x = 2 }", "{r | x = 2}"},
		{"update many", "{ model | count = model.count + 1, name = n }", "{model | count = (model.count + 1), name = n}"},
		// control
		{"if", "if a then b else c", "(if a then b else c)"},
		{"else if", "if a then 1 else if b then 2 else 3", "(if a then 1 else (if b then 2 else 3))"},
		{"if in op", "1 + if a then 1 else 2", "(1 + (if a then 1 else 2))"},
		{"lambda", "\\x -> x", "(\\x -> x)"},
		{"lambda many", "\\x y -> x + y", "(\\x y -> (x + y))"},
		{"lambda patterns", "\\( a, b ) _ { c } (Ctx d) -> a", "(\\(a, b) _ {c} (Ctx d) -> a)"},
		{"lambda unit", "\\() -> 1", "(\\() -> 1)"},
		{"let one line", "let x = 1 in x", "(let x = 1 in x)"},
		{"case one branch", "case x of\n  _ -> 1", "(case x of _ -> 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseExpr(tc.src)
			if err != nil {
				t.Fatalf("ParseExpr(%q): %v", tc.src, err)
			}
			if got := Print(e); got != tc.want {
				t.Errorf("ParseExpr(%q)\n got  %s\n want %s", tc.src, got, tc.want)
			}
		})
	}
}

// TestParseExprErrors checks that malformed expressions are rejected with a
// message naming the problem.
func TestParseExprErrors(t *testing.T) {
	tests := []struct {
		name, src, wantMsg string
	}{
		{"chained comparison", "a < b < c", "cannot be chained"},
		{"chained equality", "a == b == c", "cannot be chained"},
		{"mixed comparison", "a < b == c", "cannot be chained"},
		{"mixed pipes", "f <| x |> g", "cannot be mixed"},
		{"mixed compose", "f >> g << h", "cannot be mixed"},
		{"missing else", "if a then b", "unexpected"},
		{"unclosed list", "[ 1, 2", "ended unexpectedly"},
		{"empty lambda", "\\ -> 1", "unexpected"},
		{"spaced negation", "- x", "unexpected `-`"},
		{"record colon", "{ a : 1 }", "unexpected `:`"},
		{"unknown operator", "a <=> b", "unknown operator `<=>`"},
		{"trailing operator", "a +", "ended unexpectedly"},
		{"interp complex", `"""{{a + b}}"""`, "too complex"},
		{"interp empty", `"""{{}}"""`, "empty"},
		{"interp unclosed", `"""{{a"""`, "never closed"},
		{"bad escape", `"\x"`, "unknown escape"},
		{"bad unicode escape", `"\u{110000}"`, "not a valid code point"},
		{"int overflow", "99999999999999999999", "does not fit"},
		{"int one past max", "9223372036854775808", "does not fit"},
		{"int one past max minus", "a - 9223372036854775808", "does not fit"},
		{"int below min", "-9223372036854775809", "does not fit"},
		{"bare 0x", "0x", "hexadecimal digits"},
		{"update of expression", "{ f x | a = 1 }", "unexpected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := ParseExpr(tc.src)
			if err == nil {
				t.Fatalf("ParseExpr(%q) = %s, want an error containing %q", tc.src, Print(e), tc.wantMsg)
			}
			list, ok := err.(diag.List)
			if !ok || len(list) == 0 {
				t.Fatalf("error %v has type %T, want a non-empty diag.List", err, err)
			}
			if !containsMsg(list, tc.wantMsg) {
				t.Errorf("ParseExpr(%q) errors:\n%v\nwant a message containing %q", tc.src, err, tc.wantMsg)
			}
		})
	}
}

func containsMsg(list diag.List, sub string) bool {
	for _, e := range list {
		if strings.Contains(e.Message, sub) {
			return true
		}
	}
	return false
}
