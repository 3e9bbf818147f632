package codec

import (
	"strings"
	"testing"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

var kernels = Kernels()

func call(t *testing.T, name string, args ...value.Value) value.Value {
	t.Helper()
	k, ok := kernels[name]
	if !ok || k.Arity != len(args) {
		t.Fatalf("no kernel %s of arity %d", name, len(args))
	}
	v, err := k.Fn(args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

func callErr(name string, args ...value.Value) error {
	_, err := kernels[name].Fn(args)
	return err
}

func toJSONs(t *testing.T, c, v value.Value) string {
	t.Helper()
	return call(t, "Codec_toJson", c, v).(string)
}

// fromJSONs shows the Result of Codec.fromJson, an Err as its Error text.
func fromJSONs(t *testing.T, c value.Value, s string) string {
	t.Helper()
	r := call(t, "Codec_fromJson", c, s).(value.Ctor)
	if r.Name == "Err" {
		var e *task.Error
		if err := value.ToError(r.Args[0]); err != nil {
			e = task.As(err)
		}
		return "Err " + e.Error()
	}
	return "Ok " + value.Show(r.Args[0])
}

var (
	str     = ToValue(String)
	integer = ToValue(Int)
	flt     = ToValue(Float)
	boolean = ToValue(Bool)
)

func list(vs ...value.Value) *value.List { return value.FromSlice(vs) }

// ctor is a Sky constructor function of the given arity, as the evaluator
// makes them.
func ctor(name string, arity int) value.Value {
	return value.NewFunc(name, arity, func(a []value.Value) (value.Value, error) {
		return value.Ctor{Name: name, Args: append([]value.Value(nil), a...)}, nil
	})
}

// recordCtor builds records with fields in the given (argument) order.
func recordCtor(fields ...string) value.Value {
	return value.NewFunc("record", len(fields), func(a []value.Value) (value.Value, error) {
		m := map[string]value.Value{}
		for i, f := range fields {
			m[f] = a[i]
		}
		return value.NewRecord(m), nil
	})
}

func accessor(field string) value.Value {
	return value.NewFunc("."+field, 1, func(a []value.Value) (value.Value, error) {
		r, ok := a[0].(*value.Record)
		if !ok {
			return nil, &value.RuntimeError{Message: "not a record: " + value.Show(a[0])}
		}
		v, ok := r.Get(field)
		if !ok {
			return nil, &value.RuntimeError{Message: "no field " + field}
		}
		return v, nil
	})
}

func TestScalarsRoundTrip(t *testing.T) {
	cases := []struct {
		codec value.Value
		v     value.Value
		json  string
	}{
		{str, "ok", `"ok"`},
		{str, "é\"\n", `"é\"\n"`},
		{integer, int64(-42), `-42`},
		{flt, 1.5, `1.5`},
		{boolean, true, `true`},
		{call(t, "Codec_unit"), value.Unit{}, `[]`},
		{call(t, "Codec_maybe", integer), value.Nothing, `null`},
		{call(t, "Codec_maybe", integer), value.Just(int64(3)), `3`},
		{call(t, "Codec_list", str), list("a", "b"), `["a","b"]`},
		{call(t, "Codec_list", str), (*value.List)(nil), `[]`},
		{call(t, "Codec_tuple", integer, str), value.Tuple{int64(1), "x"}, `[1,"x"]`},
	}
	for _, c := range cases {
		if got := toJSONs(t, c.codec, c.v); got != c.json {
			t.Errorf("toJson %s = %s, want %s", value.Show(c.v), got, c.json)
		}
		if got, want := fromJSONs(t, c.codec, c.json), "Ok "+value.Show(c.v); got != want {
			t.Errorf("fromJson %s = %s, want %s", c.json, got, want)
		}
	}
}

func TestDictAndMap(t *testing.T) {
	dc := call(t, "Codec_dict", integer)
	d, _ := value.DictFromList(list(value.Tuple{"b", int64(2)}, value.Tuple{"a", int64(1)}))
	if got := toJSONs(t, dc, d); got != `{"a":1,"b":2}` {
		t.Errorf("dict toJson = %s", got)
	}
	if got := fromJSONs(t, dc, `{"b":2,"a":1}`); got != `Ok Dict.fromList [("a",1),("b",2)]` {
		t.Errorf("dict fromJson = %s", got)
	}
	// Codec.map: cents as Int <-> a record { cents }.
	wrap := value.NewFunc("wrap", 1, func(a []value.Value) (value.Value, error) {
		return value.NewRecord(map[string]value.Value{"cents": a[0]}), nil
	})
	money := call(t, "Codec_map", wrap, accessor("cents"), integer)
	if got := toJSONs(t, money, value.NewRecord(map[string]value.Value{"cents": int64(250)})); got != "250" {
		t.Errorf("map toJson = %s", got)
	}
	if got := fromJSONs(t, money, "250"); got != "Ok { cents = 250 }" {
		t.Errorf("map fromJson = %s", got)
	}
}

func TestDecodeErrorsNameThePath(t *testing.T) {
	item := call(t, "Codec_buildObject",
		call(t, "Codec_field", "qty", accessor("qty"), integer,
			call(t, "Codec_field", "sku", accessor("sku"), str,
				call(t, "Codec_object", recordCtor("sku", "qty")))))
	order := call(t, "Codec_buildObject",
		call(t, "Codec_field", "items", accessor("items"), call(t, "Codec_list", item),
			call(t, "Codec_object", recordCtor("items"))))
	cases := []struct{ json, want string }{
		{`{"items":[{"sku":"a","qty":1},{"sku":42,"qty":2}]}`, "Err Decode: $.items[1].sku: expected a string, found 42"},
		{`{"items":[{"sku":"a"}]}`, `Err Decode: $.items[0]: missing field "qty"`},
		{`{"items":[{"sku":"a","qty":1.5}]}`, "Err Decode: $.items[0].qty: expected an integer, found 1.5"},
		{`{"items":{}}`, "Err Decode: $.items: expected an array, found {}"},
		{`[1,2`, "Err Decode: $: not valid JSON"},
		{`{"items":[{"sku":"a","qty":1,"extra":true}]}`, `Ok { items = [{ qty = 1, sku = "a" }] }`},
	}
	for _, c := range cases {
		if got := fromJSONs(t, order, c.json); !strings.HasPrefix(got, c.want) {
			t.Errorf("fromJson %s\n got %s\nwant %s", c.json, got, c.want)
		}
	}
	r := call(t, "Codec_fromJson", order, `{"items":[{"sku":1}]}`).(value.Ctor)
	e := value.ToError(r.Args[0]).(*task.Error)
	if e.Kind != task.Decode || e.Details == nil || e.Details.Tag != task.JsonDecode {
		t.Errorf("decode failure: want kind Decode with JsonDecode details, got %#v", e)
	}
}

func TestObjectRoundTripAndMaybeField(t *testing.T) {
	user := call(t, "Codec_buildObject",
		call(t, "Codec_field", "nick", accessor("nick"), call(t, "Codec_maybe", str),
			call(t, "Codec_field", "age", accessor("age"), integer,
				call(t, "Codec_field", "name", accessor("name"), str,
					call(t, "Codec_object", recordCtor("name", "age", "nick"))))))
	ada := value.NewRecord(map[string]value.Value{"name": "Ada", "age": int64(36), "nick": value.Nothing})
	if got := toJSONs(t, user, ada); got != `{"name":"Ada","age":36,"nick":null}` {
		t.Errorf("toJson = %s (fields must keep their declared order)", got)
	}
	if got := fromJSONs(t, user, `{"age":36,"name":"Ada"}`); got != `Ok { age = 36, name = "Ada", nick = Nothing }` {
		t.Errorf("a missing maybe field: %s", got)
	}
	if err := callErr("Codec_field", "name", accessor("name"), str,
		call(t, "Codec_field", "name", accessor("name"), str, call(t, "Codec_object", recordCtor("name", "x")))); err == nil ||
		!strings.Contains(err.Error(), `"name" is used twice`) {
		t.Errorf("duplicate key: got %v", err)
	}
	if err := callErr("Codec_toJson", user, "not a record"); err == nil {
		t.Error("encoding a String with a record codec: want a runtime error")
	}
}

func TestAuto(t *testing.T) {
	witness := value.NewRecord(map[string]value.Value{
		"name":    "default",
		"retries": int64(3),
		"ratio":   0.5,
		"on":      false,
		"tags":    list("x"),
		"extra":   (*value.List)(nil),
		"nick":    value.Nothing,
		"limit":   value.Just(int64(10)),
		"inner":   value.NewRecord(map[string]value.Value{"depth": int64(1), "label": "l"}),
	})
	c := call(t, "Codec_auto", witness)
	full := `{"extra":[1,"two",{"k":null}],"inner":{"depth":2,"label":"m"},"limit":null,"name":"n","nick":"Al","on":true,"ratio":1.25,"retries":5,"tags":["a","b"]}`
	want := `Ok { extra = [1,"two",{ k = Nothing }], inner = { depth = 2, label = "m" }, limit = Nothing, name = "n", nick = Just "Al", on = True, ratio = 1.25, retries = 5, tags = ["a","b"] }`
	if got := fromJSONs(t, c, full); got != want {
		t.Errorf("auto fromJson\n got %s\nwant %s", got, want)
	}
	// Missing keys (also nested ones) take the witness's values.
	if got := fromJSONs(t, c, `{"retries":9,"inner":{"label":"z"}}`); got != `Ok { extra = [], inner = { depth = 1, label = "z" }, limit = Just 10, name = "default", nick = Nothing, on = False, ratio = 0.5, retries = 9, tags = ["x"] }` {
		t.Errorf("auto with missing keys: %s", got)
	}
	if got := fromJSONs(t, c, `{"retries":"many"}`); got != `Err Decode: $.retries: expected an integer, found "many"` {
		t.Errorf("auto bad field: %s", got)
	}
	// Round trip of the witness itself.
	j := toJSONs(t, c, witness)
	if got := fromJSONs(t, c, j); got != "Ok "+value.Show(witness) {
		t.Errorf("auto round trip via %s gave %s", j, got)
	}
	err := callErr("Codec_auto", value.NewRecord(map[string]value.Value{"status": value.Ctor{Name: "Active"}}))
	if err == nil || !strings.Contains(err.Error(), "field $.status") || !strings.Contains(err.Error(), "Codec.object") {
		t.Errorf("auto on a custom type field: got %v", err)
	}
	if err := callErr("Codec_auto", int64(3)); err == nil || !strings.Contains(err.Error(), "record witness") {
		t.Errorf("auto on an Int: got %v", err)
	}
}

func TestEnum(t *testing.T) {
	red, green := value.Ctor{Name: "Red"}, value.Ctor{Name: "Green"}
	c := call(t, "Codec_enum", list(value.Tuple{red, "red"}, value.Tuple{green, "green"}))
	if got := toJSONs(t, c, green); got != `"green"` {
		t.Errorf("enum toJson = %s", got)
	}
	if got := fromJSONs(t, c, `"red"`); got != "Ok Red" {
		t.Errorf("enum fromJson = %s", got)
	}
	if got := fromJSONs(t, c, `"blue"`); got != `Err Decode: $: expected one of "red", "green", found "blue"` {
		t.Errorf("enum unknown = %s", got)
	}
	if err := callErr("Codec_toJson", c, value.Ctor{Name: "Blue"}); err == nil || !strings.Contains(err.Error(), "no name for Blue") {
		t.Errorf("enum encode unknown: %v", err)
	}
}

func TestTaggedUnion(t *testing.T) {
	pending := value.Ctor{Name: "Pending"}
	paid, refunded := ctor("Paid", 1), ctor("Refunded", 2)
	c := call(t, "Codec_taggedUnion", list(
		call(t, "Codec_var0", "pending", pending),
		call(t, "Codec_var1", "Paid", paid, integer),
		call(t, "Codec_var2", "Refunded", refunded, integer, str),
	))
	cases := []struct {
		v    value.Value
		json string
	}{
		{pending, `{"tag":"pending"}`},
		{value.Ctor{Name: "Paid", Args: []value.Value{int64(120)}}, `{"tag":"Paid","args":[120]}`},
		{value.Ctor{Name: "Refunded", Args: []value.Value{int64(5), "late"}}, `{"tag":"Refunded","args":[5,"late"]}`},
	}
	for _, cs := range cases {
		if got := toJSONs(t, c, cs.v); got != cs.json {
			t.Errorf("toJson %s = %s, want %s", value.Show(cs.v), got, cs.json)
		}
		if got := fromJSONs(t, c, cs.json); got != "Ok "+value.Show(cs.v) {
			t.Errorf("fromJson %s = %s", cs.json, got)
		}
	}
	errs := []struct{ json, want string }{
		{`{"tag":"Lost"}`, `Err Decode: $.tag: expected one of "pending", "Paid", "Refunded", found "Lost"`},
		{`{"args":[1]}`, `Err Decode: $: missing field "tag"`},
		{`{"tag":"Paid","args":["x"]}`, `Err Decode: $.args[0]: expected an integer, found "x"`},
		{`{"tag":"Paid"}`, `Err Decode: $.args: expected an array of 1 argument(s) for "Paid", found null`},
		{`"Paid"`, `Err Decode: $: expected an object`},
	}
	for _, e := range errs {
		if got := fromJSONs(t, c, e.json); !strings.HasPrefix(got, e.want) {
			t.Errorf("fromJson %s\n got %s\nwant %s", e.json, got, e.want)
		}
	}
	notCtor := value.NewFunc("f", 1, func(a []value.Value) (value.Value, error) { return int64(1), nil })
	if err := callErr("Codec_var1", "X", notCtor, integer); err == nil || !strings.Contains(err.Error(), "must be a constructor") {
		t.Errorf("var1 with a non-constructor: %v", err)
	}
	if err := callErr("Codec_taggedUnion", list(call(t, "Codec_var0", "a", pending), call(t, "Codec_var0", "a", value.Ctor{Name: "Other"}))); err == nil || !strings.Contains(err.Error(), `tag "a" is used twice`) {
		t.Errorf("duplicate tag: %v", err)
	}
	if err := callErr("Codec_toJson", c, value.Ctor{Name: "Unknown"}); err == nil || !strings.Contains(err.Error(), "no variant for Unknown") {
		t.Errorf("encoding an unknown constructor: %v", err)
	}
}

func TestEncodeMistakesAreRuntimeErrors(t *testing.T) {
	if err := callErr("Codec_toJson", integer, "3"); err == nil || !strings.Contains(err.Error(), `cannot encode "3" (String) with a codec of Int`) {
		t.Errorf("got %v", err)
	}
	if err := callErr("Codec_toJson", flt, value.Value(nan())); err == nil {
		t.Error("encoding NaN: want an error")
	}
	if err := callErr("Codec_fromJson", "not a codec", "1"); err == nil || !strings.Contains(err.Error(), "expects a Codec") {
		t.Errorf("got %v", err)
	}
}

func nan() float64 { var z float64; return z / z }

func TestFromValue(t *testing.T) {
	c, err := FromValue(integer)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := c.Encode(int64(7)); s != "7" {
		t.Errorf("Go-side encode = %s", s)
	}
	if _, err := FromValue(int64(1)); err == nil {
		t.Error("FromValue of an Int: want an error")
	}
}
