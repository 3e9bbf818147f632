package view

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Safe makes s harmless to print on a terminal: each control character (C0
// such as ESC, tab and newline, DEL, C1) and each byte that is not UTF-8 is
// written as its Go escape (\x1b, \n, \u009b), the rest is kept. A workflow
// name, run id, step id, key or error text stored by a program could
// otherwise move the cursor, recolour or retitle the operator's terminal
// when `sky durable ls/show/stats` prints it. JSON output never goes through
// it: it prints the stored values exactly.
func Safe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case isControl(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// SafeText is Safe for text of several lines (indented JSON, an error's
// text): each line made safe, the line breaks kept.
func SafeText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Safe(l)
	}
	return strings.Join(lines, "\n")
}

func needsEscape(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || isControl(r) {
			return true
		}
	}
	return false
}

// isControl is C0, DEL and C1: what a terminal may act on.
func isControl(r rune) bool { return r < 0x20 || (r >= 0x7f && r <= 0x9f) }
