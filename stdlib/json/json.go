// Package json is Sky.Core.Json.Encode and Sky.Core.Json.Decode (Elm's and
// real Sky's JSON modules): JSON values built in Sky and written out, and
// decoders that read JSON text into Sky values, reporting the JSON path of
// what did not fit.
//
// A Sky `Value` is value.Opaque{Kind: "JsonValue"} holding what
// encoding/json decodes (json.Number for numbers) or an ordered object built
// by Encode.object; a `Decoder a` is value.Opaque{Kind: "JsonDecoder"}
// holding a decode function.
//
// It may import runtime/codec, runtime/task, runtime/value and the standard library; never
// compiler/ or cmd/.
package json

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"skydurable/runtime/codec"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Encode.sky
var encodeSource string

//go:embed Decode.sky
var decodeSource string

//go:embed Pipeline.sky
var pipelineSource string

// Modules returns the Sky sources of Sky.Core.Json.Encode, Decode and
// Decode.Pipeline (real Sky's pipeline decoding, in Sky over Decode).
func Modules() map[string]string {
	return map[string]string{"Sky.Core.Json.Encode": encodeSource, "Sky.Core.Json.Decode": decodeSource, "Sky.Core.Json.Decode.Pipeline": pipelineSource}
}

const (
	valueKind   = "JsonValue"
	decoderKind = "JsonDecoder"
)

// object is an object built by Encode.object: its keys in the order given.
type object []pair

type pair struct {
	key string
	val any
}

// textObject is an object read from JSON text: its fields for lookups and
// its keys in the order of the text. A repeated key keeps its first place
// and its last value, as JavaScript's JSON.parse does.
type textObject struct {
	keys   []string
	fields map[string]any
}

func wrap(j any) value.Value { return value.Opaque{Kind: valueKind, V: j} }

func unwrap(fn string, v value.Value) (any, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == valueKind {
		return o.V, nil
	}
	return nil, value.BadArg(fn, "a Json Value", v)
}

// write renders j compactly, or indented by indent spaces when indent > 0.
func write(j any, indent int) (string, error) {
	var buf bytes.Buffer
	if err := writeTo(&buf, j); err != nil {
		return "", err
	}
	if indent <= 0 {
		return buf.String(), nil
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", strings.Repeat(" ", indent)); err != nil {
		return "", err
	}
	return out.String(), nil
}

func writeTo(buf *bytes.Buffer, j any) error {
	switch x := j.(type) {
	case object:
		buf.WriteByte('{')
		for i, p := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			codec.WriteString(buf, p.key)
			buf.WriteByte(':')
			if err := writeTo(buf, p.val); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeTo(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case *textObject:
		buf.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			codec.WriteString(buf, k)
			buf.WriteByte(':')
			if err := writeTo(buf, x.fields[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case string:
		codec.WriteString(buf, x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return fmt.Errorf("Json.Encode: %v cannot be written as JSON: %w", x, err)
		}
		buf.Write(b)
	}
	return nil
}

// describe names a JSON value in a decode error: its kind and a short text.
func describe(j any) string {
	s, err := write(j, 0)
	if err != nil {
		s = fmt.Sprint(j)
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// decodeFn decodes the JSON j found at path.
type decodeFn func(j any, path string) (value.Value, error)

func decoder(f decodeFn) value.Value { return value.Opaque{Kind: decoderKind, V: f} }

func asDecoder(fn string, v value.Value) (decodeFn, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == decoderKind {
		if f, ok := o.V.(decodeFn); ok {
			return f, nil
		}
	}
	return nil, value.BadArg(fn, "a Decoder", v)
}

// failure is a decode error at path.
type failure struct{ path, msg string }

func (f *failure) Error() string { return f.path + ": " + f.msg }

func mismatch(path, want string, j any) error {
	return &failure{path, fmt.Sprintf("expected %s, found %s", want, describe(j))}
}

// parse reads JSON text, numbers as json.Number and objects as *textObject,
// so that a value Decode.value keeps writes back with its keys in order.
func parse(text string) (any, error) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	j, err := readValue(d)
	if err != nil {
		return nil, err
	}
	if d.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return j, nil
}

func number(j any) (json.Number, bool) {
	n, ok := j.(json.Number)
	return n, ok
}

func intOf(j any) (int64, bool) {
	n, ok := number(j)
	if !ok {
		return 0, false
	}
	return codec.IntOf(n)
}

// runDecoder runs d on JSON text; a failure is a Decode Error naming the
// path (`$.items[2].sku`), a runtime error in a Sky function it calls stays
// one.
func runDecoder(d decodeFn, text string) (value.Value, error) {
	j, err := parse(text)
	if err != nil {
		return value.Err(value.FromError(task.Errorf(task.Decode, "this is not JSON: %v", err))), nil
	}
	return result(d(j, "$"))
}

func result(v value.Value, err error) (value.Value, error) {
	switch {
	case err == nil:
		return value.Ok(v), nil
	case value.IsRuntimeError(err):
		return nil, err
	}
	return value.Err(value.FromError(task.New(task.Decode, err.Error()))), nil
}
