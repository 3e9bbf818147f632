package codec

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/task"
)

type item struct {
	SKU string
	Qty int64
}

type order struct {
	ID    string
	Items []item
	Note  *string
	Paid  bool
	Total float64
}

var itemCodec = Object[item]().
	With(Field("sku", func(i item) string { return i.SKU }, func(i *item, v string) { i.SKU = v }, String)).
	With(Field("qty", func(i item) int64 { return i.Qty }, func(i *item, v int64) { i.Qty = v }, Int)).
	Build()

var orderCodec = Object[order]().
	With(Field("id", func(o order) string { return o.ID }, func(o *order, v string) { o.ID = v }, String)).
	With(Field("items", func(o order) []item { return o.Items }, func(o *order, v []item) { o.Items = v }, List(itemCodec))).
	With(OptionalField("note", func(o order) *string { return o.Note }, func(o *order, v *string) { o.Note = v }, Maybe(String))).
	With(Field("paid", func(o order) bool { return o.Paid }, func(o *order, v bool) { o.Paid = v }, Bool)).
	With(Field("total", func(o order) float64 { return o.Total }, func(o *order, v float64) { o.Total = v }, Float)).
	Build()

func TestRoundTrip(t *testing.T) {
	note := "leave at door"
	o := order{ID: "o-1", Items: []item{{"a", 1}, {"b\"q", 2}}, Note: &note, Paid: true, Total: 12.5}
	text, err := orderCodec.Encode(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"o-1","items":[{"sku":"a","qty":1},{"sku":"b\"q","qty":2}],"note":"leave at door","paid":true,"total":12.5}`
	if text != want {
		t.Fatalf("encode:\n got %s\nwant %s", text, want)
	}
	back, err := orderCodec.Decode(text)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(o, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

func TestDecodeErrorsNameThePath(t *testing.T) {
	cases := []struct {
		name string
		json string
		want string
		path string // the JsonDecode details: the path alone, as Prelude.sky documents
	}{
		{"wrong element type", `{"id":"o","items":[{"sku":"a","qty":1},{"sku":"b","qty":1},{"sku":42,"qty":1}],"paid":true,"total":1}`,
			`Decode: $.items[2].sku: expected a string, found 42`, "$.items[2].sku"},
		{"missing field", `{"id":"o","items":[],"total":1}`, `Decode: $: missing field "paid"`, "$"},
		{"fractional int", `{"id":"o","items":[{"sku":"a","qty":1.5}],"paid":true,"total":1}`,
			`Decode: $.items[0].qty: expected an integer, found 1.5`, "$.items[0].qty"},
		{"not an object", `[1,2]`, `Decode: $: expected an object, found [1,2]`, "$"},
		{"not json", `{"id":`, `Decode: $: not valid JSON (unexpected EOF) in {"id":`, "$"},
		{"empty", " ", `Decode: $: no JSON: the text is empty`, "$"},
		{"trailing text", `{} {}`, `Decode: $: unexpected text after the JSON value in {} {}`, "$"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := orderCodec.Decode(c.json)
			if err == nil {
				t.Fatalf("decoded %s without error", c.json)
			}
			if err.Error() != c.want {
				t.Fatalf("error:\n got %s\nwant %s", err, c.want)
			}
			te := task.As(err)
			if te.Kind != task.Decode || te.Details == nil || te.Details.Tag != task.JsonDecode {
				t.Fatalf("error kind/details = %v %+v, want Decode with JsonDecode details", te.Kind, te.Details)
			}
			if te.Details.Text != c.path {
				t.Fatalf("JsonDecode details = %q, want the path %q", te.Details.Text, c.path)
			}
		})
	}
}

func TestScalars(t *testing.T) {
	if s, _ := String.Encode("ok"); s != `"ok"` {
		t.Errorf(`String.Encode("ok") = %s`, s)
	}
	if i, err := Int.Decode("3.0"); err != nil || i != 3 {
		t.Errorf("Int.Decode(3.0) = %d, %v", i, err)
	}
	if i, err := Int.Decode("9007199254740993"); err != nil || i != 9007199254740993 {
		t.Errorf("Int keeps precision: %d, %v", i, err)
	}
	if _, err := Float.Encode(posInf()); err == nil || task.As(err).Kind != task.InvalidInput {
		t.Errorf("Float.Encode(+Inf) err = %v", err)
	}
	if u, err := Unit.Encode(struct{}{}); err != nil || u != "[]" {
		t.Errorf("Unit.Encode = %s, %v", u, err)
	}
	if m, err := Maybe(Int).Decode("null"); err != nil || m != nil {
		t.Errorf("Maybe null = %v, %v", m, err)
	}
}

func posInf() float64 { var z float64; return 1 / z }

func TestEnumAndMap(t *testing.T) {
	type color int
	c := Enum([]EnumCase[color]{{0, "red"}, {1, "green"}})
	if s, _ := c.Encode(1); s != `"green"` {
		t.Errorf("enum encode = %s", s)
	}
	_, err := c.Decode(`"blue"`)
	if err == nil || !strings.Contains(err.Error(), `expected one of "red", "green", found "blue"`) {
		t.Errorf("enum decode error = %v", err)
	}
	upper := Map(strings.ToUpper, strings.ToLower, String)
	if v, _ := upper.Decode(`"abc"`); v != "ABC" {
		t.Errorf("map decode = %s", v)
	}
	if s, _ := upper.Encode("ABC"); s != `"abc"` {
		t.Errorf("map encode = %s", s)
	}
}

// FuzzDecode checks the decoder never panics and that whatever decodes
// re-encodes to JSON that decodes to the same value.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"id":"o-1","items":[{"sku":"a","qty":1}],"paid":true,"total":1}`,
		`{"id":"","items":[],"note":null,"paid":false,"total":-0.5e3}`,
		`{"id":"x","items":[{"sku":"\u00e9","qty":1e2}],"paid":true,"total":0}`,
		`[`, `null`, `{"items":{}}`, `"\ud800"`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		o, err := orderCodec.Decode(text)
		if err != nil {
			if task.As(err).Kind != task.Decode {
				t.Fatalf("non-Decode error %v", err)
			}
			return
		}
		again, err := orderCodec.Encode(o)
		if err != nil {
			t.Fatalf("re-encode of %+v: %v", o, err)
		}
		back, err := orderCodec.Decode(again)
		if err != nil {
			t.Fatalf("decode of re-encoded %s: %v", again, err)
		}
		if diff := cmp.Diff(o, back); diff != "" {
			t.Fatalf("unstable round trip (-first +second):\n%s", diff)
		}
	})
}

