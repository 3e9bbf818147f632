package syntax

import (
	"fmt"
	"strings"

	"skydurable/compiler/diag"
)

// ParseFile parses one Sky source file. On syntax errors it returns the
// partial File (declarations that parsed) and a diag.List holding every
// error found, sorted by position; it never panics.
func ParseFile(filename string, src []byte) (f *File, err error) {
	f = &File{Name: filename}
	p := newParser(filename, src)
	defer p.recoverInternal(&err)
	p.start()
	p.parseFile(f)
	return f, p.errs.result()
}

// ParseExpr parses a single expression (for tests and the REPL). The
// expression may span lines: at its outermost level every line continues it
// (let and case blocks inside still align as usual). Errors are a diag.List.
func ParseExpr(src string) (e Expr, err error) {
	p := newParser("", []byte(src))
	defer p.recoverInternal(&err)
	p.start()
	func() {
		defer p.catch()
		p.indent = 0
		p.itemStart = p.i
		e = p.parseExpr()
		if p.tok.kind != tEOF {
			p.unexpected("the end of the expression", "")
		}
	}()
	if rerr := p.errs.result(); rerr != nil {
		return nil, rerr
	}
	return e, nil
}

// parser is a recursive-descent parser pulling tokens from the lexer on
// demand. Layout is column based: see layout.go.
type parser struct {
	file   string
	src    []byte
	lx     *lexer
	tok    token          // the current token
	prev   token          // the last consumed token
	ahead  [maxPeek]token // lookahead beyond tok (peek), ahead[:nAhead]
	nAhead int
	i      int // index of tok in the token stream
	errs   *errorSink

	docIdx int // doc comments before lx.docs[docIdx] have been considered

	indent    int // a line-initial token continues the construct only if its column is greater
	itemStart int // index of the token that starts the current aligned item (exempt from indent)
	depth     int // nesting depth, bounded so hostile input cannot exhaust the stack
}

// bailout unwinds the parser to the nearest recovery point after an error.
type bailout struct{}

const maxDepth = 500

func newParser(filename string, src []byte) *parser {
	errs := &errorSink{src: src}
	lx := newLexer(filename, src, Pos{File: filename, Line: 1, Col: 1}, len(src), errs)
	return &parser{file: filename, src: src, lx: lx, errs: errs}
}

// start reads the first token.
func (p *parser) start() { p.tok = p.lx.nextToken() }

// recoverInternal turns an unexpected internal panic into an error, so a
// parser bug surfaces as a message rather than a crash of the CLI.
func (p *parser) recoverInternal(err *error) {
	if r := recover(); r != nil {
		if _, ok := r.(bailout); ok {
			*err = p.errs.result()
			return
		}
		p.errs.errorAt(p.tok.pos, Pos{}, fmt.Sprintf("internal parser error: %v", r),
			"this is a bug in the Sky parser; please report it with this file")
		*err = p.errs.result()
	}
}

// catch stops a bailout at a recovery point.
func (p *parser) catch() {
	if r := recover(); r != nil {
		if _, ok := r.(bailout); !ok {
			panic(r)
		}
	}
}

func (p *parser) next() token {
	t := p.tok
	if t.kind == tEOF {
		return t
	}
	p.prev = t
	p.i++
	if p.nAhead > 0 {
		p.tok = p.ahead[0]
		copy(p.ahead[:], p.ahead[1:p.nAhead])
		p.nAhead--
	} else {
		p.tok = p.lx.nextToken()
	}
	return t
}

// maxPeek is the longest lookahead the grammar needs (`( op )`).
const maxPeek = 2

// peek returns the token n places after the current one (0 <= n <= maxPeek).
func (p *parser) peek(n int) token {
	if n == 0 {
		return p.tok
	}
	for p.nAhead < n {
		p.ahead[p.nAhead] = p.lx.nextToken()
		p.nAhead++
	}
	return p.ahead[n-1]
}

// prevEnd is the end position of the last consumed token.
func (p *parser) prevEnd() Pos {
	if p.i == 0 {
		return p.tok.pos
	}
	return p.prev.end
}

func (p *parser) span(start Pos) Span { return Span{start, p.prevEnd()} }

// fail records an error at token t and unwinds to the recovery point.
func (p *parser) fail(t token, msg, expected, hint string) {
	found := ""
	if expected != "" {
		found = t.describe()
	}
	pos, end := t.pos, t.end
	if t.kind == tEOF && p.i > 0 {
		// Point just after the last token rather than at an empty last line.
		pos, end = p.prev.end, Pos{}
	}
	p.errs.add(pos, end, diag.Diagnostic{Message: msg, Expected: expected, Found: found, Hint: hint})
	panic(bailout{})
}

// unexpected reports the current token as out of place where `expected` was
// wanted, with a layout hint when the token starts a line.
func (p *parser) unexpected(expected, hint string) {
	t := p.tok
	msg := fmt.Sprintf("unexpected %s", strings.TrimPrefix(t.describe(), "the "))
	if t.kind == tEOF {
		msg = "the file ended unexpectedly"
	}
	switch {
	case hint != "":
	case t.kind == tArrow:
		hint = "a `->` here often means a case branch that is not aligned with the branches above it, or a lambda missing its `\\`"
	case t.kind == tEquals:
		hint = "a `=` here often means a definition that is indented too far: top-level declarations start at column 1, and let bindings start in the column of the first binding"
	}
	if hint == "" && t.first && t.kind != tEOF && !p.fits() {
		hint = fmt.Sprintf("this line starts at column %d, which ends the block above; indent it further to continue, or check that aligned lines (let bindings, case branches) start in the same column", t.pos.Col)
	}
	p.fail(t, msg, expected, hint)
}

// expect consumes a token of kind k (described as what) that fits the layout.
func (p *parser) expect(k tokenKind, what, hint string) token {
	if p.tok.kind == k && !p.fits() {
		p.fail(p.tok, fmt.Sprintf("%s is not indented enough", what), "",
			fmt.Sprintf("a line continuing a declaration or block must start to the right of column %d", p.indent))
	}
	if p.tok.kind != k {
		p.unexpected(what, hint)
	}
	return p.next()
}

// expectCloser consumes a closing bracket; closers are accepted at any column.
func (p *parser) expectCloser(k tokenKind, what string, open token) token {
	if p.tok.kind != k {
		p.unexpected(what, fmt.Sprintf("the %s at line %d, column %d is not closed yet", open.text, open.pos.Line, open.pos.Col))
	}
	return p.next()
}

// enter bounds recursion depth; call leave when done.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok, "this is nested too deeply", "", fmt.Sprintf("Sky allows at most %d levels of nesting; name some parts with let", maxDepth))
	}
}

func (p *parser) leave() { p.depth-- }

// moduleParts splits a tUpper token (A.B.C) into its module name.
func moduleParts(t token) ModuleName {
	var parts []string
	if t.module != "" {
		parts = strings.Split(t.module, ".")
	}
	return ModuleName{Span: t.span(), Parts: append(parts, t.name)}
}
