package json

import (
	"math"
	"strings"
	"testing"

	"skydurable/runtime/value"
)

// Decoded objects are written with their keys in the order of the text (a
// repeated key in its first place with its last value, as JSON.parse keeps
// it), built ones in their order, and a Float that JSON cannot hold is
// refused naming it.
func TestWrite(t *testing.T) {
	j, err := parse(`{"z":1,"a":[true,null,{"y":2,"b":3}],"m":0,"z":4}`)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := write(j, 0); got != `{"z":4,"a":[true,null,{"y":2,"b":3}],"m":0}` {
		t.Errorf("decoded: %s", got)
	}
	if got, _ := write(object{{"z", "1"}, {"a", nil}}, 0); got != `{"z":"1","a":null}` {
		t.Errorf("built: %s", got)
	}
	// As Elm's encoder and Codec.toJson, <, > and & are not escaped for HTML.
	if got, _ := write(object{{"<a&b>", "<script>&"}}, 0); got != `{"<a&b>":"<script>&"}` {
		t.Errorf("HTML characters: %s", got)
	}
	_, err = Kernels()["JsonEnc_float"].Fn([]value.Value{math.NaN()})
	if err == nil || !strings.Contains(err.Error(), "a finite Float") {
		t.Errorf("NaN: %v", err)
	}
	if _, err := parse(`1 2`); err == nil {
		t.Error("two values parsed as one")
	}
}

// Decode.index out of range names the array's length, "1 element" for one.
func TestIndexOutOfRange(t *testing.T) {
	k := Kernels()
	for _, c := range []struct {
		text, want string
	}{
		{`[7]`, "$: expected an array with an element 2, found 1 element"},
		{`[]`, "$: expected an array with an element 2, found 0 elements"},
		{`[1,2]`, "$: expected an array with an element 2, found 2 elements"},
	} {
		intDec, _ := k["JsonDec_int"].Fn(nil)
		dec, err := k["JsonDec_index"].Fn([]value.Value{int64(2), intDec})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := asDecoder("test", dec)
		j, _ := parse(c.text)
		if _, err := d(j, "$"); err == nil || err.Error() != c.want {
			t.Errorf("index 2 of %s: %v; want %q", c.text, err, c.want)
		}
	}
}
