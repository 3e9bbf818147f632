package core

import (
	"html"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"

	"skydurable/runtime/value"
)

// stringTextKernels are the text-handling String functions real Sky
// programs call: htmlEscape, truncate, ellipsize, isValid, normalize,
// graphemes and slugify. truncate, ellipsize and graphemes count grapheme
// clusters (UAX #29: what a reader sees as one character), so a cut never
// splits an emoji or an accent from its letter.
func stringTextKernels() []value.Kernel {
	return []value.Kernel{
		str1("String_htmlEscape", "String.htmlEscape", func(s string) value.Value { return html.EscapeString(s) }),
		intStr("String_truncate", "String.truncate", func(n int, r []rune) string { return firstGraphemes(string(r), n) }),
		{Name: "String_ellipsize", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			n, err := intArg("String.ellipsize", a[0])
			if err != nil {
				return nil, err
			}
			s, err := stringArg("String.ellipsize", a[1])
			if err != nil {
				return nil, err
			}
			if n <= 0 {
				return "", nil
			}
			if int64(uniseg.GraphemeClusterCount(s)) <= n {
				return s, nil
			}
			return firstGraphemes(s, int(n)) + "…", nil
		}},
		str1("String_isValid", "String.isValid", func(s string) value.Value { return utf8.ValidString(s) }),
		str1("String_normalize", "String.normalize", func(s string) value.Value { return norm.NFC.String(s) }),
		str1("String_graphemes", "String.graphemes", func(s string) value.Value { return int64(uniseg.GraphemeClusterCount(s)) }),
		str1("String_slugify", "String.slugify", slugify),
	}
}

// firstGraphemes is the first n grapheme clusters of s (all of s when it has
// fewer, "" when n <= 0).
func firstGraphemes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	g := uniseg.NewGraphemes(s)
	end := 0
	for i := 0; i < n && g.Next(); i++ {
		_, end = g.Positions()
	}
	return s[:end]
}

// slugify lower-cases letters and digits (accents kept, as real Sky does),
// turns each run of spaces, dashes and underscores into one dash, drops
// every other character, and trims dashes from both ends.
func slugify(s string) value.Value {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsSpace(r) || r == '-' || r == '_':
			dash = true
		}
	}
	return b.String()
}
