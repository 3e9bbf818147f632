package syntax

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// stringLit scans a one-line "…" string, resolving escapes.
func (lx *lexer) stringLit(t token) token {
	lx.advance() // opening quote
	var b strings.Builder
	for {
		r, _ := lx.peekRune()
		switch r {
		case -1, '\n':
			lx.errorAt(t.pos, lx.pos(), "this string is never closed",
				"close it with `\"` on the same line; use \"\"\"…\"\"\" for a string across lines")
			return lx.finishString(t, tString, b.String())
		case '"':
			lx.advance()
			return lx.finishString(t, tString, b.String())
		case '\\':
			if c, ok := lx.escape(); ok {
				b.WriteRune(c)
			}
		default:
			b.WriteRune(lx.advance())
		}
	}
}

func (lx *lexer) finishString(t token, k tokenKind, v string) token {
	t.kind = k
	t.end = lx.pos()
	t.text = string(lx.src[t.pos.Offset:lx.off])
	t.name = t.text
	t.strVal = v
	return t
}

// charLit scans 'c' or an escape such as '\n' or '\u{1F600}'.
func (lx *lexer) charLit(t token) token {
	lx.advance()
	var runes []rune
	for {
		r, _ := lx.peekRune()
		if r == -1 || r == '\n' {
			lx.errorAt(t.pos, lx.pos(), "this character literal is never closed", "write a character as 'c'")
			break
		}
		if r == '\'' {
			lx.advance()
			break
		}
		if r == '\\' {
			if c, ok := lx.escape(); ok {
				runes = append(runes, c)
			}
			continue
		}
		runes = append(runes, lx.advance())
	}
	t = lx.finishString(t, tChar, "")
	if len(runes) != 1 {
		lx.errorAt(t.pos, t.end, fmt.Sprintf("the character literal %s must hold exactly one character", t.text),
			"use double quotes for a string: \"…\"")
	}
	if len(runes) > 0 {
		t.charVal = runes[0]
	}
	return t
}

// simpleEscapes maps the character after a backslash to what it stands for.
var simpleEscapes = map[rune]rune{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '"': '"', '\'': '\''}

// escape scans a backslash escape: \n \t \r \\ \" \' \u{HEX}, and real Sky's
// \xHH for an ASCII character (00 to 7F; beyond, Go's byte meaning and a
// code point would differ, so \u{HEX} is asked for).
func (lx *lexer) escape() (rune, bool) {
	start := lx.pos()
	lx.advance() // backslash
	c := lx.peekAt(0)
	if v, ok := simpleEscapes[c]; ok {
		lx.advance()
		return v, true
	}
	if c == 'u' && lx.peekAt(1) == '{' {
		lx.advance()
		lx.advance()
		hexStart := lx.off
		for isHex(lx.peekAt(0)) {
			lx.advance()
		}
		hex := string(lx.src[hexStart:lx.off])
		if lx.peekAt(0) != '}' || hex == "" || len(hex) > 6 {
			lx.errorAt(start, lx.pos(), "bad unicode escape", "write a code point as \\u{1F600}: 1 to 6 hexadecimal digits in braces")
			return 0, false
		}
		lx.advance()
		v, _ := strconv.ParseUint(hex, 16, 32)
		if v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
			lx.errorAt(start, lx.pos(), fmt.Sprintf("\\u{%s} is not a valid code point", hex), "code points go up to 10FFFF and exclude surrogates")
			return 0, false
		}
		return rune(v), true
	}
	if c == 'x' && isHex(lx.peekAt(1)) && isHex(lx.peekAt(2)) {
		lx.advance()
		hex := string([]rune{lx.advance(), lx.advance()})
		v, _ := strconv.ParseUint(hex, 16, 8)
		if v > 0x7F {
			lx.errorAt(start, lx.pos(), fmt.Sprintf("\\x%s is not an ASCII character", hex),
				fmt.Sprintf("\\xHH escapes go up to \\x7F; write the character as \\u{%s}", strings.ToUpper(hex)))
			return 0, false
		}
		return rune(v), true
	}
	if c != -1 && c != '\n' {
		lx.advance()
	}
	lx.errorAt(start, lx.pos(), "unknown escape sequence in a string",
		"the escapes are \\n \\t \\r \\\\ \\\" \\' \\xHH and \\u{HEX}")
	return 0, false
}

// multiString scans a raw `"""…"""` string. `{{expr}}` marks an
// interpolation; its source range is kept in token.parts for the parser.
// `\{{` writes a literal `{{`.
func (lx *lexer) multiString(t token) token {
	for i := 0; i < 3; i++ {
		lx.advance()
	}
	var parts []strPart
	var lit strings.Builder
	litStart := lx.pos()
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, strPart{text: lit.String(), pos: litStart, endPos: lx.pos()})
			lit.Reset()
		}
	}
	for {
		switch {
		case lx.off >= lx.end:
			lx.errorAt(t.pos, lx.pos(), "this multi-line string is never closed", "close it with \"\"\"")
			flush()
			t = lx.finishString(t, tMultiString, "")
			t.parts = parts
			return t
		case lx.peekAt(0) == '"' && lx.peekAt(1) == '"' && lx.peekAt(2) == '"':
			flush()
			for i := 0; i < 3; i++ {
				lx.advance()
			}
			t = lx.finishString(t, tMultiString, "")
			t.parts = parts
			if len(parts) == 0 || (len(parts) == 1 && !parts[0].expr) {
				if len(parts) == 1 {
					t.strVal = parts[0].text
				}
				t.parts = nil
			}
			return t
		case lx.peekAt(0) == '\\' && lx.peekAt(1) == '{' && lx.peekAt(2) == '{':
			// `\{{` is a literal `{{`, the one escape a raw string has.
			if lit.Len() == 0 {
				litStart = lx.pos()
			}
			for i := 0; i < 3; i++ {
				lx.advance()
			}
			lit.WriteString("{{")
		case lx.peekAt(0) == '{' && lx.peekAt(1) == '{':
			flush()
			open := lx.pos()
			lx.advance()
			lx.advance()
			exprPos := lx.pos()
			for lx.off < lx.end && !(lx.peekAt(0) == '}' && lx.peekAt(1) == '}') &&
				!(lx.peekAt(0) == '"' && lx.peekAt(1) == '"' && lx.peekAt(2) == '"') {
				lx.advance()
			}
			if lx.peekAt(0) != '}' {
				lx.errorAt(open, lx.pos(), "this `{{` interpolation is never closed", "close it with `}}`")
				continue
			}
			parts = append(parts, strPart{expr: true, pos: exprPos, end: lx.off})
			lx.advance()
			lx.advance()
		default:
			if lit.Len() == 0 {
				litStart = lx.pos()
			}
			// Like Go raw strings, drop carriage returns so a file saved
			// with CRLF line endings gives the same string.
			if r := lx.advance(); r != '\r' {
				lit.WriteRune(r)
			}
		}
	}
}
