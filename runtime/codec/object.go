package codec

import (
	"bytes"
)

// Object builds a codec of a JSON object field by field, for a Go struct (or
// any record-like A). Fields encode in the order they were added.
//
//	type Item struct{ SKU string; Qty int64 }
//	item := codec.Object[Item]().
//		With(codec.Field("sku", func(i Item) string { return i.SKU }, func(i *Item, v string) { i.SKU = v }, codec.String)).
//		With(codec.Field("qty", ...)).
//		Build()
type ObjectCodec[A any] struct {
	fields []FieldCodec[A]
}

// FieldCodec is one field of an object codec.
type FieldCodec[A any] struct {
	Name string
	enc  func(*bytes.Buffer, A) error
	dec  func(v any, p Path, into *A) error
	// Optional fields keep their zero value when the key is missing.
	Optional bool
}

// Object starts an object codec with no fields.
func Object[A any]() ObjectCodec[A] { return ObjectCodec[A]{} }

// Field describes one JSON field: its name, how to read it from A, how to set
// it on A, and its codec. A missing key is a decode error naming the field.
func Field[A, F any](name string, get func(A) F, set func(*A, F), c Codec[F]) FieldCodec[A] {
	return FieldCodec[A]{
		Name: name,
		enc:  func(buf *bytes.Buffer, a A) error { return c.enc(buf, get(a)) },
		dec: func(v any, p Path, into *A) error {
			f, err := c.dec(v, p)
			if err != nil {
				return err
			}
			set(into, f)
			return nil
		},
	}
}

// With adds a field.
func (o ObjectCodec[A]) With(f FieldCodec[A]) ObjectCodec[A] {
	o.fields = append(append([]FieldCodec[A](nil), o.fields...), f)
	return o
}

// Build finishes the object codec. Decoding starts from zero A (use BuildFrom
// for another starting value); unknown keys are ignored.
func (o ObjectCodec[A]) Build() Codec[A] {
	var zero A
	return o.BuildFrom(zero)
}

// BuildFrom is Build with a starting value: decoding copies start, then sets
// each field found; Optional fields keep start's value when missing.
func (o ObjectCodec[A]) BuildFrom(start A) Codec[A] {
	fields := o.fields
	return Make(
		func(buf *bytes.Buffer, a A) error {
			buf.WriteByte('{')
			for i, f := range fields {
				if i > 0 {
					buf.WriteByte(',')
				}
				WriteString(buf, f.Name)
				buf.WriteByte(':')
				if err := f.enc(buf, a); err != nil {
					return err
				}
			}
			buf.WriteByte('}')
			return nil
		},
		func(v any, p Path) (A, error) {
			obj, ok := v.(map[string]any)
			if !ok {
				var zero A
				return zero, Mismatch(p, "an object", v)
			}
			out := start
			for _, f := range fields {
				fv, present := obj[f.Name]
				if !present {
					if f.Optional {
						continue
					}
					var zero A
					return zero, DecodeError(p, "missing field \""+f.Name+"\"")
				}
				if err := f.dec(fv, p.Field(f.Name), &out); err != nil {
					var zero A
					return zero, err
				}
			}
			return out, nil
		})
}

// OptionalField is Field whose key may be missing (the start value is kept).
func OptionalField[A, F any](name string, get func(A) F, set func(*A, F), c Codec[F]) FieldCodec[A] {
	f := Field(name, get, set, c)
	f.Optional = true
	return f
}
