// Package codec is Sky's Codec in Go: a pair of JSON encoder and decoder for
// one type. Decoding first parses the whole text, then walks it; a mismatch
// is a Decode error that names the JSON path of the bad value and what was
// found there (`$.items[2].sku: expected a string, found 42`).
//
// It may import runtime/task and the standard library.
package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"skydurable/runtime/task"
)

// Codec encodes A to JSON and decodes JSON to A. Build codecs with the
// constructors of this package or with Make.
type Codec[A any] struct {
	enc   func(*bytes.Buffer, A) error
	dec   func(v any, path Path) (A, error)
	shape any
}

// WithShape returns c carrying s, a description of its JSON for code that
// derives something from a codec (Std.Db.Store derives table columns); what
// the codec encodes and decodes is unchanged.
func (c Codec[A]) WithShape(s any) Codec[A] {
	c.shape = s
	return c
}

// Shape is what WithShape attached, nil when nothing was.
func (c Codec[A]) Shape() any { return c.shape }

// Make builds a codec from an encoder that appends compact JSON to buf and a
// decoder over a parsed JSON value (nil, bool, json.Number, string, []any,
// map[string]any) at path.
func Make[A any](enc func(buf *bytes.Buffer, a A) error, dec func(v any, path Path) (A, error)) Codec[A] {
	return Codec[A]{enc: enc, dec: dec}
}

// EncodeTo appends the compact JSON of a to buf.
func (c Codec[A]) EncodeTo(buf *bytes.Buffer, a A) error { return c.enc(buf, a) }

