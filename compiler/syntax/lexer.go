package syntax

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// lexer turns source bytes into tokens. It never stops at an error: a bad
// character becomes a tIllegal token and an error is recorded, so the parser
// can report everything at once. Comments are skipped, except that doc
// comments `{-| -}` are kept in docs for the parser to attach.
type lexer struct {
	file string
	src  []byte
	end  int // scanning stops here (a sub-range for interpolations)
	errs *errorSink

	off, line, col int
	lastLine       int // line of the previous token, to compute token.first
	count          int // tokens returned so far
	docs           []*DocComment
}

// newLexer scans src[start.Offset:end], numbering positions from start.
func newLexer(file string, src []byte, start Pos, end int, errs *errorSink) *lexer {
	return &lexer{file: file, src: src, end: end, errs: errs, off: start.Offset, line: start.Line, col: start.Col}
}

// nextToken returns the next token, with its layout facts; after the end of
// input it keeps returning tEOF. The parser pulls tokens on demand, so memory
// stays proportional to the AST, not to the token count.
func (lx *lexer) nextToken() token {
	space := lx.skipSpace()
	t := lx.next()
	t.spaceBefore = space || lx.count == 0
	t.first = t.pos.Line != lx.lastLine || lx.count == 0
	t.spaceAfter = lx.atSpace()
	lx.lastLine = t.end.Line
	lx.count++
	return t
}

// atSpace reports whether the input at the current offset is whitespace, a
// comment or the end.
func (lx *lexer) atSpace() bool {
	c, c1 := lx.peekAt(0), lx.peekAt(1)
	return c == -1 || c == ' ' || c == '\t' || c == '\n' || c == '\r' || (c == '-' && c1 == '-') || (c == '{' && c1 == '-')
}

func (lx *lexer) pos() Pos { return Pos{File: lx.file, Line: lx.line, Col: lx.col, Offset: lx.off} }

func (lx *lexer) peekAt(i int) rune {
	if lx.off+i >= lx.end || lx.off+i < 0 {
		return -1
	}
	return rune(lx.src[lx.off+i])
}

// peekRune decodes the rune at the current offset.
func (lx *lexer) peekRune() (rune, int) {
	if lx.off >= lx.end {
		return -1, 0
	}
	return utf8.DecodeRune(lx.src[lx.off:lx.end])
}

// advance consumes one rune, keeping line and column (tab stops every 4).
func (lx *lexer) advance() rune {
	r, n := lx.peekRune()
	if n == 0 {
		return -1
	}
	lx.off += n
	switch r {
	case '\n':
		lx.line++
		lx.col = 1
	case '\t':
		lx.col = ((lx.col-1)/4+1)*4 + 1
	default:
		lx.col++
	}
	return r
}

func (lx *lexer) errorAt(p Pos, end Pos, msg, hint string) {
	lx.errs.errorAt(p, end, msg, hint)
}

// skipSpace skips whitespace and comments, reporting whether any was skipped.
func (lx *lexer) skipSpace() bool {
	skipped := false
	for lx.off < lx.end {
		c := lx.peekAt(0)
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			lx.advance()
		case c == '-' && lx.peekAt(1) == '-':
			for lx.off < lx.end && lx.peekAt(0) != '\n' {
				lx.advance()
			}
		case c == '{' && lx.peekAt(1) == '-':
			lx.blockComment()
		default:
			return skipped
		}
		skipped = true
	}
	return skipped
}

