package types_test

import (
	"strings"
	"testing"
)

// App.withDurable and every Codec.auto* refuse, at compile time, a stored
// type that holds a function, a Db or another runtime handle, naming where.
func TestPersistedTypeBound(t *testing.T) {
	const header = "import Std.App as App\nimport Std.Codec as Codec exposing (Codec)\nimport Std.Db as Db exposing (Db)\nimport Std.Durable as Durable\n\n\n"
	const durable = "\n\nstore : Db -> Codec Model -> App.App App.NoFallback () () Model () () -> App.App App.NoFallback () () Model () ()\nstore db codec app =\n    App.withDurable db codec app\n"
	cases := []struct {
		name, src string
		extra     map[string]string // other modules by name
		want      []string          // substrings of the one error; none for a clean program
	}{
		{name: "data model", src: "type alias Model =\n    { count : Int, names : List String, pick : Maybe ( Int, Bool ) }\n" + durable},
		{name: "function field", src: "type alias Model =\n    { count : Int, onTick : Int -> Int }\n" + durable,
			want: []string{"NOT STORABLE AS JSON", "`App.withDurable` stores the model as JSON, but its type holds a function (`Int -> Int`) in field `onTick`:", "Keep functions, `Db` and other runtime handles out of it"}},
		{name: "db in a nested custom type", src: "type Conn\n    = Open Db\n    | Closed\n\n\ntype alias Model =\n    { conns : List Conn }\n" + durable,
			want: []string{"holds a runtime handle (`Db`) in field `conns`, in constructor `Open` of `Conn`:"}},
		{name: "withDurableId", src: "type alias Model =\n    { job : Durable.WorkflowDef Int Int }\n\n\nstore : Db -> Codec Model -> App.App App.NoFallback () () Model () () -> App.App App.NoFallback () () Model () ()\nstore db codec app =\n    App.withDurableId \"m\" db codec app\n",
			want: []string{"`App.withDurableId` stores the model", "runtime handle (`Durable.WorkflowDef Int Int`) in field `job`"}},
		{name: "a spawned process", src: "import Sky.Core.Process as Process exposing (Process)\n\n\ntype alias Model =\n    { child : Maybe Process }\n" + durable,
			want: []string{"holds a runtime handle (`Process`) in field `child`"}},
		{name: "codec auto witness", src: "type alias Settings =\n    { retries : Int, run : Cmd () }\n\n\nc : Codec Settings\nc =\n    Codec.auto { retries = 1, run = Cmd.none }\n",
			want: []string{"`Codec.auto` stores the witness as JSON, but its type holds a runtime handle (`Cmd ()`) in field `run`:"}},
		{name: "codec autoWith witness", src: "c =\n    Codec.autoWith Codec.defaultAutoOptions ( 1, \\x -> x + 1 )\n",
			want: []string{"`Codec.autoWith` stores the witness as JSON, but its type holds a function (`number -> number`) in the 2nd element of a tuple:"}},
		{name: "codec auto data", src: "c : Codec { n : Int, tags : List String }\nc =\n    Codec.auto { n = 0, tags = [ \"a\" ] }\n"},
		// Codec.auto reads a field's JSON type off the witness's value, so a
		// Float field whose witness is written as an Int would be an Int field
		// at run time (and Codec.toJson would fail on 1.5): refused here.
		{name: "codec auto float written as an int", src: "type alias Item =\n    { name : String, price : Float }\n\n\nc : Codec Item\nc =\n    Codec.auto { name = \"\", price = 0 }\n",
			want: []string{"FLOAT WRITTEN AS AN INT", "The witness of `Codec.auto` gives the Float field `price` the Int `0`", "`price = 0.0`"}},
		{name: "codec autoWith nested negative float", src: "c : Codec { pos : { x : Float, y : Float }, n : Int }\nc =\n    Codec.autoWith Codec.defaultAutoOptions { pos = { x = -1, y = 0.5 }, n = 0 }\n",
			want: []string{"FLOAT WRITTEN AS AN INT", "The witness of `Codec.autoWith` gives the Float field `x` the Int `-1`", "`x = -1.0`"}},
		{name: "codec auto float in a list and a maybe", src: "c : Codec { prices : List Float, limit : Maybe Float }\nc =\n    Codec.auto { prices = [ 2.5 ], limit = Just 3 }\n",
			want: []string{"gives the Float field `limit` the Int `3`", "Write it with a decimal point: `3.0`."}},
		{name: "codec auto float written with a point", src: "c : Codec { price : Float }\nc =\n    Codec.auto { price = 0.0 }\n"},
		{name: "codec auto number left open", src: "c =\n    Codec.auto { n = 0 }\n"},
		// A witness given by name is the literal that defines it, checked
		// against the type the call gives it, wherever it is defined.
		{name: "codec auto named witness", src: "type alias Customer =\n    { name : String, score : Float }\n\n\ndefaults : Customer\ndefaults =\n    { name = \"\", score = 0 }\n\n\nc : Codec Customer\nc =\n    Codec.auto defaults\n",
			want: []string{"FLOAT WRITTEN AS AN INT", "-- FLOAT WRITTEN AS AN INT ----", "Main.sky:13:26", "The witness of `Codec.auto` at Main.sky:18:16 gives the Float field `score` the Int `0` (through `defaults`):", "`score = 0.0`"}},
		{name: "codec auto unannotated named witness", src: "defaults =\n    { score = 0 }\n\n\nc : Codec { score : Float }\nc =\n    Codec.auto defaults\n",
			want: []string{"gives the Float field `score` the Int `0` (through `defaults`)"}},
		{name: "codec auto let-bound witness", src: "c : Codec { score : Float }\nc =\n    let\n        base =\n            { score = -2 }\n    in\n    Codec.auto base\n",
			want: []string{"gives the Float field `score` the Int `-2` (through `base`)", "`score = -2.0`"}},
		{name: "codec auto witness named in a field", src: "zero : Float\nzero =\n    0\n\n\nc : Codec { score : Float }\nc =\n    Codec.auto { score = zero }\n",
			want: []string{"gives the Float field `score` the Int `0` (through `zero`)", "Write it with a decimal point: `0.0`."}},
		{name: "codec auto name used as an Int, then as a Float", src: "zero =\n    0\n\n\nc : Codec { a : Int, b : Float }\nc =\n    Codec.auto { a = zero, b = zero }\n",
			want: []string{"gives the Float field `b` the Int `0` (through `zero`)"}},
		{name: "codec auto witness of another module, used twice", src: "import Lib\n\n\nc : Codec Lib.Customer\nc =\n    Codec.auto Lib.defaults\n\n\nd : Codec Lib.Customer\nd =\n    Codec.autoWith Codec.defaultAutoOptions Lib.defaults\n",
			extra: map[string]string{"Lib": "module Lib exposing (Customer, defaults)\n\n\ntype alias Customer =\n    { score : Float }\n\n\ndefaults : Customer\ndefaults =\n    { score = 1 }\n"},
			want:  []string{"Lib.sky:10:15", "The witness of `Codec.auto` at Main.sky:", "(through `Lib.defaults`)"}},
		{name: "codec auto named witness with a point", src: "defaults : { score : Float, n : Int }\ndefaults =\n    { score = 0.0, n = 0 }\n\n\nc : Codec { score : Float, n : Int }\nc =\n    let\n        d =\n            defaults\n    in\n    Codec.auto d\n"},
		{name: "codec auto named witness made an Int codec", src: "defaults =\n    { n = 0 }\n\n\nc : Codec { n : Int }\nc =\n    Codec.auto defaults\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, errs := checkSources(t, header+tc.src, tc.extra)
			if len(tc.want) == 0 {
				for _, e := range errs {
					t.Errorf("unexpected: %s", e.Error())
				}
				return
			}
			if len(errs) != 1 {
				t.Fatalf("want 1 error, got %d: %v", len(errs), errs)
			}
			got := errs[0].Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("error lacks %q:\n%s", w, got)
				}
			}
		})
	}
}
