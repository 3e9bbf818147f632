package core

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"skydurable/runtime/value"
)

// String kernels count and index Unicode code points.

func stringKernels() []value.Kernel {
	return []value.Kernel{
		str1("String_length", "String.length", func(s string) value.Value { return int64(utf8.RuneCountInString(s)) }),
		str1("String_reverse", "String.reverse", func(s string) value.Value {
			r := []rune(s)
			for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
				r[i], r[j] = r[j], r[i]
			}
			return string(r)
		}),
		{Name: "String_repeat", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			n, err := intArg("String.repeat", a[0])
			if err != nil {
				return nil, err
			}
			s, err := stringArg("String.repeat", a[1])
			if err != nil || n <= 0 {
				return "", err
			}
			if int64(len(s))*n > 1<<30 {
				return nil, fmt.Errorf("String.repeat %d: the result would exceed 1 GiB", n)
			}
			return strings.Repeat(s, int(n)), nil
		}},
		{Name: "String_replace", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			ss, err := stringArgs("String.replace", a)
			if err != nil {
				return nil, err
			}
			// Real Sky's replace is Go's ReplaceAll: an empty needle matches
			// before every character and at the end, replace "" "-" "ab" == "-a-b-".
			return strings.ReplaceAll(ss[2], ss[0], ss[1]), nil
		}},
		{Name: "String_concat", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			parts, err := stringList("String.concat", a[0])
			return strings.Join(parts, ""), err
		}},
		{Name: "String_split", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			ss, err := stringArgs("String.split", a)
			if err != nil {
				return nil, err
			}
			return stringsToList(strings.Split(ss[1], ss[0])), nil
		}},
		{Name: "String_join", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			sep, err := stringArg("String.join", a[0])
			if err != nil {
				return nil, err
			}
			parts, err := stringList("String.join", a[1])
			return strings.Join(parts, sep), err
		}},
		str1("String_words", "String.words", func(s string) value.Value {
			// As real Sky: no words in a blank string (Elm gives [""]).
			return stringsToList(strings.Fields(s))
		}),
		str1("String_lines", "String.lines", func(s string) value.Value {
			// Elm splits on \r\n, \r and \n.
			s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
			return stringsToList(strings.Split(s, "\n"))
		}),
		{Name: "String_slice", Arity: 3, Fn: stringSlice},
		intStr("String_left", "String.left", func(n int, r []rune) string { return string(r[:n]) }),
		intStr("String_right", "String.right", func(n int, r []rune) string { return string(r[len(r)-n:]) }),
		intStr("String_dropLeft", "String.dropLeft", func(n int, r []rune) string { return string(r[n:]) }),
		intStr("String_dropRight", "String.dropRight", func(n int, r []rune) string { return string(r[:len(r)-n]) }),
		str2("String_contains", "String.contains", func(needle, s string) value.Value { return strings.Contains(s, needle) }),
		str2("String_startsWith", "String.startsWith", func(p, s string) value.Value { return strings.HasPrefix(s, p) }),
		str2("String_endsWith", "String.endsWith", func(p, s string) value.Value { return strings.HasSuffix(s, p) }),
		str2("String_indexes", "String.indexes", stringIndexes),
		str1("String_toInt", "String.toInt", func(s string) value.Value {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return value.Just(i)
			}
			return value.Nothing
		}),
		{Name: "String_fromInt", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			i, err := intArg("String.fromInt", a[0])
			return strconv.FormatInt(i, 10), err
		}},
		str1("String_toFloat", "String.toFloat", func(s string) value.Value {
			// Surrounding whitespace is ignored, as real Sky's toFloat does
			// (its toInt does not). ParseFloat also reads "NaN", "Inf" and
			// hex floats; Elm and real Sky do not.
			s = strings.TrimSpace(s)
			if strings.ContainsAny(s, "nNiIxXpP_") {
				return value.Nothing
			}
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return value.Just(f)
			}
			return value.Nothing
		}),
		{Name: "String_fromFloat", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			f, err := floatArg("String.fromFloat", a[0])
			return value.ShowFloat(f), err
		}},
		{Name: "String_fromChar", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			c, err := charArg("String.fromChar", a[0])
			return string(c), err
		}},
		str1("String_toList", "String.toList", func(s string) value.Value {
			var out listBuilder
			for _, r := range s {
				out.add(r)
			}
			return out.done()
		}),
		{Name: "String_fromList", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("String.fromList", a[0])
			if err != nil {
				return nil, err
			}
			var b strings.Builder
			for ; l != nil; l = l.Tail {
				c, err := charArg("String.fromList", l.Head)
				if err != nil {
					return nil, err
				}
				b.WriteRune(c)
			}
			return b.String(), nil
		}},
		{Name: "String_cons", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := charArg("String.cons", a[0])
			if err != nil {
				return nil, err
			}
			s, err := stringArg("String.cons", a[1])
			return string(c) + s, err
		}},
		str1("String_uncons", "String.uncons", func(s string) value.Value {
			if s == "" {
				return value.Nothing
			}
			r, size := utf8.DecodeRuneInString(s)
			return value.Just(value.Tuple{r, s[size:]})
		}),
		// Full Unicode case mapping, as JavaScript's (so Elm's): "straße" upper-cases
		// to "STRASSE" and a final sigma lower-cases to ς. A Caser keeps state, so
		// each call makes its own.
		str1("String_toUpper", "String.toUpper", func(s string) value.Value { return cases.Upper(language.Und).String(s) }),
		str1("String_toLower", "String.toLower", func(s string) value.Value { return cases.Lower(language.Und).String(s) }),
		padKernel("String_pad", "String.pad", func(n int) (int, int) { return n - n/2, n / 2 }), // Elm: the extra one goes left
		padKernel("String_padLeft", "String.padLeft", func(n int) (int, int) { return n, 0 }),
		padKernel("String_padRight", "String.padRight", func(n int) (int, int) { return 0, n }),
		str1("String_trim", "String.trim", func(s string) value.Value { return strings.TrimSpace(s) }),
		str1("String_trimLeft", "String.trimLeft", func(s string) value.Value { return strings.TrimLeftFunc(s, unicode.IsSpace) }),
		str1("String_trimRight", "String.trimRight", func(s string) value.Value { return strings.TrimRightFunc(s, unicode.IsSpace) }),
		{Name: "String_map", Arity: 2, Fn: stringMap},
		{Name: "String_filter", Arity: 2, Fn: stringFilter},
		{Name: "String_foldl", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return stringFold("String.foldl", a, false) }},
		{Name: "String_foldr", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return stringFold("String.foldr", a, true) }},
		{Name: "String_any", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return stringAnyAll("String.any", a, true) }},
		{Name: "String_all", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return stringAnyAll("String.all", a, false) }},
	}
}

