package ffi_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
)

// loadSky writes files (Main.sky and any others) into a temporary source
// root and loads the program with the real stdlib.
func loadSky(t *testing.T, files map[string]string) *eval.Program {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	prog, err := eval.Load(filepath.Join(dir, "Main.sky"), eval.Options{
		Root:   dir,
		Stdlib: eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.Kernels()},
	})
	if err != nil {
		t.Fatalf("the program does not load:\n%v", err)
	}
	return prog
}

// runSkyTests runs a Sky.Test module and fails the Go test on any Sky failure.
func runSkyTests(t *testing.T, src string) {
	t.Helper()
	prog := loadSky(t, map[string]string{"Main.sky": src})
	var out strings.Builder
	rep, err := prog.RunTests(context.Background(), &out)
	if err != nil {
		t.Fatalf("running tests: %v\n%s", err, out.String())
	}
	t.Logf("Sky tests:\n%s", out.String())
	if rep.Failed > 0 || rep.Passed == 0 {
		t.Errorf("Sky tests: %d passed, %d failed:\n%s", rep.Passed, rep.Failed, out.String())
	}
}

func TestCoreFromSky(t *testing.T) {
	runSkyTests(t, `module Main exposing (tests)

import Sky.Test exposing (..)
import Sky.Core.List as List
import Sky.Core.String as String
import Sky.Core.Maybe as Maybe
import Sky.Core.Result as Result
import Sky.Core.Dict as Dict
import Sky.Core.Error as Error
import Sky.Core.Basics as Basics
import Sky.Core.Task as Task


tests : List Test
tests =
    [ test "prelude" (\_ -> equal 3 (clamp 0 3 (modBy 10 13)))
    , test "order" (\_ -> equal LT (compare 1 2))
    , test "basics qualified" (\_ -> equal 7 (Basics.max 3 7))
    , test "fst snd" (\_ -> equal ( 1, "b" ) ( fst ( 1, 2 ), snd ( 1, "b" ) ))
    , test "list" (\_ -> equal [ 2, 4 ] (List.filter (\x -> modBy 2 x == 0) (List.range 1 5)))
    , test "list head" (\_ -> equal (Just 1) (List.head [ 1, 2 ]))
    , test "string" (\_ -> equal "A-B" (String.join "-" (String.split "," (String.toUpper "a,b"))))
    , test "maybe" (\_ -> equal 5 (Maybe.withDefault 5 Nothing))
    , test "maybe isJust" (\_ -> isTrue (Maybe.isJust (Just 1)))
    , test "result combine" (\_ -> equal (Ok [ 1, 2 ]) (Result.combine [ Ok 1, Ok 2 ]))
    , test "result combine err" (\_ -> equal (Err "x") (Result.combine [ Ok 1, Err "x", Err "y" ]))
    , test "dict" (\_ -> equal (Just 2) (Dict.get "b" (Dict.fromList [ ( "a", 1 ), ( "b", 2 ) ])))
    , test "dict update" (\_ -> equal [ ( "a", 10 ) ] (Dict.toList (Dict.update "a" (Maybe.map (\v -> v * 10)) (Dict.singleton "a" 1))))
    , test "error toString" (\_ -> equal "NotFound: not found" (Error.toString Error.notFound))
    , test "errorToString" (\_ -> equal "IO: disk" (errorToString (Error.io "disk")))
    , test "retryable" (\_ -> isTrue (Error.isRetryable Error.timeout))
    , test "not retryable" (\_ -> isFalse (Error.isRetryable (Error.conflict "dup")))
    , test "task run" (\_ -> equal (Ok 42) (Task.run (Task.map (\x -> x * 2) (Task.succeed 21))))
    , test "task onError" (\_ -> ok (Task.run (Task.onError (\e -> Task.succeed (Error.message e)) (Task.fail (Error.io "x")))))
    , test "task sequence" (\_ -> equal (Ok [ 1, 2 ]) (Task.run (Task.sequence [ Task.succeed 1, Task.succeed 2 ])))
    , test "task fromResult" (\_ -> err (Task.run (Task.fromResult (Err Error.timeout))))
    , suite "grouped" [ test "pass" (\_ -> pass) ]
    ]
`)
}

