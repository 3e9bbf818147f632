package codec

import (
	"bytes"
	"fmt"

	rc "skydurable/runtime/codec"
	"skydurable/runtime/value"
)

// objectSpec is a Sky `ObjectCodec a b`: the record's constructor and the
// fields given so far, in constructor-argument order.
type objectSpec struct {
	ctor   value.Value
	fields []objectField
}

type objectField struct {
	name  string
	get   value.Value // a Sky function from the record to the field
	codec Codec
}

const objectKind = "ObjectCodec"

func objectKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Codec_object", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.Opaque{Kind: objectKind, V: &objectSpec{ctor: a[0]}}, nil
		}},
		{Name: "Codec_field", Arity: 4, Fn: objectField4},
		{Name: "Codec_buildObject", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			spec, err := objectArg("Codec.buildObject", a[0])
			if err != nil {
				return nil, err
			}
			return ToValue(buildObject(spec)), nil
		}},
	}
}

func objectArg(fn string, v value.Value) (*objectSpec, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == objectKind {
		return o.V.(*objectSpec), nil
	}
	return nil, value.BadArg(fn, "an ObjectCodec (start one with Codec.object)", v)
}

// objectField4 is `field name getter codec objectCodec`; it returns a new
// spec and leaves the one it was given unchanged.
func objectField4(a []value.Value) (value.Value, error) {
	name, ok := a[0].(string)
	if !ok {
		return nil, value.BadArg("Codec.field", "a field name (String)", a[0])
	}
	c, err := codecArg("Codec.field", a[2])
	if err != nil {
		return nil, err
	}
	spec, err := objectArg("Codec.field", a[3])
	if err != nil {
		return nil, err
	}
	for _, f := range spec.fields {
		if f.name == name {
			return nil, fmt.Errorf("Codec.field: the key %q is used twice in one object codec; hint: give each field its own key", name)
		}
	}
	fields := make([]objectField, len(spec.fields), len(spec.fields)+1)
	copy(fields, spec.fields)
	return value.Opaque{Kind: objectKind, V: &objectSpec{ctor: spec.ctor, fields: append(fields, objectField{name, a[1], c})}}, nil
}

// buildObject encodes each field under its key in order; decoding reads
// every key (a missing key decodes as null, so a maybe field is Nothing and
// anything else reports the missing key) and applies the constructor.
func buildObject(spec *objectSpec) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			buf.WriteByte('{')
			for i, f := range spec.fields {
				fv, err := value.Apply(f.get, v)
				if err != nil {
					return fmt.Errorf("reading field %q to encode it: %w", f.name, err)
				}
				if i > 0 {
					buf.WriteByte(',')
				}
				rc.WriteString(buf, f.name)
				buf.WriteByte(':')
				if err := f.codec.EncodeTo(buf, fv); err != nil {
					return err
				}
			}
			buf.WriteByte('}')
			return nil
		},
		func(j any, p rc.Path) (value.Value, error) {
			obj, ok := j.(map[string]any)
			if !ok {
				return nil, rc.Mismatch(p, "an object", j)
			}
			args := make([]value.Value, len(spec.fields))
			for i, f := range spec.fields {
				fj, present := obj[f.name]
				v, err := f.codec.DecodeValue(fj, p.Field(f.name))
				if err != nil {
					if !present {
						return nil, rc.DecodeError(p, fmt.Sprintf("missing field %q", f.name))
					}
					return nil, err
				}
				args[i] = v
			}
			return value.Apply(spec.ctor, args...)
		}).WithShape(objectShape(spec))
}

// objectShape is the record shape of an object codec: its keys and the
// shapes of their codecs.
func objectShape(spec *objectSpec) Shape {
	keys := make([]string, len(spec.fields))
	codecs := make([]Codec, len(spec.fields))
	for i, f := range spec.fields {
		keys[i], codecs[i] = f.name, f.codec
	}
	return recordShape(keys, codecs)
}