func str1(name, fn string, f func(string) value.Value) value.Kernel {
	return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
		s, err := stringArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		return f(s), nil
	}}
}

func str2(name, fn string, f func(string, string) value.Value) value.Kernel {
	return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		ss, err := stringArgs(fn, a)
		if err != nil {
			return nil, err
		}
		return f(ss[0], ss[1]), nil
	}}
}

// intStr is a kernel `Int -> String -> String` whose count is clamped to
// [0, length] before f sees it.
func intStr(name, fn string, f func(n int, r []rune) string) value.Kernel {
	return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
		n, err := intArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		s, err := stringArg(fn, a[1])
		if err != nil {
			return nil, err
		}
		r := []rune(s)
		return f(int(min(max(n, 0), int64(len(r)))), r), nil
	}}
}

func stringArgs(fn string, a []value.Value) ([]string, error) {
	out := make([]string, len(a))
	for i, v := range a {
		s, err := stringArg(fn, v)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func stringList(fn string, v value.Value) ([]string, error) {
	l, err := listArg(fn, v)
	if err != nil {
		return nil, err
	}
	var out []string
	for ; l != nil; l = l.Tail {
		s, err := stringArg(fn, l.Head)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stringsToList(ss []string) *value.List {
	var out listBuilder
	for _, s := range ss {
		out.add(s)
	}
	return out.done()
}

// stringSlice is Elm's String.slice: negative indexes count from the end,
// indexes are clamped, and an empty range gives "".
func stringSlice(a []value.Value) (value.Value, error) {
	from, to, err := intPair("String.slice", a[:2])
	if err != nil {
		return nil, err
	}
	s, err := stringArg("String.slice", a[2])
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	n := int64(len(r))
	norm := func(i int64) int64 {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	from, to = norm(from), norm(to)
	if from >= to {
		return "", nil
	}
	return string(r[from:to]), nil
}

func stringIndexes(needle, s string) value.Value {
	var out listBuilder
	if needle == "" {
		return out.done()
	}
	runeIndex, byteIndex := 0, 0
	for {
		i := strings.Index(s[byteIndex:], needle)
		if i < 0 {
			return out.done()
		}
		// Matches do not overlap: Elm resumes the search after the match.
		runeIndex += utf8.RuneCountInString(s[byteIndex : byteIndex+i])
		out.add(int64(runeIndex))
		byteIndex += i + len(needle)
		runeIndex += utf8.RuneCountInString(needle)
	}
}

// padKernel pads to n characters; split says how many go left and right.
func padKernel(name, fn string, split func(n int) (int, int)) value.Kernel {
	return value.Kernel{Name: name, Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
		n, err := intArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		c, err := charArg(fn, a[1])
		if err != nil {
			return nil, err
		}
		s, err := stringArg(fn, a[2])
		if err != nil {
			return nil, err
		}
		missing := n - int64(utf8.RuneCountInString(s))
		if missing <= 0 {
			return s, nil
		}
		if missing > 1<<26 {
			return nil, fmt.Errorf("%s %d: the padding is too long", fn, n)
		}
		left, right := split(int(missing))
		pad := string(c)
		return strings.Repeat(pad, left) + s + strings.Repeat(pad, right), nil
	}}
}

func stringMap(a []value.Value) (value.Value, error) {
	s, err := stringArg("String.map", a[1])
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, r := range s {
		v, err := value.Apply(a[0], r)
		if err != nil {
			return nil, err
		}
		c, err := charArg("String.map (the function's result)", v)
		if err != nil {
			return nil, err
		}
		b.WriteRune(c)
	}
	return b.String(), nil
}

func stringFilter(a []value.Value) (value.Value, error) {
	s, err := stringArg("String.filter", a[1])
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, r := range s {
		keep, err := callBool("String.filter", a[0], r)
		if err != nil {
			return nil, err
		}
		if keep {
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

func stringFold(fn string, a []value.Value, fromRight bool) (value.Value, error) {
	s, err := stringArg(fn, a[2])
	if err != nil {
		return nil, err
	}
	r := []rune(s)
	acc := a[1]
	for i := range r {
		c := r[i]
		if fromRight {
			c = r[len(r)-1-i]
		}
		if acc, err = value.Apply(a[0], c, acc); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func stringAnyAll(fn string, a []value.Value, stopOn bool) (value.Value, error) {
	s, err := stringArg(fn, a[1])
	if err != nil {
		return nil, err
	}
	for _, r := range s {
		b, err := callBool(fn, a[0], r)
		if err != nil {
			return nil, err
		}
		if b == stopOn {
			return stopOn, nil
		}
	}
	return !stopOn, nil
}
