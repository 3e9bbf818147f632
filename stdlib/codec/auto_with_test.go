package codec

import (
	"testing"

	"skydurable/runtime/value"
)

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"name": "name", "userName": "user_name", "userID": "user_id", "HTTPServer": "http_server",
		"httpServer2": "http_server2", "a1B": "a1_b", "already_snake": "already_snake", "X": "x",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}

// With requireFields, a missing Maybe field decodes as Nothing, never as the
// witness's value (a `Just ""` witness must not invent a value the JSON lacks);
// without it, a missing key still takes the witness's value.
func TestAutoWithMissingMaybeIsNothing(t *testing.T) {
	witness := value.NewRecord(map[string]value.Value{
		"name": "",
		"zip":  value.Ctor{Name: "Just", Args: []value.Value{""}},
	})
	strict, err := AutoWith(AutoOptions{RequireFields: true}, "Codec.autoWith", witness)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fromJSONs(t, ToValue(strict), `{"name":"ada"}`), `Ok { name = "ada", zip = Nothing }`; got != want {
		t.Errorf("requireFields, zip missing: got %s, want %s", got, want)
	}
	plain, err := Auto(witness)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fromJSONs(t, ToValue(plain), `{"name":"ada"}`), `Ok { name = "ada", zip = Just "" }`; got != want {
		t.Errorf("auto, zip missing: got %s, want %s", got, want)
	}
}
