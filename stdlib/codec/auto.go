package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"

	rc "skydurable/runtime/codec"
	"skydurable/runtime/value"
)

// Auto derives a record codec from a witness record (Codec.auto): keys are
// the field names, a missing key decodes as the witness's value, and each
// field's codec is inferred from the witness's value (see inferCodec).
func Auto(witness value.Value) (Codec, error) {
	return AutoWith(AutoOptions{}, "Codec.auto", witness)
}

// AutoOptions are Codec.autoWith's: SnakeCase writes and reads each field
// under its snake_case key (userName as "user_name"), RequireFields makes a
// missing key a decode error naming it (a Maybe field may still be
// missing: it is Nothing), as real Sky's Codec.auto does.
type AutoOptions struct {
	SnakeCase, RequireFields bool
}

// AutoWith is Auto with options; fn names the Sky function for errors.
func AutoWith(o AutoOptions, fn string, witness value.Value) (Codec, error) {
	r, ok := witness.(*value.Record)
	if !ok {
		return Codec{}, fmt.Errorf("%s needs a record witness such as { name = \"\", age = 0 }, but got %s (%s)", fn, value.Show(witness), value.KindName(witness))
	}
	return o.record(r, "")
}

// autoWith is the kernel of Codec.autoWith: the options record, then the
// witness.
func autoWith(a []value.Value) (value.Value, error) {
	const fn = "Codec.autoWith"
	r, ok := a[0].(*value.Record)
	if !ok {
		return nil, value.BadArg(fn, "options { snakeCase : Bool, requireFields : Bool }", a[0])
	}
	snake, ok1 := r.Get("snakeCase")
	req, ok2 := r.Get("requireFields")
	s, ok3 := snake.(bool)
	q, ok4 := req.(bool)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, value.BadArg(fn, "options { snakeCase : Bool, requireFields : Bool }", a[0])
	}
	c, err := AutoWith(AutoOptions{SnakeCase: s, RequireFields: q}, fn, a[1])
	if err != nil {
		return nil, err
	}
	return ToValue(c), nil
}