// Encode returns the compact JSON text of a (Sky's Codec.toJson).
func (c Codec[A]) Encode(a A) (string, error) {
	var buf bytes.Buffer
	if err := c.enc(&buf, a); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// DecodeValue decodes an already parsed JSON value found at path.
func (c Codec[A]) DecodeValue(v any, path Path) (A, error) { return c.dec(v, path) }

// Decode parses text and decodes it (Sky's Codec.fromJson). Every failure is a
// *task.Error of kind Decode with JsonDecode details.
func (c Codec[A]) Decode(text string) (A, error) {
	v, err := Parse(text)
	if err != nil {
		var zero A
		return zero, err
	}
	return c.dec(v, Root)
}

// Parse parses JSON text into the generic form codecs decode from. Numbers
// stay json.Number so integers keep full precision.
func Parse(text string) (any, error) {
	if v, ok := scalar(text); ok {
		return v, nil
	}
	return parseText(text)
}

// scalar is Parse's short cut for the texts most decodes see (a run's input
// or a step's result that is a string without escapes, a number, true,
// false or null, with no white space around): the value the decoder gives,
// without a decoder (its read buffer was most of what a 3-step run's decodes
// allocated). ok is false for anything else, which the decoder parses.
func scalar(text string) (v any, ok bool) {
	switch text {
	case "null":
		return nil, true
	case "true":
		return true, true
	case "false":
		return false, true
	}
	if n := len(text); n >= 2 && text[0] == '"' && text[n-1] == '"' {
		s := text[1 : n-1]
		ascii := true
		for i := 0; i < len(s); i++ {
			switch c := s[i]; {
			case c == '"' || c == '\\' || c < 0x20:
				return nil, false
			case c >= utf8.RuneSelf:
				ascii = false
			}
		}
		if !ascii && !utf8.ValidString(s) {
			return nil, false // the decoder replaces the bad bytes
		}
		return s, true
	}
	if isNumber(text) {
		return json.Number(text), true
	}
	return nil, false
}

// isNumber reports whether text is exactly one JSON number:
// -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(text string) bool {
	i, n := 0, len(text)
	digits := func() bool {
		start := i
		for i < n && text[i] >= '0' && text[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < n && text[i] == '-' {
		i++
	}
	switch {
	case i < n && text[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < n && text[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < n && (text[i] == 'e' || text[i] == 'E') {
		i++
		if i < n && (text[i] == '+' || text[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	return i == n
}

// parseText is Parse through encoding/json's decoder.
func parseText(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		if strings.TrimSpace(text) == "" {
			return nil, DecodeError(Root, "no JSON: the text is empty")
		}
		return nil, DecodeError(Root, fmt.Sprintf("not valid JSON (%v) in %s", err, Preview(text)))
	}
	if d.More() {
		return nil, DecodeError(Root, "unexpected text after the JSON value in "+Preview(text))
	}
	return v, nil
}

// Path is a JSON path such as `$.items[2].sku`.
type Path string

// Root is the path of the whole document.
const Root Path = "$"

// Field is the path of a field of the object at p.
func (p Path) Field(name string) Path { return Path(string(p) + "." + name) }

// Index is the path of an element of the array at p.
func (p Path) Index(i int) Path { return Path(string(p) + "[" + strconv.Itoa(i) + "]") }

// DecodeError is the error every decoder returns: kind Decode, the message
// prefixed by the path, and JsonDecode details carrying the path alone (the
// Prelude documents `JsonDecode String` as the path, so a program can match it).
func DecodeError(p Path, msg string) *task.Error {
	text := string(p) + ": " + msg
	return task.New(task.Decode, text).WithDetails(task.Details{Tag: task.JsonDecode, Text: string(p)})
}

// Mismatch is DecodeError for "expected X, found <the value>".
func Mismatch(p Path, expected string, found any) *task.Error {
	return DecodeError(p, "expected "+expected+", found "+Describe(found))
}

// Describe renders a parsed JSON value compactly for an error message.
func Describe(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return Preview(string(b))
}

// Preview shortens text for an error message.
func Preview(text string) string {
	const max = 80
	if len(text) > max {
		return text[:max] + "…"
	}
	return text
}

// WriteString appends s as a JSON string. Like JavaScript's
// JSON.stringify (what Elm's encoder produces), it leaves <, > and & as they
// are rather than escaping them for HTML.
func WriteString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a Go string always encodes
	buf.Truncate(buf.Len() - 1) // Encode ends the value with a newline
}

// String is the codec of JSON strings.
var String = Make(
	func(buf *bytes.Buffer, s string) error { WriteString(buf, s); return nil },
	func(v any, p Path) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", Mismatch(p, "a string", v)
		}
		return s, nil
	})

// Int is the codec of JSON integers (64-bit). 3.0 decodes as 3; 3.5 is an error.
var Int = Make(
	func(buf *bytes.Buffer, i int64) error { buf.WriteString(strconv.FormatInt(i, 10)); return nil },
	func(v any, p Path) (int64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, Mismatch(p, "an integer", v)
		}
		i, ok := IntOf(n)
		if !ok {
			return 0, Mismatch(p, "an integer", v)
		}
		return i, nil
	})

// IntOf reads a JSON number as a 64-bit integer, as JSON (which has no
// integer type) and Elm read it: 3 and 3.0 are 3; 3.5, 1e400 and anything
// outside the int64 range are not integers.
func IntOf(n json.Number) (int64, bool) {
	if i, err := n.Int64(); err == nil {
		return i, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// Float is the codec of JSON numbers. NaN and infinities cannot be encoded.
var Float = Make(
	func(buf *bytes.Buffer, f float64) error {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return task.Errorf(task.InvalidInput, "cannot encode %v as JSON", f)
		}
		buf.WriteString(jsNumber(f))
		return nil
	},
	func(v any, p Path) (float64, error) {
		n, ok := v.(json.Number)
		if !ok {
			return 0, Mismatch(p, "a number", v)
		}
		f, err := n.Float64()
		if err != nil {
			return 0, Mismatch(p, "a number", v)
		}
		return f, nil
	})

// jsNumber writes a finite float as JavaScript's JSON.stringify does (what
// Elm's encoder produces): plain digits from 1e-6 up to 1e21 (1000000,
// 0.000001), an unpadded exponent outside (1e-7, 1e+21), and -0 as 0.
func jsNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	return mant + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

// Bool is the codec of JSON booleans.
var Bool = Make(
	func(buf *bytes.Buffer, b bool) error { buf.WriteString(strconv.FormatBool(b)); return nil },
	func(v any, p Path) (bool, error) {
		b, ok := v.(bool)
		if !ok {
			return false, Mismatch(p, "a boolean", v)
		}
		return b, nil
	})

// Unit is the codec of Sky's (): encoded as [] (Elm's convention), and any
// JSON null or empty array decodes to it.
var Unit = Make(
	func(buf *bytes.Buffer, _ struct{}) error { buf.WriteString("[]"); return nil },
	func(v any, p Path) (struct{}, error) {
		if a, ok := v.([]any); (ok && len(a) == 0) || v == nil {
			return struct{}{}, nil
		}
		return struct{}{}, Mismatch(p, "() as []", v)
	})

// Maybe encodes nil as null and a present value with c.
func Maybe[A any](c Codec[A]) Codec[*A] {
	return Make(
		func(buf *bytes.Buffer, a *A) error {
			if a == nil {
				buf.WriteString("null")
				return nil
			}
			return c.enc(buf, *a)
		},
		func(v any, p Path) (*A, error) {
			if v == nil {
				return nil, nil
			}
			a, err := c.dec(v, p)
			if err != nil {
				return nil, err
			}
			return &a, nil
		})
}

// List is the codec of JSON arrays whose elements use c.
func List[A any](c Codec[A]) Codec[[]A] {
	return Make(
		func(buf *bytes.Buffer, as []A) error {
			buf.WriteByte('[')
			for i, a := range as {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := c.enc(buf, a); err != nil {
					return err
				}
			}
			buf.WriteByte(']')
			return nil
		},
		func(v any, p Path) ([]A, error) {
			arr, ok := v.([]any)
			if !ok {
				return nil, Mismatch(p, "an array", v)
			}
			out := make([]A, len(arr))
			for i, e := range arr {
				a, err := c.dec(e, p.Index(i))
				if err != nil {
					return nil, err
				}
				out[i] = a
			}
			return out, nil
		})
}

// Map is Sky's Codec.map: decode with c then apply to; encode by applying from
// then c.
func Map[A, B any](to func(A) B, from func(B) A, c Codec[A]) Codec[B] {
	return Make(
		func(buf *bytes.Buffer, b B) error { return c.enc(buf, from(b)) },
		func(v any, p Path) (B, error) {
			a, err := c.dec(v, p)
			if err != nil {
				var zero B
				return zero, err
			}
			return to(a), nil
		})
}

// Enum maps each value to a JSON string; decoding an unknown string names the
// accepted ones.
func Enum[A comparable](cases []EnumCase[A]) Codec[A] {
	return Make(
		func(buf *bytes.Buffer, a A) error {
			for _, c := range cases {
				if c.Value == a {
					WriteString(buf, c.Name)
					return nil
				}
			}
			return task.Errorf(task.InvalidInput, "enum codec has no name for %v", a)
		},
		func(v any, p Path) (A, error) {
			var zero A
			s, ok := v.(string)
			if !ok {
				return zero, Mismatch(p, "one of "+enumNames(cases), v)
			}
			for _, c := range cases {
				if c.Name == s {
					return c.Value, nil
				}
			}
			return zero, Mismatch(p, "one of "+enumNames(cases), v)
		})
}

// EnumCase pairs a value with its JSON name.
type EnumCase[A any] struct {
	Value A
	Name  string
}

func enumNames[A any](cases []EnumCase[A]) string {
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = strconv.Quote(c.Name)
	}
	return strings.Join(names, ", ")
}
