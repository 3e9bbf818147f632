package json

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"skydurable/runtime/value"
)

// Kernels returns the Json.Encode and Json.Decode kernels.
func Kernels() map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, k := range append(append(encodeKernels(), decodeKernels()...), rawKernel()) {
		out[k.Name] = k
	}
	return out
}

func encodeKernels() []value.Kernel {
	scalar := func(name string, ok func(value.Value) (any, bool), want string) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			j, good := ok(a[0])
			if !good {
				return nil, value.BadArg("Encode."+name[len("JsonEnc_"):], want, a[0])
			}
			return wrap(j), nil
		}}
	}
	return []value.Kernel{
		scalar("JsonEnc_string", func(v value.Value) (any, bool) { s, ok := v.(string); return s, ok }, "a String"),
		scalar("JsonEnc_int", func(v value.Value) (any, bool) {
			n, ok := v.(int64)
			return json.Number(strconv.FormatInt(n, 10)), ok
		}, "an Int"),
		scalar("JsonEnc_float", func(v value.Value) (any, bool) {
			f, ok := value.AsFloat(v)
			if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, false
			}
			return json.Number(value.ShowFloat(f)), true
		}, "a finite Float"),
		scalar("JsonEnc_bool", func(v value.Value) (any, bool) { b, ok := v.(bool); return b, ok }, "a Bool"),
		{Name: "JsonEnc_null", Arity: 0, Fn: func([]value.Value) (value.Value, error) { return wrap(nil), nil }},
		{Name: "JsonEnc_list", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			l, _ := a[1].(*value.List)
			out := []any{}
			for _, x := range l.Slice() {
				r, err := value.Apply(a[0], x)
				if err != nil {
					return nil, err
				}
				j, err := unwrap("Encode.list", r)
				if err != nil {
					return nil, err
				}
				out = append(out, j)
			}
			return wrap(out), nil
		}},
		{Name: "JsonEnc_object", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, _ := a[0].(*value.List)
			var o object
			for _, x := range l.Slice() {
				t, ok := x.(value.Tuple)
				if !ok || len(t) != 2 {
					return nil, value.BadArg("Encode.object", "a List ( String, Value )", a[0])
				}
				k, _ := t[0].(string)
				j, err := unwrap("Encode.object", t[1])
				if err != nil {
					return nil, err
				}
				o = append(o, pair{k, j})
			}
			if o == nil {
				o = object{}
			}
			return wrap(o), nil
		}},
		{Name: "JsonEnc_encode", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			indent, _ := a[0].(int64)
			j, err := unwrap("Encode.encode", a[1])
			if err != nil {
				return nil, err
			}
			return write(j, int(indent))
		}},
	}
}

