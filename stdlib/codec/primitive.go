package codec

import (
	"bytes"
	"fmt"
	"sort"

	rc "skydurable/runtime/codec"
	"skydurable/runtime/value"
)

func primitiveKernels() []value.Kernel {
	constant := func(name string, c Codec) value.Kernel {
		return value.Kernel{Name: name, Arity: 0, Fn: func([]value.Value) (value.Value, error) { return ToValue(c), nil }}
	}
	wrap1 := func(name, fn string, build func(Codec) Codec) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := codecArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			return ToValue(build(c)), nil
		}}
	}
	return []value.Kernel{
		constant("Codec_string", String),
		constant("Codec_int", Int),
		constant("Codec_float", Float),
		constant("Codec_bool", Bool),
		constant("Codec_unit", Unit),
		wrap1("Codec_maybe", "Codec.maybe", Maybe),
		wrap1("Codec_list", "Codec.list", List),
		wrap1("Codec_dict", "Codec.dict", Dict),
		{Name: "Codec_tuple", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			x, err := codecArg("Codec.tuple", a[0])
			if err != nil {
				return nil, err
			}
			y, err := codecArg("Codec.tuple", a[1])
			if err != nil {
				return nil, err
			}
			return ToValue(Tuple(x, y)), nil
		}},
		{Name: "Codec_map", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			c, err := codecArg("Codec.map", a[2])
			if err != nil {
				return nil, err
			}
			return ToValue(Map(a[0], a[1], c)), nil
		}},
	}
}

// lift turns a typed runtime codec into a codec of Sky values; from reads
// the Go value out of a Sky value (false for a value of the wrong kind).
func lift[A any](c rc.Codec[A], want string, from func(value.Value) (A, bool), to func(A) value.Value) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			a, ok := from(v)
			if !ok {
				return encodeMismatch(want, v)
			}
			return c.EncodeTo(buf, a)
		},
		func(j any, p rc.Path) (value.Value, error) {
			a, err := c.DecodeValue(j, p)
			if err != nil {
				return nil, err
			}
			return to(a), nil
		})
}

func encodeMismatch(want string, v value.Value) error {
	return fmt.Errorf("cannot encode %s (%s) with a codec of %s", value.Show(v), value.KindName(v), want)
}

// The scalar codecs of Sky values.
var (
	String = withKind(lift(rc.String, "String", func(v value.Value) (string, bool) { s, ok := v.(string); return s, ok },
		func(s string) value.Value { return s }), "text")
	Int = withKind(lift(rc.Int, "Int", func(v value.Value) (int64, bool) { i, ok := v.(int64); return i, ok },
		func(i int64) value.Value { return i }), "int")
	Float = withKind(lift(rc.Float, "Float", value.AsFloat, func(f float64) value.Value { return f }), "real")
	Bool  = withKind(lift(rc.Bool, "Bool", func(v value.Value) (bool, bool) { b, ok := v.(bool); return b, ok },
		func(b bool) value.Value { return b }), "bool")
	Unit = lift(rc.Unit, "()", func(v value.Value) (struct{}, bool) { _, ok := v.(value.Unit); return struct{}{}, ok },
		func(struct{}) value.Value { return value.Unit{} })
)

// Maybe encodes Nothing as null and `Just x` as x.
func Maybe(c Codec) Codec {
	shape := ShapeOf(c)
	shape.Nullable = true
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			m, ok := v.(value.Ctor)
			switch {
			case ok && m.Name == "Nothing":
				buf.WriteString("null")
				return nil
			case ok && m.Name == "Just" && len(m.Args) == 1:
				return c.EncodeTo(buf, m.Args[0])
			}
			return encodeMismatch("Maybe", v)
		},
		func(j any, p rc.Path) (value.Value, error) {
			if j == nil {
				return value.Nothing, nil
			}
			v, err := c.DecodeValue(j, p)
			if err != nil {
				return nil, err
			}
			return value.Just(v), nil
		}).WithShape(shape)
}

// List is the codec of JSON arrays.
func List(c Codec) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			l, ok := v.(*value.List)
			if !ok {
				return encodeMismatch("List", v)
			}
			buf.WriteByte('[')
			for first := true; l != nil; l, first = l.Tail, false {
				if !first {
					buf.WriteByte(',')
				}
				if err := c.EncodeTo(buf, l.Head); err != nil {
					return err
				}
			}
			buf.WriteByte(']')
			return nil
		},
		func(j any, p rc.Path) (value.Value, error) {
			arr, ok := j.([]any)
			if !ok {
				return nil, rc.Mismatch(p, "an array", j)
			}
			vs := make([]value.Value, len(arr))
			for i, e := range arr {
				v, err := c.DecodeValue(e, p.Index(i))
				if err != nil {
					return nil, err
				}
				vs[i] = v
			}
			return value.FromSlice(vs), nil
		})
}

// Dict is the codec of JSON objects as `Dict String v`; keys are written in
// ascending order.
func Dict(c Codec) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			d, ok := v.(*value.Dict)
			if !ok {
				return encodeMismatch("Dict String", v)
			}
			buf.WriteByte('{')
			for i := 0; i < d.Size(); i++ {
				k, val := d.Entry(i)
				key, ok := k.(string)
				if !ok {
					return fmt.Errorf("cannot encode a Dict whose key %s is not a String: JSON object keys are strings", value.Show(k))
				}
				if i > 0 {
					buf.WriteByte(',')
				}
				rc.WriteString(buf, key)
				buf.WriteByte(':')
				if err := c.EncodeTo(buf, val); err != nil {
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
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			pairs := make([]value.Value, len(keys))
			for i, k := range keys {
				v, err := c.DecodeValue(obj[k], p.Field(k))
				if err != nil {
					return nil, err
				}
				pairs[i] = value.Tuple{k, v}
			}
			return value.DictFromList(value.FromSlice(pairs))
		})
}

// Tuple is the codec of pairs as two-element arrays.
func Tuple(x, y Codec) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			t, ok := v.(value.Tuple)
			if !ok || len(t) != 2 {
				return encodeMismatch("a pair", v)
			}
			buf.WriteByte('[')
			if err := x.EncodeTo(buf, t[0]); err != nil {
				return err
			}
			buf.WriteByte(',')
			if err := y.EncodeTo(buf, t[1]); err != nil {
				return err
			}
			buf.WriteByte(']')
			return nil
		},
		func(j any, p rc.Path) (value.Value, error) {
			arr, ok := j.([]any)
			if !ok || len(arr) != 2 {
				return nil, rc.Mismatch(p, "an array of two elements", j)
			}
			a, err := x.DecodeValue(arr[0], p.Index(0))
			if err != nil {
				return nil, err
			}
			b, err := y.DecodeValue(arr[1], p.Index(1))
			if err != nil {
				return nil, err
			}
			return value.Tuple{a, b}, nil
		})
}

// Map is Codec.map: decode with c then apply to; encode by applying from
// then c. to and from are Sky functions.
func Map(to, from value.Value, c Codec) Codec {
	return rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			a, err := value.Apply(from, v)
			if err != nil {
				return err
			}
			return c.EncodeTo(buf, a)
		},
		func(j any, p rc.Path) (value.Value, error) {
			a, err := c.DecodeValue(j, p)
			if err != nil {
				return nil, err
			}
			return value.Apply(to, a)
		}).WithShape(c.Shape())
}