// blockComment skips a nestable `{- -}` comment; a `{-|` one is recorded as
// a doc comment.
func (lx *lexer) blockComment() {
	start := lx.pos()
	lx.advance()
	lx.advance()
	doc := lx.peekAt(0) == '|'
	textStart := lx.off
	if doc {
		lx.advance()
		textStart = lx.off
	}
	depth := 1
	for lx.off < lx.end {
		switch {
		case lx.peekAt(0) == '{' && lx.peekAt(1) == '-':
			lx.advance()
			lx.advance()
			depth++
		case lx.peekAt(0) == '-' && lx.peekAt(1) == '}':
			textEnd := lx.off
			lx.advance()
			lx.advance()
			depth--
			if depth == 0 {
				if doc {
					lx.docs = append(lx.docs, &DocComment{Span: Span{start, lx.pos()}, Text: string(lx.src[textStart:textEnd])})
				}
				return
			}
		default:
			lx.advance()
		}
	}
	lx.errorAt(start, Pos{}, "this comment is never closed",
		"a `{-` comment needs a matching `-}`; comments nest, so each inner `{-` needs its own `-}` too")
}

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isOpRune(r rune) bool {
	return r >= 0 && strings.ContainsRune("+-*/=<>:&|^%!?.~$#@", r)
}

// next scans one token at the current (non-space) offset.
func (lx *lexer) next() token {
	start := lx.pos()
	t := token{pos: start}
	finish := func(k tokenKind) token {
		t.kind = k
		t.end = lx.pos()
		t.text = string(lx.src[start.Offset:lx.off])
		if t.name == "" {
			t.name = t.text
		}
		return t
	}
	r, _ := lx.peekRune()
	switch {
	case r == -1:
		return finish(tEOF)
	case unicode.IsUpper(r):
		return lx.qualifiedName(t)
	case r == '_' && !isIdentRune(lx.peekAt(1)):
		lx.advance()
		return finish(tUnderscore)
	case unicode.IsLetter(r) || r == '_':
		// `_req`, `_n`: real Sky allows a name to start with `_` (an
		// unused parameter by convention); it is an ordinary name here.
		name := lx.ident()
		if k, ok := keywords[name]; ok {
			return finish(k)
		}
		return finish(tLower)
	case unicode.IsDigit(r):
		return lx.number(t)
	case r == '"':
		if lx.peekAt(1) == '"' && lx.peekAt(2) == '"' {
			return lx.multiString(t)
		}
		return lx.stringLit(t)
	case r == '\'':
		return lx.charLit(t)
	case r == '.' && lx.peekAt(1) != '.' && isLowerStart(lx, 1):
		lx.advance()
		t.name = lx.ident()
		return finish(tDotField)
	}
	if k, ok := punctuation[r]; ok {
		lx.advance()
		return finish(k)
	}
	if isOpRune(r) {
		for isOpRune(lx.peekAt(0)) {
			lx.advance()
		}
		op := string(lx.src[start.Offset:lx.off])
		switch op {
		case "=":
			return finish(tEquals)
		case ":":
			return finish(tColon)
		case "->":
			return finish(tArrow)
		case "|":
			return finish(tPipe)
		case "..":
			return finish(tDotDot)
		case "!=":
			// Real Sky's spelling of `/=`; the AST only ever holds `/=`.
			t.name = "/="
			return finish(tOp)
		}
		if _, known := binaryOps[op]; !known && op != "." {
			lx.errorAt(start, lx.pos(), fmt.Sprintf("unknown operator `%s`", op),
				"Sky's operators are + - * / // % ^ ++ :: == /= < > <= >= && || |> <| >> <<; put spaces between two operators")
		}
		return finish(tOp)
	}
	lx.advance()
	lx.errorAt(start, lx.pos(), fmt.Sprintf("unexpected character %q", r), "remove it, or put it inside a string")
	return finish(tIllegal)
}

// punctuation maps single-character tokens to their kinds.
var punctuation = map[rune]tokenKind{'(': tLParen, ')': tRParen, '[': tLBracket, ']': tRBracket,
	'{': tLBrace, '}': tRBrace, ',': tComma, '\\': tBackslash}

func isLowerStart(lx *lexer, i int) bool {
	if lx.off+i >= lx.end {
		return false
	}
	r, _ := utf8.DecodeRune(lx.src[lx.off+i : lx.end])
	return unicode.IsLower(r)
}

func (lx *lexer) ident() string {
	start := lx.off
	for {
		r, _ := lx.peekRune()
		if !isIdentRune(r) {
			break
		}
		lx.advance()
	}
	return string(lx.src[start:lx.off])
}