// TestParseShortCutAgreesWithTheDecoder: Parse's short cut for strings,
// numbers, true, false and null gives what encoding/json's decoder gives
// (the same value, or an error both ways) on hand-picked texts and on
// 20,000 random ones over an alphabet of JSON's edge cases, and takes the
// short cut where it should, at one allocation (the value's interface).
func TestParseShortCutAgreesWithTheDecoder(t *testing.T) {
	agree := func(text string) {
		t.Helper()
		got, gotErr := Parse(text)
		want, wantErr := parseText(text)
		if (gotErr != nil) != (wantErr != nil) || cmp.Diff(want, got) != "" {
			t.Errorf("Parse(%q) = %#v, %v; the decoder gives %#v, %v", text, got, gotErr, want, wantErr)
		}
	}
	short := []string{`"abc"`, `""`, `"héllo ✓"`, `0`, `-0`, `42`, `-12.5e+3`, `1E9`, `0.25`, `true`, `false`, `null`,
		`"a/b"`, `123456789012345678901234567890`}
	for _, text := range short {
		agree(text)
		if _, ok := scalar(text); !ok {
			t.Errorf("scalar(%q) took the decoder's way", text)
		}
		if n := testing.AllocsPerRun(50, func() { _, _ = Parse(text) }); n > 1 {
			t.Errorf("Parse(%q) allocates %.0f times, want at most 1", text, n)
		}
	}
	decoder := []string{`"a\"b"`, `"a\nb"`, "\"a\x01b\"", "\"\xff\"", `"\u00e9"`, ` "a"`, `"a" `, `01`, `-`, `1.`, `.5`, `1e`, `+1`,
		`1e+`, `--1`, `"`, `"a`, `a"`, `nul`, `True`, `{}`, `[1,2]`, `{"a":"b"}`, ``, ` `, `"a""b"`, `1 2`, `0x10`, `Infinity`, `NaN`}
	for _, text := range decoder {
		agree(text)
		if _, ok := scalar(text); ok {
			t.Errorf("scalar(%q) took the short cut", text)
		}
	}
	alphabet := []string{`"`, `\`, `0`, `1`, `9`, `-`, `+`, `.`, `e`, `E`, ` `, `t`, `r`, `u`, `e`, `n`, `l`, "\x01", `é`, "\xff", `{`, `]`}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(7) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		agree(b.String())
	}
}