func TestCodecFromSky(t *testing.T) {
	runSkyTests(t, `module Main exposing (tests)

import Sky.Test exposing (..)
import Std.Codec as Codec exposing (Codec)
import Sky.Core.Result as Result
import Sky.Core.Error as Error


type alias Item =
    { sku : String, qty : Int }


type Payment
    = Pending
    | Paid Int
    | Refunded Int String


type Color
    = Red
    | Green


itemCodec : Codec Item
itemCodec =
    Codec.object Item
        |> Codec.field "sku" .sku Codec.string
        |> Codec.field "qty" .qty Codec.int
        |> Codec.buildObject


paymentCodec : Codec Payment
paymentCodec =
    Codec.taggedUnion
        [ Codec.var0 "Pending" Pending
        , Codec.var1 "Paid" Paid Codec.int
        , Codec.var2 "Refunded" Refunded Codec.int Codec.string
        ]


colorCodec : Codec Color
colorCodec =
    Codec.enum [ ( Red, "red" ), ( Green, "green" ) ]


decodeMessage : Result Error a -> String
decodeMessage result =
    case result of
        Ok _ ->
            "no error"

        Err e ->
            Error.toString e


tests : List Test
tests =
    [ test "toJson string" (\_ -> equal "\"ok\"" (Codec.toJson Codec.string "ok"))
    , test "object round trip" (\_ -> equal (Ok (Item "a" 2)) (Codec.fromJson itemCodec (Codec.toJson itemCodec (Item "a" 2))))
    , test "object json" (\_ -> equal "{\"sku\":\"a\",\"qty\":2}" (Codec.toJson itemCodec { sku = "a", qty = 2 }))
    , test "list path" (\_ -> equal "Decode: $[1].qty: expected an integer, found \"x\"" (decodeMessage (Codec.fromJson (Codec.list itemCodec) "[{\"sku\":\"a\",\"qty\":1},{\"sku\":\"b\",\"qty\":\"x\"}]")))
    , test "tagged union" (\_ -> equal "{\"tag\":\"Refunded\",\"args\":[5,\"late\"]}" (Codec.toJson paymentCodec (Refunded 5 "late")))
    , test "tagged union back" (\_ -> equal (Ok (Paid 7)) (Codec.fromJson paymentCodec "{\"tag\":\"Paid\",\"args\":[7]}"))
    , test "var0" (\_ -> equal (Ok Pending) (Codec.fromJson paymentCodec (Codec.toJson paymentCodec Pending)))
    , test "enum" (\_ -> equal (Ok [ Red, Green ]) (Codec.fromJson (Codec.list colorCodec) "[\"red\",\"green\"]"))
    , test "auto" (\_ -> equal (Ok { name = "x", retries = 3 }) (Codec.fromJson (Codec.auto { name = "d", retries = 3 }) "{\"name\":\"x\"}"))
    , test "maybe" (\_ -> equal (Ok [ Nothing, Just 1 ]) (Codec.fromJson (Codec.list (Codec.maybe Codec.int)) "[null,1]"))
    , test "map" (\_ -> equal "3" (Codec.toJson (Codec.map String.fromInt (\s -> Maybe.withDefault 0 (String.toInt s)) Codec.int) "3"))
    , test "decode error kind" (\_ -> equal (Err Decode) (Result.mapError Error.kind (Codec.fromJson Codec.int "\"a\"")))
    ]
`)
}

func TestDbFromSky(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	runSkyTests(t, strings.ReplaceAll(`module Main exposing (tests)

import Sky.Test exposing (..)
import Sky.Core.Task as Task
import Sky.Core.Dict as Dict
import Std.Codec as Codec
import Std.Db as Db exposing (Db, SqlValue(..))
import Std.Db.Store as Store
import Sky.Core.Error as Error


type alias User =
    { name : String, age : Int }


withDb : (Db -> Task Error a) -> Task Error a
withDb body =
    Db.open "sqlite" "PATH"
        |> Task.andThen
            (\db ->
                Db.execRaw db "CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, age INTEGER)"
                    |> Task.andThen (\_ -> Db.exec db "DELETE FROM users" [])
                    |> Task.andThen (\_ -> Db.exec db "INSERT INTO users (name, age) VALUES (?, ?), (?, ?)" [ SqlString "Ada", SqlInt 36, SqlString "Bob", SqlNull ])
                    |> Task.andThen (\_ -> body db)
            )


tests : List Test
tests =
    [ test "query" (\_ -> withDb (\db -> Db.query db "SELECT name, age FROM users ORDER BY name" []) |> Task.map (\rows -> equal [ "36", "" ] (List.map (\r -> Dict.get "age" r |> Maybe.withDefault "?") rows)))
    , test "selectRaw" (\_ -> withDb (\db -> Store.selectRaw db (Codec.auto { name = "", age = 0 }) "SELECT name, age FROM users WHERE age IS NOT NULL" []) |> Task.map (equal [ User "Ada" 36 ]))
    , test "rollback" (\_ -> withDb (\db -> Db.withTransaction db (\tx -> Db.exec tx "DELETE FROM users" [] |> Task.andThen (\_ -> Task.fail (Error.conflict "no"))) |> Task.onError (\_ -> Db.query db "SELECT name FROM users" [])) |> Task.map (\rows -> equal 2 (List.length rows)))
    , test "conflict" (\_ -> withDb (\db -> Db.exec db "INSERT INTO users (name) VALUES (?)" [ SqlString "Ada" ]) |> Task.map (\_ -> fail "inserted a duplicate") |> Task.onError (\e -> Task.succeed (equal Conflict (Error.kind e))))
    ]
`, "PATH", path))
}

func TestKernelsWithInjectsOutputAndClock(t *testing.T) {
	var stdout strings.Builder
	env := ffi.DefaultEnv()
	env.Log.Stdout = &stdout
	env.Core.Now = func() time.Time { return time.UnixMilli(1234) }
	prog, err := eval.LoadSource("Main.sky", []byte(`module Main exposing (main)

import Sky.Core.Task as Task
import Sky.Core.Time as Time
import Std.Log exposing (println)


main : Task Error ()
main =
    Time.now () |> Task.andThen (\t -> println (String.fromInt t))
`), eval.Options{Stdlib: eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.KernelsWith(env)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.RunMain(context.Background()); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "1234\n" {
		t.Errorf("stdout = %q, want the injected clock's 1234", stdout.String())
	}
}