func decodeKernels() []value.Kernel {
	prim := func(name, want string, conv func(any) (value.Value, bool)) value.Kernel {
		return value.Kernel{Name: name, Arity: 0, Fn: func([]value.Value) (value.Value, error) {
			return decoder(func(j any, path string) (value.Value, error) {
				if v, ok := conv(j); ok {
					return v, nil
				}
				return nil, mismatch(path, want, j)
			}), nil
		}}
	}
	return []value.Kernel{
		prim("JsonDec_string", "a string", func(j any) (value.Value, bool) { s, ok := j.(string); return s, ok }),
		prim("JsonDec_int", "an integer", func(j any) (value.Value, bool) { return intOf(j) }),
		prim("JsonDec_float", "a number", func(j any) (value.Value, bool) {
			n, ok := number(j)
			if !ok {
				return nil, false
			}
			f, err := n.Float64()
			return f, err == nil
		}),
		prim("JsonDec_bool", "a boolean", func(j any) (value.Value, bool) { b, ok := j.(bool); return b, ok }),
		prim("JsonDec_value", "", func(j any) (value.Value, bool) { return wrap(j), true }),
		{Name: "JsonDec_decodeString", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, err := asDecoder("Decode.decodeString", a[0])
			if err != nil {
				return nil, err
			}
			text, ok := a[1].(string)
			if !ok {
				return nil, value.BadArg("Decode.decodeString", "JSON text (String)", a[1])
			}
			return runDecoder(d, text)
		}},
		{Name: "JsonDec_decodeValue", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, err := asDecoder("Decode.decodeValue", a[0])
			if err != nil {
				return nil, err
			}
			j, err := unwrap("Decode.decodeValue", a[1])
			if err != nil {
				return nil, err
			}
			return result(d(j, "$"))
		}},
		{Name: "JsonDec_field", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			name, _ := a[0].(string)
			return around("Decode.field", a[1], func(d decodeFn, j any, path string) (value.Value, error) {
				return field(d, name, j, path)
			})
		}},
		{Name: "JsonDec_index", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			i, _ := a[0].(int64)
			return around("Decode.index", a[1], func(d decodeFn, j any, path string) (value.Value, error) {
				arr, ok := j.([]any)
				if !ok {
					return nil, mismatch(path, "an array", j)
				}
				if i < 0 || int(i) >= len(arr) {
					return nil, &failure{path, fmt.Sprintf("expected an array with an element %d, found %s", i, countElements(len(arr)))}
				}
				return d(arr[i], fmt.Sprintf("%s[%d]", path, i))
			})
		}},
		{Name: "JsonDec_list", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return around("Decode.list", a[0], func(d decodeFn, j any, path string) (value.Value, error) {
				arr, ok := j.([]any)
				if !ok {
					return nil, mismatch(path, "an array", j)
				}
				out := make([]value.Value, len(arr))
				for i, e := range arr {
					v, err := d(e, fmt.Sprintf("%s[%d]", path, i))
					if err != nil {
						return nil, err
					}
					out[i] = v
				}
				return value.FromSlice(out), nil
			})
		}},
		{Name: "JsonDec_keyValuePairs", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return around("Decode.keyValuePairs", a[0], func(d decodeFn, j any, path string) (value.Value, error) {
				m, ok := asObject(j)
				if !ok {
					return nil, mismatch(path, "an object", j)
				}
				keys := sortedKeys(m)
				out := make([]value.Value, len(keys))
				for i, k := range keys {
					v, err := d(m[k], path+"."+k)
					if err != nil {
						return nil, err
					}
					out[i] = value.Tuple{k, v}
				}
				return value.FromSlice(out), nil
			})
		}},
		{Name: "JsonDec_nullable", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return around("Decode.nullable", a[0], func(d decodeFn, j any, path string) (value.Value, error) {
				if j == nil {
					return value.Nothing, nil
				}
				v, err := d(j, path)
				if err != nil {
					return nil, err
				}
				return value.Just(v), nil
			})
		}},
		{Name: "JsonDec_succeed", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			v := a[0]
			return decoder(func(any, string) (value.Value, error) { return v, nil }), nil
		}},
		{Name: "JsonDec_fail", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			msg, _ := a[0].(string)
			return decoder(func(_ any, path string) (value.Value, error) { return nil, &failure{path, msg} }), nil
		}},
		{Name: "JsonDec_andThen", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			f := a[0]
			return around("Decode.andThen", a[1], func(d decodeFn, j any, path string) (value.Value, error) {
				v, err := d(j, path)
				if err != nil {
					return nil, err
				}
				next, err := value.Apply(f, v)
				if err != nil {
					return nil, err
				}
				nd, err := asDecoder("Decode.andThen", next)
				if err != nil {
					return nil, err
				}
				return nd(j, path)
			})
		}},
		{Name: "JsonDec_oneOf", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, _ := a[0].(*value.List)
			var ds []decodeFn
			for _, x := range l.Slice() {
				d, err := asDecoder("Decode.oneOf", x)
				if err != nil {
					return nil, err
				}
				ds = append(ds, d)
			}
			return decoder(func(j any, path string) (value.Value, error) {
				var msgs []string
				for _, d := range ds {
					v, err := d(j, path)
					if err == nil || value.IsRuntimeError(err) {
						return v, err
					}
					msgs = append(msgs, err.Error())
				}
				return nil, &failure{path, fmt.Sprintf("none of %d decoders matched: %v", len(ds), msgs)}
			}), nil
		}},
		mapN("JsonDec_map", 1), mapN("JsonDec_map2", 2), mapN("JsonDec_map3", 3), mapN("JsonDec_map4", 4), mapN("JsonDec_map5", 5),
	}
}

// mapN is Decode.map .. map5: the function, then n decoders of the same JSON.
func mapN(name string, n int) value.Kernel {
	return value.Kernel{Name: name, Arity: n + 1, Fn: func(a []value.Value) (value.Value, error) {
		f := a[0]
		ds := make([]decodeFn, n)
		for i := range ds {
			d, err := asDecoder("Decode."+name[len("JsonDec_"):], a[i+1])
			if err != nil {
				return nil, err
			}
			ds[i] = d
		}
		return decoder(func(j any, path string) (value.Value, error) {
			args := make([]value.Value, n)
			for i, d := range ds {
				v, err := d(j, path)
				if err != nil {
					return nil, err
				}
				args[i] = v
			}
			return value.Apply(f, args...)
		}), nil
	}}
}

func field(d decodeFn, name string, j any, path string) (value.Value, error) {
	m, ok := asObject(j)
	if !ok {
		return nil, mismatch(path, "an object with a field "+strconv.Quote(name), j)
	}
	fj, present := m[name]
	if !present {
		return nil, &failure{path, "missing field " + strconv.Quote(name)}
	}
	return d(fj, path+"."+name)
}

// asObject reads a JSON object: one parsed from text or one built
// by Encode.object or Encode.dict (its pairs in order; a repeated key keeps
// its last value, as the text it encodes to would when parsed).
func asObject(j any) (map[string]any, bool) {
	switch o := j.(type) {
	case *textObject:
		return o.fields, true
	case object:
		m := make(map[string]any, len(o))
		for _, p := range o {
			m[p.key] = p.val
		}
		return m, true
	}
	return nil, false
}

// countElements words the length of an array in a decode error.
func countElements(n int) string {
	if n == 1 {
		return "1 element"
	}
	return strconv.Itoa(n) + " elements"
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// around is a decoder built on the decoder argument v: f gets it, and the
// JSON and path it is run on.
func around(fn string, v value.Value, f func(d decodeFn, j any, path string) (value.Value, error)) (value.Value, error) {
	d, err := asDecoder(fn, v)
	if err != nil {
		return nil, err
	}
	return decoder(func(j any, path string) (value.Value, error) { return f(d, j, path) }), nil
}
