package syntax

import "fmt"

// The expression forms that open a block or extend as far right as they
// can: lambda, if, case (aligned branches) and let (aligned bindings).

// parseLambda parses `\p q -> body`.
func (p *parser) parseLambda() Expr {
	start := p.next()
	var params []Pattern
	for p.tok.kind != tArrow {
		if !p.startsPatternAtom(p.tok) || !p.fits() {
			p.unexpected("a parameter pattern or `->`", "a lambda is written `\\x y -> body`")
		}
		params = append(params, p.parsePatternAtom())
	}
	if len(params) == 0 {
		p.unexpected("a parameter", "a lambda needs at least one parameter: `\\x -> body` (or `\\_ -> body`)")
	}
	p.expect(tArrow, "`->`", "")
	body := p.parseExpr()
	return &Lambda{Span: Span{start.pos, p.prevEnd()}, Params: params, Body: body}
}

// parseIf parses `if c then a else b`.
func (p *parser) parseIf() Expr {
	start := p.next()
	cond := p.parseExpr()
	p.expectIfKeyword(tThen, "`then`", "")
	then := p.parseExpr()
	p.expectIfKeyword(tElse, "`else`", "every `if` needs an `else` branch")
	els := p.parseExpr()
	return &If{Span: Span{start.pos, p.prevEnd()}, Cond: cond, Then: then, Else: els}
}

// expectIfKeyword consumes an `if`'s `then` or `else`. Besides the usual
// layout, real Sky accepts the keyword in the column of the let binding or
// case branch the `if` belongs to (`x = if c then` / `    a` / `else` /
// `    b`): neither keyword can begin a binding or a branch, so such a line can
// only continue the `if`.
func (p *parser) expectIfKeyword(k tokenKind, what, hint string) token {
	if p.tok.kind == k && p.tok.first && p.indent > 1 && p.tok.pos.Col == p.indent {
		return p.next()
	}
	return p.expect(k, what, hint)
}

// parseCase parses `case e of` and its aligned branches.
func (p *parser) parseCase() Expr {
	start := p.next()
	subject := p.parseExpr()
	p.expect(tOf, "`of`", "")
	var branches []*CaseBranch
	p.alignedBlock("a case branch", func() {
		start := p.tok.pos
		pat := p.parsePattern()
		p.expect(tArrow, "`->`", "a case branch is written `pattern -> expression`")
		body := p.parseExpr()
		branches = append(branches, &CaseBranch{Span: Span{start, p.prevEnd()}, Pattern: pat, Body: body})
	}, func() bool { return false })
	return &Case{Span: Span{start.pos, p.prevEnd()}, Subject: subject, Branches: branches}
}

// parseLet parses `let` aligned bindings `in` body.
func (p *parser) parseLet() Expr {
	start := p.next()
	var bindings []LetBinding
	p.alignedBlock("a let binding", func() {
		bindings = append(bindings, p.parseLetBinding())
		if p.tok.kind != tIn && p.tok.kind != tEOF && !(p.tok.first && p.tok.pos.Col == p.indent) {
			p.unexpected("`in` or the next binding", "let bindings must all start in the same column, and `in` ends the block")
		}
	}, func() bool { return p.tok.kind == tIn })
	if p.tok.kind != tIn {
		p.unexpected("`in`", "a `let` block is closed by `in` followed by an expression")
	}
	p.next()
	body := p.parseExpr()
	return &Let{Span: Span{start.pos, p.prevEnd()}, Bindings: bindings, Body: body}
}

// parseLetBinding parses one binding: `x : T` then `x = e`, `f a b = e`,
// or a destructuring `( a, b ) = e`.
func (p *parser) parseLetBinding() LetBinding {
	if p.tok.kind == tLower && p.tok.module == "" {
		var ann *Annotation
		if p.peek(1).kind == tColon {
			ann = p.parseAnnotation()
			if !(p.tok.first && p.tok.pos.Col == p.indent) {
				p.unexpected(fmt.Sprintf("the definition of `%s`", ann.Name.Name), "an annotation is followed by the definition, starting in the same column")
			}
			p.itemStart = p.i
		}
		return p.parseValueDecl(ann, nil)
	}
	start := p.tok.pos
	pat := p.parsePattern()
	p.expect(tEquals, "`=`", "")
	body := p.parseExpr()
	return &Destructure{Span: Span{start, p.prevEnd()}, Pattern: pat, Body: body}
}
