// Package codec is Std.Codec: the .sky source and the kernels that build
// Sky codecs on top of runtime/codec.
//
// A Sky `Codec a` is value.Opaque{Kind: "Codec", V: codec.Codec[value.Value]}
// (runtime/codec), so Go code that receives a codec from Sky — the durable
// engine's binding, Std.Db.Store — encodes and decodes with it directly (see
// FromValue). Decode failures are Decode errors naming the JSON path of the
// bad value, made by runtime/codec. An encoder given a value of the wrong
// kind, or a decoder whose Sky function fails, returns a plain Go error: a
// runtime error of the program, never a Sky failure.
//
// JSON shapes: String, Int, Float, Bool as JSON scalars; () as []; Maybe as
// null or the value; List as an array; Dict String v as an object; a pair as
// a two-element array; records (object/field, auto) as objects keyed by
// field name; enum values as strings; taggedUnion values as
// {"tag": "Name", "args": [...]} ("args" omitted for a var0).
//
// It may import runtime/codec, runtime/task, runtime/value and the standard
// library; never compiler/ or cmd/.
package codec

import (
	_ "embed"
	"errors"

	rc "skydurable/runtime/codec"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Codec.sky
var source string

// Modules returns the Sky source of Std.Codec.
func Modules() map[string]string { return map[string]string{"Std.Codec": source} }

// Codec is the Go form of a Sky codec.
type Codec = rc.Codec[value.Value]

// Kind is the value.Opaque kind of a Sky Codec.
const Kind = "Codec"

// ToValue wraps a Go codec as a Sky Codec value.
func ToValue(c Codec) value.Value { return value.Opaque{Kind: Kind, V: c} }

// FromValue unwraps a Sky Codec value; anything else is an error naming it.
func FromValue(v value.Value) (Codec, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == Kind {
		if c, ok := o.V.(Codec); ok {
			return c, nil
		}
	}
	return Codec{}, value.BadArg("Std.Codec", "a Codec", v)
}

func codecArg(fn string, v value.Value) (Codec, error) {
	c, err := FromValue(v)
	if err != nil {
		return Codec{}, value.BadArg(fn, "a Codec", v)
	}
	return c, nil
}

// Kernels returns the Std.Codec kernels.
func Kernels() map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, group := range [][]value.Kernel{primitiveKernels(), objectKernels(), unionKernels(), {
		{Name: "Codec_auto", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := Auto(a[0])
			if err != nil {
				return nil, err
			}
			return ToValue(c), nil
		}},
		{Name: "Codec_autoWith", Arity: 2, Fn: autoWith},
		{Name: "Codec_toJson", Arity: 2, Fn: toJSON},
		{Name: "Codec_fromJson", Arity: 2, Fn: fromJSON},
	}} {
		for _, k := range group {
			out[k.Name] = k
		}
	}
	return out
}

// toJSON is Codec.toJson. Its Sky type returns a plain String, so a value
// the codec cannot encode (NaN, a wrong kind) is a runtime error.
func toJSON(a []value.Value) (value.Value, error) {
	c, err := codecArg("Codec.toJson", a[0])
	if err != nil {
		return nil, err
	}
	s, err := c.Encode(a[1])
	if err != nil {
		return nil, errors.New("Codec.toJson: " + err.Error())
	}
	return s, nil
}

// fromJSON is Codec.fromJson: a Decode failure is `Err error`; a Sky
// function that fails inside the codec is a runtime error.
func fromJSON(a []value.Value) (value.Value, error) {
	c, err := codecArg("Codec.fromJson", a[0])
	if err != nil {
		return nil, err
	}
	s, ok := a[1].(string)
	if !ok {
		return nil, value.BadArg("Codec.fromJson", "a String of JSON", a[1])
	}
	v, err := c.Decode(s)
	var skyErr *task.Error
	switch {
	case err == nil:
		return value.Ok(v), nil
	case errors.As(err, &skyErr) && !value.IsRuntimeError(err):
		return value.Err(value.FromError(skyErr)), nil
	}
	return nil, err
}
