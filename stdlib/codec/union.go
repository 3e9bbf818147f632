package codec

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	rc "skydurable/runtime/codec"
	"skydurable/runtime/value"
)

func unionKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Codec_enum", Arity: 1, Fn: enumKernel},
		{Name: "Codec_taggedUnion", Arity: 1, Fn: taggedUnionKernel},
		{Name: "Codec_var0", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return variantKernel("Codec.var0", a, 0) }},
		{Name: "Codec_var1", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return variantKernel("Codec.var1", a, 1) }},
		{Name: "Codec_var2", Arity: 4, Fn: func(a []value.Value) (value.Value, error) { return variantKernel("Codec.var2", a, 2) }},
		{Name: "Codec_var3", Arity: 5, Fn: func(a []value.Value) (value.Value, error) { return variantKernel("Codec.var3", a, 3) }},
	}
}

// enumKernel is Codec.enum: each value is written as its name; decoding an
// unknown name lists the accepted ones.
func enumKernel(a []value.Value) (value.Value, error) {
	l, ok := a[0].(*value.List)
	if !ok {
		return nil, value.BadArg("Codec.enum", "a list of ( value, name ) pairs", a[0])
	}
	var vals []value.Value
	var names []string
	for ; l != nil; l = l.Tail {
		t, ok := l.Head.(value.Tuple)
		if !ok || len(t) != 2 {
			return nil, value.BadArg("Codec.enum", "a ( value, name ) pair", l.Head)
		}
		name, ok := t[1].(string)
		if !ok {
			return nil, value.BadArg("Codec.enum", "a String name", t[1])
		}
		vals, names = append(vals, t[0]), append(names, name)
	}
	accepted := quoteAll(names)
	return ToValue(rc.Make(
		func(buf *bytes.Buffer, v value.Value) error {
			for i, ev := range vals {
				eq, err := value.Equal(v, ev)
				if err != nil {
					return err
				}
				if eq {
					rc.WriteString(buf, names[i])
					return nil
				}
			}
			return fmt.Errorf("Codec.enum has no name for %s; hint: add ( %s, \"...\" ) to the list", value.Show(v), value.Show(v))
		},
		func(j any, p rc.Path) (value.Value, error) {
			s, ok := j.(string)
			if ok {
				for i, n := range names {
					if n == s {
						return vals[i], nil
					}
				}
			}
			return nil, rc.Mismatch(p, "one of "+accepted, j)
		}).WithShape(Shape{Kind: "text"})), nil
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// variant is one constructor of a tagged union: its JSON tag, the name of
// the Sky constructor it encodes, the constructor itself and its argument
// codecs.
type variant struct {
	tag, ctorName string
	ctor          value.Value
	args          []Codec
}

const variantKind = "Variant"

// probe stands in for constructor arguments while finding a constructor's
// name: applying a constructor to probes yields Ctor{Name, probes}.
type probe struct{ i int }

// variantKernel is `varN tag ctor codec...`. For var1..var3 the function is
// applied once to placeholder arguments to learn the constructor's name,
// which must be a constructor: encoding picks a variant by the value's
// constructor name.
func variantKernel(fn string, a []value.Value, n int) (value.Value, error) {
	tag, ok := a[0].(string)
	if !ok {
		return nil, value.BadArg(fn, "a tag (String)", a[0])
	}
	v := &variant{tag: tag, ctor: a[1]}
	for _, cv := range a[2:] {
		c, err := codecArg(fn, cv)
		if err != nil {
			return nil, err
		}
		v.args = append(v.args, c)
	}
	if n == 0 {
		c, ok := a[1].(value.Ctor)
		if !ok || len(c.Args) != 0 {
			return nil, value.BadArg(fn+" "+strconv.Quote(tag), "a constructor without arguments", a[1])
		}
		v.ctorName = c.Name
		return value.Opaque{Kind: variantKind, V: v}, nil
	}
	probes := make([]value.Value, n)
	for i := range probes {
		probes[i] = value.Opaque{Kind: "probe", V: &probe{i}}
	}
	r, err := value.Apply(a[1], probes...)
	c, ok := r.(value.Ctor)
	if err != nil || !ok || len(c.Args) != n || !sameValues(c.Args, probes) {
		return nil, fmt.Errorf("%s %q: the function must be a constructor taking %d argument(s), such as %s; hint: encoding finds the variant by the value's constructor", fn, tag, n, tag)
	}
	v.ctorName = c.Name
	return value.Opaque{Kind: variantKind, V: v}, nil
}

func sameValues(got, want []value.Value) bool {
	for i := range want {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// taggedUnionKernel is Codec.taggedUnion. JSON: {"tag":"Paid","args":[120]},
// with "args" omitted for a constructor without arguments (and accepted
// missing or empty when decoding one).
func taggedUnionKernel(a []value.Value) (value.Value, error) {
	l, ok := a[0].(*value.List)
	if !ok {
		return nil, value.BadArg("Codec.taggedUnion", "a list of variants (Codec.var0 .. var3)", a[0])
	}
	byTag := map[string]*variant{}
	byCtor := map[string]*variant{}
	var tags []string
	for ; l != nil; l = l.Tail {
		o, ok := l.Head.(value.Opaque)
		if !ok || o.Kind != variantKind {
			return nil, value.BadArg("Codec.taggedUnion", "a variant (Codec.var0 .. var3)", l.Head)
		}
		v := o.V.(*variant)
		if _, dup := byTag[v.tag]; dup {
			return nil, fmt.Errorf("Codec.taggedUnion: the tag %q is used twice", v.tag)
		}
		if _, dup := byCtor[v.ctorName]; dup {
			return nil, fmt.Errorf("Codec.taggedUnion: the constructor %s has two variants", v.ctorName)
		}
		byTag[v.tag], byCtor[v.ctorName] = v, v
		tags = append(tags, v.tag)
	}
	accepted := quoteAll(tags)
	return ToValue(rc.Make(
		func(buf *bytes.Buffer, x value.Value) error {
			c, ok := x.(value.Ctor)
			if !ok {
				return encodeMismatch("a custom type", x)
			}
			v, ok := byCtor[c.Name]
			if !ok || len(c.Args) != len(v.args) {
				return fmt.Errorf("Codec.taggedUnion has no variant for %s; hint: add a Codec.var%d for the constructor %s", value.Show(x), len(c.Args), c.Name)
			}
			buf.WriteString(`{"tag":`)
			rc.WriteString(buf, v.tag)
			if len(v.args) > 0 {
				buf.WriteString(`,"args":[`)
				for i, ac := range v.args {
					if i > 0 {
						buf.WriteByte(',')
					}
					if err := ac.EncodeTo(buf, c.Args[i]); err != nil {
						return err
					}
				}
				buf.WriteByte(']')
			}
			buf.WriteByte('}')
			return nil
		},
		func(j any, p rc.Path) (value.Value, error) {
			obj, ok := j.(map[string]any)
			if !ok {
				return nil, rc.Mismatch(p, `an object {"tag": ..., "args": [...]}`, j)
			}
			tj, present := obj["tag"]
			if !present {
				return nil, rc.DecodeError(p, `missing field "tag"`)
			}
			tag, _ := tj.(string)
			v, ok := byTag[tag]
			if !ok {
				return nil, rc.Mismatch(p.Field("tag"), "one of "+accepted, tj)
			}
			argsPath := p.Field("args")
			raw, _ := obj["args"].([]any)
			if len(v.args) == 0 {
				if len(raw) != 0 {
					return nil, rc.Mismatch(argsPath, "no arguments for "+strconv.Quote(tag), obj["args"])
				}
				return v.ctor, nil
			}
			if len(raw) != len(v.args) {
				return nil, rc.Mismatch(argsPath, fmt.Sprintf("an array of %d argument(s) for %q", len(v.args), tag), obj["args"])
			}
			args := make([]value.Value, len(raw))
			for i, aj := range raw {
				x, err := v.args[i].DecodeValue(aj, argsPath.Index(i))
				if err != nil {
					return nil, err
				}
				args[i] = x
			}
			return value.Apply(v.ctor, args...)
		})), nil
}
