package value

import (
	"math"
	"strconv"
	"strings"
)

// Show renders v as Elm's Debug.toString does: `Just 3`, `{ a = 1 }`,
// `[1,2]`, `(1,"a")`, `"s"` (quoted and escaped), `'c'`. Functions show as
// `<function>`, tasks as `<task>`, opaque values as `<Kind>`.
func Show(v Value) string {
	var b strings.Builder
	show(&b, v, false)
	return b.String()
}

// ShowFloat renders a float as Elm (JavaScript) does: `1.5`, `3` for 3.0,
// `1e+21`, `NaN`, `Infinity`.
func ShowFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	if f == 0 {
		return "0" // JavaScript prints -0 as 0
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	// JavaScript writes the exponent without padding: 1e-7, 1.5e+22.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits
}

func show(b *strings.Builder, v Value, nested bool) {
	switch x := v.(type) {
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(ShowFloat(x))
	case string:
		quote(b, x, '"')
	case rune:
		quote(b, string(x), '\'')
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case Unit:
		b.WriteString("()")
	case *List:
		b.WriteByte('[')
		for l := x; l != nil; l = l.Tail {
			if l != x {
				b.WriteByte(',')
			}
			show(b, l.Head, false)
		}
		b.WriteByte(']')
	case Tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			show(b, e, false)
		}
		b.WriteByte(')')
	case *Record:
		if len(x.Names) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		for i, n := range x.Names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
			b.WriteString(" = ")
			show(b, x.Values[i], false)
		}
		b.WriteString(" }")
	case Ctor:
		if x.Name == SetCtorName && len(x.Args) == 1 {
			if d, ok := x.Args[0].(*Dict); ok {
				showSet(b, d, nested)
				return
			}
		}
		if nested && len(x.Args) > 0 {
			b.WriteByte('(')
		}
		b.WriteString(x.Name)
		for _, a := range x.Args {
			b.WriteByte(' ')
			show(b, a, true)
		}
		if nested && len(x.Args) > 0 {
			b.WriteByte(')')
		}
	case *Dict:
		if nested {
			b.WriteByte('(')
		}
		b.WriteString("Dict.fromList ")
		show(b, x.ToList(), false)
		if nested {
			b.WriteByte(')')
		}
	case Func:
		b.WriteString("<function>")
	case Task:
		b.WriteString("<task>")
	case Opaque:
		b.WriteString("<" + x.Kind + ">")
	default:
		b.WriteString("<" + KindName(v) + ">")
	}
}

// SetCtorName is the constructor of Sky.Core.Set's Set, which wraps a Dict of
// its values to (). It is Elm's own name, which no program writes by chance.
const SetCtorName = "Set_elm_builtin"

// showSet renders a Set as Elm does, `Set.fromList [1,2]`, not as the Dict
// it wraps.
func showSet(b *strings.Builder, d *Dict, nested bool) {
	if nested {
		b.WriteByte('(')
	}
	b.WriteString("Set.fromList ")
	show(b, d.Keys(), false)
	if nested {
		b.WriteByte(')')
	}
}

func quote(b *strings.Builder, s string, q byte) {
	b.WriteByte(q)
	for _, r := range s {
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\\':
			b.WriteString(`\\`)
		case rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\u{` + strconv.FormatInt(int64(r), 16) + `}`)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte(q)
}
