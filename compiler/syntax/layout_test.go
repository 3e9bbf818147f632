package syntax

import (
	"testing"

	"skydurable/compiler/diag"
)

// checkoutSrc is the checkout workflow exactly as it appears in
// spec/durable-execution.txt: a `|>` pipeline whose lambdas nest across lines.
const checkoutSrc = `checkout : Durable.Ctx -> CheckoutInput -> Task Error OrderId
checkout ctx input =
    Durable.step ctx orderIdCodec "reserve"
        (Inventory.reserve input.items)
        |> Task.andThen (\reservation ->
            Durable.step ctx chargeCodec "charge"
                (Payments.charge input.card input.amount)
            |> Task.andThen (\charge ->
                Durable.awaitSignal ctx webhookCodec "payment.settled"
                |> Task.andThen (\settled ->
                    Durable.step ctx orderCodec "finalise"
                        (Orders.finalise reservation charge settled))))
`

// TestLayout checks the off-side rule on nested blocks and continuation lines.
func TestLayout(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"spec checkout", checkoutSrc,
			`checkout : (Durable.Ctx -> (CheckoutInput -> (Task Error OrderId))); checkout ctx input = ` +
				`((Durable.step ctx orderIdCodec "reserve" (Inventory.reserve input.items)) |> (Task.andThen (\reservation -> ` +
				`((Durable.step ctx chargeCodec "charge" (Payments.charge input.card input.amount)) |> (Task.andThen (\charge -> ` +
				`((Durable.awaitSignal ctx webhookCodec "payment.settled") |> (Task.andThen (\settled -> ` +
				`(Durable.step ctx orderCodec "finalise" (Orders.finalise reservation charge settled)))))))))))` + "\n"},
		{"let aligned bindings",
			"f =\n    let\n        a = 1\n        b =\n            a + 1\n    in\n    a + b\n",
			"f = (let a = 1; b = (a + 1) in (a + b))\n"},
		{"let function and destructuring bindings",
			"f =\n    let\n        double x = x * 2\n        ( a, b ) = pair\n        { name } = user\n        _ = Log.println \"hi\"\n    in\n    double a\n",
			"f = (let double x = (x * 2); (a, b) = pair; {name} = user; _ = (Log.println \"hi\") in (double a))\n"},
		{"let annotations",
			"f =\n    let\n        g : Int -> Int\n        g y =\n            y\n        n : Int\n        n = 3\n    in\n    g n\n",
			"f = (let g : (Int -> Int); g y = y; n : Int; n = 3 in (g n))\n"},
		{"nested let",
			"f =\n    let\n        a =\n            let\n                b = 1\n            in\n            b\n        c = 2\n    in\n    a + c\n",
			"f = (let a = (let b = 1 in b); c = 2 in (a + c))\n"},
		{"case aligned arms",
			"f x =\n    case x of\n        Just y ->\n            y\n\n        Nothing ->\n            0\n",
			"f x = (case x of (Just y) -> y; Nothing -> 0)\n"},
		{"nested case",
			"f x y =\n    case x of\n        A ->\n            case y of\n                B -> 1\n                C -> 2\n        D ->\n            3\n",
			"f x y = (case x of A -> (case y of B -> 1; C -> 2); D -> 3)\n"},
		{"case inside let",
			"f m =\n    let\n        v =\n            case m of\n                Just x -> x\n                Nothing -> 0\n        w = v + 1\n    in\n    w\n",
			"f m = (let v = (case m of (Just x) -> x; Nothing -> 0); w = (v + 1) in w)\n"},
		{"let inside case",
			"f m =\n    case m of\n        Just x ->\n            let\n                y = x\n            in\n            y\n        Nothing ->\n            0\n",
			"f m = (case m of (Just x) -> (let y = x in y); Nothing -> 0)\n"},
		{"if else chain",
			"sign n =\n    if n < 0 then\n        -1\n    else if n == 0 then\n        0\n    else\n        1\n",
			"sign n = (if (n < 0) then (-1) else (if (n == 0) then 0 else 1))\n"},
		{"else in the column of its let binding (real Sky)",
			"f c =\n    let\n        idx = if c then\n            1\n        else\n            2\n        j = idx\n    in\n    j\n",
			"f c = (let idx = (if c then 1 else 2); j = idx in j)\n"},
		{"then and else in the column of their case branch (real Sky)",
			"f m =\n    case m of\n        Just x -> if x\n        then\n            1\n        else\n            2\n        Nothing ->\n            0\n",
			"f m = (case m of (Just x) -> (if x then 1 else 2); Nothing -> 0)\n"},
		{"operators at line starts",
			"total =\n    1\n        + 2\n        * 3\n        - 4\n",
			"total = ((1 + (2 * 3)) - 4)\n"},
		{"pipeline across lines",
			"main =\n    items\n        |> List.map .price\n        |> List.foldl (+) 0\n        |> String.fromInt\n",
			"main = (((items |> (List.map .price)) |> (List.foldl (+) 0)) |> String.fromInt)\n"},
		{"application across lines",
			"main =\n    Durable.step ctx\n        codec\n        \"id\"\n",
			"main = (Durable.step ctx codec \"id\")\n"},
		{"elm style list and record",
			"xs =\n    [ 1\n    , 2\n    ]\n\n\nr =\n    { a = 1\n    , b =\n        [ x\n        ]\n    }\n",
			"xs = [1, 2]\nr = {a = 1, b = [x]}\n"},
		{"case in parens then operator",
			"f x =\n    (case x of\n        A -> 1\n        B -> 2\n    )\n        + 1\n",
			"f x = ((case x of A -> 1; B -> 2) + 1)\n"},
		{"lambda body on next line",
			"f =\n    List.map\n        (\\x ->\n            x + 1\n        )\n        xs\n",
			"f = (List.map (\\x -> (x + 1)) xs)\n"},
		{"case arm with if",
			"f x =\n    case x of\n        A ->\n            if c then\n                1\n            else\n                2\n        B ->\n            3\n",
			"f x = (case x of A -> (if c then 1 else 2); B -> 3)\n"},
		{"case patterns",
			"f x =\n    case x of\n        ( 1, _ ) -> 1\n        ( -2, 'c' ) -> 2\n        ( \"s\", 1.5 ) -> 3\n        [] -> 4\n        [ a, b ] -> 5\n        a :: b :: rest -> 6\n        (Just y) as m -> 7\n        Durable.FailSafe -> 8\n        True -> 9\n        { name, age } -> 10\n        Ok (Just ( a, b )) -> 11\n        () -> 12\n",
			"f x = (case x of (1, _) -> 1; (-2, 'c') -> 2; (\"s\", 1.5) -> 3; [] -> 4; [a, b] -> 5; (a :: (b :: rest)) -> 6; " +
				"((Just y) as m) -> 7; Durable.FailSafe -> 8; True -> 9; {name, age} -> 10; (Ok (Just (a, b))) -> 11; () -> 12)\n"},
		{"cons pattern with as",
			"f x =\n    case x of\n        y :: ys as all -> 1\n        _ -> 2\n",
			"f x = (case x of ((y :: ys) as all) -> 1; _ -> 2)\n"},
		{"one-line let in argument",
			"f = g (let a = 1 in a) 2\n",
			"f = (g (let a = 1 in a) 2)\n"},
		{"comment lines do not break layout",
			"f x =\n    case x of\n-- a comment at column 1\n        A -> 1\n  {- indented comment -}\n        B -> 2\n",
			"f x = (case x of A -> 1; B -> 2)\n"},
		{"multi-line string keeps layout",
			"s =\n    \"\"\"\nline one\nline two\n\"\"\"\n\n\nt = 1\n",
			"s = \"\\nline one\\nline two\\n\"\nt = 1\n"},
		{"multi-line string followed by arg",
			"s =\n    f \"\"\"a\nb\"\"\" x\n",
			"s = (f \"a\\nb\" x)\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := parseOK(t, tc.src)
			if got := Print(f); got != tc.want {
				t.Errorf("source:\n%s\n got  %s\n want %s", tc.src, got, tc.want)
			}
		})
	}
}

// TestLayoutErrors checks that badly indented code is rejected where it
// goes wrong.
func TestLayoutErrors(t *testing.T) {
	tests := []struct {
		name, src string
		line, col int
	}{
		{"body at column 1", "f =\nx\n", 2, 1},
		{"misaligned let binding", "f =\n    let\n        a = 1\n          b = 2\n    in\n    a\n", 4, 13},
		{"let without in", "f =\n    let\n        a = 1\n    a\n", 4, 5},
		{"misaligned case arm", "f x =\n    case x of\n        A -> 1\n          B -> 2\n", 4, 13},
		{"declaration indented", "  f = 1\n", 1, 3},
		{"else at column 1", "f =\n    if a then b\nelse c\n", 3, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile("l.sky", []byte(tc.src))
			list, ok := err.(diag.List)
			if !ok || len(list) == 0 {
				t.Fatalf("want a syntax error, got %v", err)
			}
			if list[0].Start.Line != tc.line || list[0].Start.Col != tc.col {
				t.Errorf("first error at %d:%d, want %d:%d:\n%v", list[0].Start.Line, list[0].Start.Col, tc.line, tc.col, err)
			}
		})
	}
}
