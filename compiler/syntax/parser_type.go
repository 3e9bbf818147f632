package syntax

import "fmt"

// parseType parses a type: `a -> b -> c` (right-nested), applications such
// as `Task Error (List a)`, tuples, records and unit.
func (p *parser) parseType() Type {
	p.enter()
	defer p.leave()
	start := p.tok.pos
	t := p.parseTypeApp()
	if p.tok.kind == tArrow && p.fits() {
		p.next()
		r := p.parseType()
		return &FuncType{Span: Span{start, p.prevEnd()}, Arg: t, Result: r}
	}
	return t
}

// parseTypeApp parses a named type with its arguments, or an atom.
func (p *parser) parseTypeApp() Type {
	if !p.fits() {
		p.unexpected("a type", "")
	}
	if p.tok.kind != tUpper {
		return p.parseTypeAtom()
	}
	t := p.next()
	con := &TypeCon{Module: t.module, Name: t.name}
	for p.fits() && p.startsTypeAtom(p.tok) {
		con.Args = append(con.Args, p.parseTypeAtom())
	}
	con.Span = p.span(t.pos)
	return con
}

// startsTypeAtom reports whether t can begin an atomic type.
func (p *parser) startsTypeAtom(t token) bool {
	switch t.kind {
	case tLower, tUpper, tLParen, tLBrace:
		return true
	}
	return false
}

// parseTypeAtom parses a variable, an unapplied type name, `()`, `( t )`,
// a tuple or a record type.
func (p *parser) parseTypeAtom() Type {
	p.enter()
	defer p.leave()
	t := p.tok
	if !p.fits() {
		p.unexpected("a type", "")
	}
	switch t.kind {
	case tLower:
		p.next()
		if t.module != "" {
			p.fail(t, fmt.Sprintf("`%s` is not a type", t.text), "a type such as `Int` or a type variable such as `a`",
				"type names start with a capital letter")
		}
		return &TypeVar{Span: t.span(), Name: t.name}
	case tUpper:
		p.next()
		return &TypeCon{Span: t.span(), Module: t.module, Name: t.name}
	case tLParen:
		p.next()
		if p.tok.kind == tRParen {
			p.next()
			return &UnitType{Span: p.span(t.pos)}
		}
		elems := []Type{p.parseType()}
		for p.tok.kind == tComma {
			p.next()
			elems = append(elems, p.parseType())
		}
		p.expectCloser(tRParen, "`)`", t)
		if len(elems) == 1 {
			return elems[0]
		}
		return &TupleType{Span: p.span(t.pos), Elems: elems}
	case tLBrace:
		return p.parseRecordType()
	}
	p.unexpected("a type", "")
	return nil
}

// parseRecordType parses `{}`, `{ a : Int, b : String }` or `{ r | a : Int }`.
func (p *parser) parseRecordType() Type {
	open := p.next()
	rt := &RecordType{}
	if p.tok.kind == tRBrace {
		p.next()
		rt.Span = p.span(open.pos)
		return rt
	}
	if p.tok.kind == tLower && p.peek(1).kind == tPipe {
		v := p.next()
		rt.Ext = &Ident{Span: v.span(), Name: v.name}
		p.next()
	}
	for {
		name := p.tok
		if name.kind != tLower || name.module != "" {
			p.unexpected("a field name", "record types are written `{ name : Type }`")
		}
		p.next()
		p.expect(tColon, "`:`", "fields of a record type are written `name : Type`; use `=` only in record values")
		ft := p.parseType()
		rt.Fields = append(rt.Fields, &FieldType{Span: Span{name.pos, p.prevEnd()}, Name: Ident{Span: name.span(), Name: name.name}, Type: ft})
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	p.expectCloser(tRBrace, "`,` or `}`", open)
	rt.Span = p.span(open.pos)
	return rt
}