// qualifiedName scans `A`, `A.B.C` (tUpper) or `A.B.c` (tLower); the
// qualifier goes to token.module and the last segment to token.name.
func (lx *lexer) qualifiedName(t token) token {
	segs := []string{lx.ident()}
	kind := tUpper
	for lx.peekAt(0) == '.' {
		r, _ := utf8.DecodeRune(lx.src[min(lx.off+1, lx.end):lx.end])
		if lx.off+1 >= lx.end || !unicode.IsLetter(r) {
			break
		}
		lx.advance()
		segs = append(segs, lx.ident())
		if !unicode.IsUpper(r) {
			kind = tLower
			break
		}
	}
	t.kind = kind
	t.end = lx.pos()
	t.text = string(lx.src[t.pos.Offset:lx.off])
	t.module = strings.Join(segs[:len(segs)-1], ".")
	t.name = segs[len(segs)-1]
	if kind == tLower {
		if _, kw := keywords[t.name]; kw {
			lx.errorAt(t.pos, t.end, fmt.Sprintf("`%s` is a keyword and cannot be qualified", t.name), "")
		}
	}
	return t
}

// number scans 123, 0xFF, 1.5, 1e-3, 2.5E10.
func (lx *lexer) number(t token) token {
	start := t.pos
	isFloat := false
	if lx.peekAt(0) == '0' && (lx.peekAt(1) == 'x' || lx.peekAt(1) == 'X') {
		lx.advance()
		lx.advance()
		for isHex(lx.peekAt(0)) {
			lx.advance()
		}
	} else {
		lx.digits()
		if lx.peekAt(0) == '.' && isDigit(lx.peekAt(1)) {
			isFloat = true
			lx.advance()
			lx.digits()
		}
		if e := lx.peekAt(0); e == 'e' || e == 'E' {
			d := 1
			if s := lx.peekAt(1); s == '-' || s == '+' {
				d = 2
			}
			if isDigit(lx.peekAt(d)) {
				isFloat = true
				for ; d > 0; d-- {
					lx.advance()
				}
				lx.digits()
			}
		}
	}
	t.text = string(lx.src[start.Offset:lx.off])
	if r, _ := lx.peekRune(); isIdentRune(r) {
		for r, _ := lx.peekRune(); isIdentRune(r); r, _ = lx.peekRune() {
			lx.advance()
		}
		lx.errorAt(start, lx.pos(), fmt.Sprintf("the number `%s` runs into letters", string(lx.src[start.Offset:lx.off])),
			"put a space between a number and a name; hexadecimal numbers are written 0xFF")
	}
	t.end = lx.pos()
	t.name = t.text
	if isFloat {
		t.kind = tFloat
		v, err := strconv.ParseFloat(t.text, 64)
		if err != nil {
			lx.errorAt(start, t.end, fmt.Sprintf("the number `%s` is out of range", t.text), "")
		}
		t.floatVal = v
		return t
	}
	t.kind = tInt
	text, base := t.text, 10
	if len(text) >= 2 && (text[1] == 'x' || text[1] == 'X') {
		text, base = text[2:], 16
	}
	v, err := strconv.ParseInt(text, base, 64)
	switch {
	case err != nil && text == "":
		lx.errorAt(start, t.end, "`0x` needs hexadecimal digits after it", "write e.g. 0xFF")
	case err != nil:
		if u, uerr := strconv.ParseUint(text, base, 64); uerr == nil && u == 1<<63 {
			t.minIntMagnitude, v = true, math.MinInt64
			break
		}
		lx.errorAt(start, t.end, intRangeMessage(t.text), intRangeHint)
	}
	t.intVal = v
	return t
}

// intRangeHint is the hint of every "does not fit in an Int" error.
const intRangeHint = "Int is 64 bits: -9223372036854775808 to 9223372036854775807"

func intRangeMessage(text string) string {
	return fmt.Sprintf("the number `%s` does not fit in an Int", text)
}

func (lx *lexer) digits() {
	for isDigit(lx.peekAt(0)) {
		lx.advance()
	}
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }
func isHex(r rune) bool {
	return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F')
}
