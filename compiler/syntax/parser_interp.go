package syntax

// Interpolation in `"""…"""` strings: the lexer records the source range of
// each `{{…}}`; the parser parses each range with a sub-parser sharing the
// error list, so positions and messages are those of the real file.

// interpolation turns a multi-line string token into a StringLit (no
// interpolation) or an Interp whose expression parts are parsed from their
// source ranges.
func (p *parser) interpolation(t token) Expr {
	if t.parts == nil {
		return &StringLit{Span: t.span(), Value: t.strVal, Multiline: true}
	}
	n := &Interp{Span: t.span()}
	for _, part := range t.parts {
		if !part.expr {
			n.Parts = append(n.Parts, &StringLit{Span: Span{part.pos, part.endPos}, Value: part.text, Multiline: true})
			continue
		}
		if x := p.parseInterpolated(part); x != nil {
			n.Parts = append(n.Parts, x)
		}
	}
	return n
}

// parseInterpolated parses the source inside `{{ }}`: a name, a field access
// or an application of one to arguments.
func (p *parser) parseInterpolated(part strPart) (x Expr) {
	lx := newLexer(p.file, p.src, part.pos, part.end, p.errs)
	sub := &parser{file: p.file, src: p.src, lx: lx, errs: p.errs, depth: p.depth}
	sub.start()
	defer sub.catch()
	if sub.tok.kind == tEOF {
		sub.errs.errorAt(part.pos, Pos{}, "empty `{{}}` interpolation", "put a name between the braces, e.g. {{name}}")
		return nil
	}
	e := sub.parseExpr()
	if sub.tok.kind != tEOF {
		sub.unexpected("`}}`", "")
	}
	if !simpleInterpolation(e) {
		sub.errs.errorAt(e.Range().Start, e.Range().End, "this interpolation is too complex",
			"`{{…}}` takes a name, a field (`a.b`) or an application (`f x`); bind anything else with let first")
	}
	return e
}

// simpleInterpolation reports whether e is a name, a field access or an
// application of those. An argument may be any expression: one that is not
// a single atom was written in parentheses (`{{String.fromInt (n + 1)}}`).
func simpleInterpolation(e Expr) bool {
	switch e := e.(type) {
	case *Var:
		return true
	case *Access:
		return simpleInterpolation(e.Record)
	case *App:
		return simpleInterpolation(e.Fn)
	}
	return false
}