func (o AutoOptions) record(w *value.Record, at string) (Codec, error) {
	codecs := make([]Codec, len(w.Names))
	keys := make([]string, len(w.Names))
	for i, name := range w.Names {
		keys[i] = name
		if o.SnakeCase {
			keys[i] = snakeCase(name)
		}
		c, err := o.infer(w.Values[i], at+"."+name)
		if err != nil {
			return Codec{}, err
		}
		codecs[i] = c
	}
	names := w.Names
	// Encode in the order the witness was written in, as JSON.stringify
	// would write the literal; order[k] is the slot of the k-th key.
	declared := w.FieldOrder()
	order := make([]int, len(declared))
	for k, name := range declared {
		order[k] = w.Index(name)
	}
	c := rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			r, ok := v.(*value.Record)
			if !ok {
				return encodeMismatch("a record", v)
			}
			buf.WriteByte('{')
			for k, i := range order {
				name := names[i]
				fv, ok := r.Get(name)
				if !ok {
					return fmt.Errorf("cannot encode %s: it has no field %q, which the Codec.auto witness has", value.Show(v), name)
				}
				if k > 0 {
					buf.WriteByte(',')
				}
				rc.WriteString(buf, keys[i])
				buf.WriteByte(':')
				if err := codecs[i].EncodeTo(buf, fv); err != nil {
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
			vals := make([]value.Value, len(names))
			for i, key := range keys {
				fj, present := obj[key]
				if !present {
					switch {
					case !o.RequireFields:
						vals[i] = w.Values[i]
					case isMaybe(w.Values[i]):
						vals[i] = value.Nothing
					default:
						return nil, rc.DecodeError(p, fmt.Sprintf("missing field %q", key))
					}
					continue
				}
				v, err := codecs[i].DecodeValue(fj, p.Field(key))
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			return &value.Record{Names: names, Values: vals, Declared: w.Declared}, nil
		}).WithShape(recordShape(inOrder(order, keys), inOrder(order, codecs)))
	return c, nil
}

// inferCodec picks the codec of a witness value; at names the field for the
// error when nothing fits.
func inferCodec(v value.Value, at string) (Codec, error) {
	return AutoOptions{}.infer(v, at)
}

func (o AutoOptions) infer(v value.Value, at string) (Codec, error) {
	switch x := v.(type) {
	case int64:
		return Int, nil
	case float64:
		return Float, nil
	case string:
		return String, nil
	case bool:
		return Bool, nil
	case rune:
		return Char, nil
	case value.Unit:
		return Unit, nil
	case *value.Record:
		return o.record(x, at)
	case *value.List:
		if x == nil {
			return List(Dynamic), nil
		}
		c, err := o.infer(x.Head, at+"[0]")
		if err != nil {
			return Codec{}, err
		}
		return List(c), nil
	case value.Tuple:
		if len(x) != 2 {
			break
		}
		a, err := o.infer(x[0], at+"[0]")
		if err != nil {
			return Codec{}, err
		}
		b, err := o.infer(x[1], at+"[1]")
		if err != nil {
			return Codec{}, err
		}
		return Tuple(a, b), nil
	case *value.Dict:
		if x.Size() == 0 {
			return Dict(Dynamic), nil
		}
		_, first := x.Entry(0)
		c, err := o.infer(first, at+"[key]")
		if err != nil {
			return Codec{}, err
		}
		return Dict(c), nil
	case value.Ctor:
		switch {
		case x.Name == "Nothing" && len(x.Args) == 0:
			return Maybe(Dynamic), nil
		case x.Name == "Just" && len(x.Args) == 1:
			c, err := o.infer(x.Args[0], at)
			if err != nil {
				return Codec{}, err
			}
			return Maybe(c), nil
		}
	}
	return Codec{}, fmt.Errorf("Codec.auto cannot infer a codec for the field $%s from its witness value %s (%s); hint: build this record with Codec.object and Codec.field, using Codec.enum or Codec.taggedUnion for custom types", at, value.Show(v), value.KindName(v))
}

// Char encodes a Char as a one-character string.
var Char = rc.Make(
	func(buf *bytes.Buffer, v value.Value) error {
		c, ok := v.(rune)
		if !ok {
			return encodeMismatch("Char", v)
		}
		rc.WriteString(buf, string(c))
		return nil
	},
	func(j any, p rc.Path) (value.Value, error) {
		s, ok := j.(string)
		if r := []rune(s); ok && len(r) == 1 {
			return r[0], nil
		}
		return nil, rc.Mismatch(p, "a one-character string", j)
	})

// Dynamic encodes any plain Sky value by its shape and decodes JSON by its
// shape; Codec.auto uses it where the witness cannot say the type (an empty
// list, Nothing). Decoding: strings, integers as Int, other numbers as
// Float, booleans, arrays as Lists, objects as records, null as Nothing.
var Dynamic Codec

func init() { Dynamic = rc.Make(encodeDynamic, decodeDynamic) }

func encodeDynamic(buf *bytes.Buffer, v value.Value) error {
	switch x := v.(type) {
	case value.Ctor:
		switch {
		case x.Name == "Nothing" && len(x.Args) == 0:
			buf.WriteString("null")
			return nil
		case x.Name == "Just" && len(x.Args) == 1:
			return encodeDynamic(buf, x.Args[0])
		}
		return fmt.Errorf("cannot encode the custom type value %s without a codec for its type; hint: use Codec.taggedUnion or Codec.enum", value.Show(v))
	case *value.Dict:
		return Dict(Dynamic).EncodeTo(buf, x)
	case *value.List:
		return List(Dynamic).EncodeTo(buf, x)
	case value.Tuple:
		return List(Dynamic).EncodeTo(buf, value.FromSlice(x))
	}
	c, err := inferCodec(v, "")
	if err != nil {
		return fmt.Errorf("cannot encode %s (%s) as JSON", value.Show(v), value.KindName(v))
	}
	return c.EncodeTo(buf, v)
}

func decodeDynamic(j any, p rc.Path) (value.Value, error) {
	switch x := j.(type) {
	case nil:
		return value.Nothing, nil
	case string:
		return x, nil
	case bool:
		return x, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		return Float.DecodeValue(x, p)
	case []any:
		return List(Dynamic).DecodeValue(x, p)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		vals := make([]value.Value, len(keys))
		for i, k := range keys {
			v, err := decodeDynamic(x[k], p.Field(k))
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		return &value.Record{Names: keys, Values: vals}, nil
	}
	return nil, rc.Mismatch(p, "a JSON value", j)
}

// isMaybe reports whether a witness value is a Maybe (its field may be
// missing even when fields are required).
func isMaybe(v value.Value) bool {
	c, ok := v.(value.Ctor)
	return ok && (c.Name == "Nothing" && len(c.Args) == 0 || c.Name == "Just" && len(c.Args) == 1)
}

// snakeCase spells a camelCase field name in snake_case: userName is
// user_name, userID is user_id, httpServer2 is http_server2.
func snakeCase(name string) string {
	r := []rune(name)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && (unicode.IsLower(r[i-1]) || unicode.IsDigit(r[i-1]))
			nextLower := i > 0 && i+1 < len(r) && unicode.IsUpper(r[i-1]) && unicode.IsLower(r[i+1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}

// inOrder is xs in the order of the slots in order.
func inOrder[T any](order []int, xs []T) []T {
	out := make([]T, len(order))
	for k, i := range order {
		out[k] = xs[i]
	}
	return out
}
