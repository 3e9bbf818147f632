package syntax

import "fmt"

// parsePattern parses a full pattern: `p as name`, `x :: xs`, `Just x`,
// or an atom.
func (p *parser) parsePattern() Pattern {
	p.enter()
	defer p.leave()
	start := p.tok.pos
	pat := p.parseConsPattern()
	for p.tok.kind == tAs && p.fits() {
		p.next()
		n := p.tok
		if n.kind != tLower || n.module != "" {
			p.unexpected("a name after `as`", "`as` names the whole pattern: `(x :: _) as list`")
		}
		p.next()
		pat = &AliasPat{Span: Span{start, n.end}, Pattern: pat, Name: Ident{Span: n.span(), Name: n.name}}
	}
	return pat
}

// parseConsPattern parses `head :: tail` (right-associative).
func (p *parser) parseConsPattern() Pattern {
	start := p.tok.pos
	head := p.parseCtorPattern()
	if p.tok.kind == tOp && p.tok.name == "::" && p.fits() {
		p.next()
		tail := p.parseConsPattern()
		return &ConsPat{Span: Span{start, p.prevEnd()}, Head: head, Tail: tail}
	}
	return head
}

// parseCtorPattern parses a constructor with argument patterns, or an atom.
func (p *parser) parseCtorPattern() Pattern {
	if !p.fits() {
		p.unexpected("a pattern", "")
	}
	if p.tok.kind != tUpper {
		return p.parsePatternAtom()
	}
	t := p.next()
	cp := &CtorPat{Module: t.module, Name: t.name}
	for p.fits() && p.startsPatternAtom(p.tok) {
		cp.Args = append(cp.Args, p.parsePatternAtom())
	}
	cp.Span = p.span(t.pos)
	return cp
}

// startsPatternAtom reports whether t can begin an atomic pattern.
func (p *parser) startsPatternAtom(t token) bool {
	switch t.kind {
	case tUnderscore, tLower, tUpper, tInt, tFloat, tChar, tString, tMultiString, tLParen, tLBracket, tLBrace:
		return true
	case tOp:
		next := p.peek(1)
		return t.name == "-" && !t.spaceAfter && (next.kind == tInt || next.kind == tFloat)
	}
	return false
}

// parsePatternAtom parses `_`, a variable, an unapplied constructor, a
// literal, `()`, `( p )`, a tuple, a list or a record pattern.
func (p *parser) parsePatternAtom() Pattern {
	p.enter()
	defer p.leave()
	t := p.tok
	if !p.fits() {
		p.unexpected("a pattern", "")
	}
	switch t.kind {
	case tUnderscore:
		p.next()
		return &WildcardPat{Span: t.span()}
	case tLower:
		p.next()
		if t.module != "" {
			p.fail(t, fmt.Sprintf("`%s` cannot be used in a pattern", t.text), "a variable name or a constructor",
				"patterns bind plain names; a qualified name like this must be a constructor (capitalised)")
		}
		return &VarPat{Span: t.span(), Name: t.name}
	case tUpper:
		p.next()
		return &CtorPat{Span: t.span(), Module: t.module, Name: t.name}
	case tInt:
		p.next()
		p.checkIntRange(t)
		return &IntPat{Span: t.span(), Value: t.intVal, Raw: t.text}
	case tFloat:
		p.next()
		return &FloatPat{Span: t.span(), Value: t.floatVal, Raw: t.text}
	case tChar:
		p.next()
		return &CharPat{Span: t.span(), Value: t.charVal}
	case tString:
		p.next()
		return &StringPat{Span: t.span(), Value: t.strVal}
	case tMultiString:
		p.next()
		if t.parts != nil {
			p.fail(t, "a pattern cannot contain an interpolated string", "a literal string", "remove the `{{…}}` part")
		}
		return &StringPat{Span: t.span(), Value: t.strVal}
	case tOp:
		if p.startsPatternAtom(t) {
			p.next()
			n := p.next()
			if n.kind == tInt {
				return &IntPat{Span: Span{t.pos, n.end}, Value: -n.intVal, Raw: "-" + n.text}
			}
			return &FloatPat{Span: Span{t.pos, n.end}, Value: -n.floatVal, Raw: "-" + n.text}
		}
	case tLParen:
		return p.parseParenPattern()
	case tLBracket:
		open := p.next()
		lp := &ListPat{}
		if p.tok.kind != tRBracket {
			lp.Elems = append(lp.Elems, p.parsePattern())
			for p.tok.kind == tComma {
				p.next()
				lp.Elems = append(lp.Elems, p.parsePattern())
			}
		}
		p.expectCloser(tRBracket, "`,` or `]`", open)
		lp.Span = p.span(open.pos)
		return lp
	case tLBrace:
		open := p.next()
		rp := &RecordPat{}
		for p.tok.kind != tRBrace {
			n := p.tok
			if n.kind != tLower || n.module != "" {
				p.unexpected("a field name", "a record pattern lists field names: `{ name, age }`")
			}
			p.next()
			rp.Fields = append(rp.Fields, Ident{Span: n.span(), Name: n.name})
			if p.tok.kind != tComma {
				break
			}
			p.next()
		}
		p.expectCloser(tRBrace, "`,` or `}`", open)
		rp.Span = p.span(open.pos)
		return rp
	}
	p.unexpected("a pattern", "")
	return nil
}

// parseParenPattern parses `()`, `( p )` and tuple patterns.
func (p *parser) parseParenPattern() Pattern {
	open := p.next()
	if p.tok.kind == tRParen {
		p.next()
		return &UnitPat{Span: p.span(open.pos)}
	}
	elems := []Pattern{p.parsePattern()}
	for p.tok.kind == tComma {
		p.next()
		elems = append(elems, p.parsePattern())
	}
	p.expectCloser(tRParen, "`)`", open)
	if len(elems) == 1 {
		return elems[0]
	}
	return &TuplePat{Span: p.span(open.pos), Elems: elems}
}
