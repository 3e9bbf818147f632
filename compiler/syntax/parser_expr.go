package syntax

import "fmt"

// assoc is an operator's associativity.
type assoc int

const (
	assocLeft assoc = iota
	assocRight
	assocNone
)

// opInfo is an operator's precedence (higher binds tighter) and associativity.
type opInfo struct {
	prec  int
	assoc assoc
}

// binaryOps is Sky's operator table (sky-language.md, "Operators").
var binaryOps = map[string]opInfo{
	">>": {9, assocLeft}, "<<": {9, assocRight},
	"^": {8, assocRight},
	"*": {7, assocLeft}, "/": {7, assocLeft}, "//": {7, assocLeft}, "%": {7, assocLeft},
	"+": {6, assocLeft}, "-": {6, assocLeft},
	"++": {5, assocRight}, "::": {5, assocRight},
	"==": {4, assocNone}, "/=": {4, assocNone}, "<": {4, assocNone}, ">": {4, assocNone}, "<=": {4, assocNone}, ">=": {4, assocNone},
	"&&": {3, assocRight},
	"||": {2, assocRight},
	"|>": {0, assocLeft}, "<|": {0, assocRight},
}

// isBinaryOp reports whether the current token is a known binary operator
// that continues the expression.
func (p *parser) isBinaryOp() bool {
	if p.tok.kind != tOp || !p.fits() {
		return false
	}
	_, ok := binaryOps[p.tok.name]
	return ok
}

// parseExpr parses an expression: operands joined by binary operators,
// resolved by the precedence table.
func (p *parser) parseExpr() Expr {
	p.enter()
	defer p.leave()
	var operands []operand
	parse := func() {
		start := p.tok.pos
		x := p.parseOperand()
		operands = append(operands, operand{x, Span{start, p.prevEnd()}})
	}
	parse()
	var ops []token
	for p.isBinaryOp() {
		ops = append(ops, p.next())
		parse()
	}
	return p.resolveOps(operands, ops)
}

// resolveOps builds the tree for x0 op1 x1 op2 x2 … with a shunting-yard
// pass, rejecting chained non-associative operators (`a < b < c`) and mixed
// associativity at one precedence (`f <| x |> g`).
func (p *parser) resolveOps(operands []operand, ops []token) Expr {
	if len(ops) == 0 {
		return operands[0].x
	}
	out := []operand{operands[0]}
	var stack []token
	reduce := func() {
		op := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		r, l := out[len(out)-1], out[len(out)-2]
		out = out[:len(out)-2]
		sp := Span{l.span.Start, r.span.End}
		out = append(out, operand{&BinOp{Span: sp, Op: op.name, OpSpan: op.span(), L: l.x, R: r.x}, sp})
	}
	for i, o2 := range ops {
		i2 := binaryOps[o2.name]
		for len(stack) > 0 {
			o1 := stack[len(stack)-1]
			i1 := binaryOps[o1.name]
			if i1.prec > i2.prec || (i1.prec == i2.prec && i1.assoc == assocLeft && i2.assoc == assocLeft) {
				reduce()
				continue
			}
			if i1.prec == i2.prec && (i1.assoc == assocNone || i2.assoc == assocNone) {
				p.fail(o2, fmt.Sprintf("the comparison `%s` cannot be chained with `%s`", o2.name, o1.name), "",
					"comparison operators are non-associative; write `a < b && b < c`, or add parentheses")
			}
			if i1.prec == i2.prec && i1.assoc != i2.assoc {
				p.fail(o2, fmt.Sprintf("`%s` and `%s` cannot be mixed without parentheses", o1.name, o2.name), "",
					"they have the same precedence but opposite associativity; add parentheses to say which goes first")
			}
			break
		}
		stack = append(stack, o2)
		out = append(out, operands[i+1])
	}
	for len(stack) > 0 {
		reduce()
	}
	return out[0].x
}

// operand is an expression between operators with its extent including any
// parentheses around it (which the node's own span omits).
type operand struct {
	x    Expr
	span Span
}

// parseOperand parses what may stand between binary operators: let, if,
// case, a lambda, a negation or an application.
func (p *parser) parseOperand() Expr {
	if !p.fits() {
		p.unexpected("an expression", "")
	}
	switch p.tok.kind {
	case tLet:
		return p.parseLet()
	case tIf:
		return p.parseIf()
	case tCase:
		return p.parseCase()
	case tBackslash:
		return p.parseLambda()
	case tOp:
		if p.tok.name == "-" && !p.tok.spaceAfter && p.startsTerm(p.peek(1)) {
			minus := p.next()
			x := p.parseNegated()
			neg := &Neg{Span: Span{minus.pos, p.prevEnd()}, X: x}
			return p.parseArgs(neg, minus.pos)
		}
		hint := ""
		if p.tok.name == "-" {
			hint = "negation is written `-x`, with no space between `-` and the value"
		}
		p.unexpected("an expression", hint)
	}
	if !p.startsTerm(p.tok) {
		p.unexpected("an expression", "")
	}
	start := p.tok.pos
	return p.parseArgs(p.parseTerm(), start)
}

// parseArgs parses the arguments of an application of fn, if any. `f -1`
// passes -1: a `-` with space before it and none after negates its operand.
func (p *parser) parseArgs(fn Expr, start Pos) Expr {
	var args []Expr
	for p.fits() {
		if p.startsTerm(p.tok) {
			args = append(args, p.parseTerm())
			continue
		}
		if t := p.tok; t.kind == tOp && t.name == "-" && t.spaceBefore && !t.spaceAfter && p.startsTerm(p.peek(1)) {
			p.next()
			x := p.parseNegated()
			args = append(args, &Neg{Span: Span{t.pos, p.prevEnd()}, X: x})
			continue
		}
		break
	}
	if len(args) == 0 {
		return fn
	}
	return &App{Span: Span{start, p.prevEnd()}, Fn: fn, Args: args}
}

// parseNegated parses the operand of a negating `-`, where the literal
// 9223372036854775808 is allowed: `-9223372036854775808` is the smallest Int.
func (p *parser) parseNegated() Expr {
	if t := p.tok; t.kind == tInt && t.minIntMagnitude {
		p.next()
		return &IntLit{Span: t.span(), Value: t.intVal, Raw: t.text}
	}
	return p.parseTerm()
}

// checkIntRange reports an Int literal one past the largest Int that no `-`
// negates (the lexer lets it through for the parser to decide).
func (p *parser) checkIntRange(t token) {
	if t.minIntMagnitude {
		p.errs.errorAt(t.pos, t.end, intRangeMessage(t.text), intRangeHint)
	}
}

// startsTerm reports whether t can begin an atomic expression.
func (p *parser) startsTerm(t token) bool {
	switch t.kind {
	case tLower, tUpper, tInt, tFloat, tChar, tString, tMultiString, tLParen, tLBracket, tLBrace, tDotField:
		return true
	}
	return false
}

// parseTerm parses an atom followed by any field accesses glued to it
// (`r.a.b`, `(f x).name`).
func (p *parser) parseTerm() Expr {
	p.enter()
	defer p.leave()
	start := p.tok.pos
	x := p.parseAtom()
	for p.tok.kind == tDotField && !p.tok.spaceBefore {
		f := p.next()
		x = &Access{Span: Span{start, f.end}, Record: x, Field: Ident{Span: Span{Pos{File: f.pos.File, Line: f.pos.Line, Col: f.pos.Col + 1, Offset: f.pos.Offset + 1}, f.end}, Name: f.name}}
	}
	return x
}

func (p *parser) parseAtom() Expr {
	t := p.tok
	switch t.kind {
	case tLower:
		p.next()
		return &Var{Span: t.span(), Module: t.module, Name: t.name}
	case tUpper:
		p.next()
		return &Ctor{Span: t.span(), Module: t.module, Name: t.name}
	case tInt:
		p.next()
		p.checkIntRange(t)
		return &IntLit{Span: t.span(), Value: t.intVal, Raw: t.text}
	case tFloat:
		p.next()
		return &FloatLit{Span: t.span(), Value: t.floatVal, Raw: t.text}
	case tChar:
		p.next()
		return &CharLit{Span: t.span(), Value: t.charVal}
	case tString:
		p.next()
		return &StringLit{Span: t.span(), Value: t.strVal}
	case tMultiString:
		p.next()
		return p.interpolation(t)
	case tDotField:
		p.next()
		return &Accessor{Span: t.span(), Field: t.name}
	case tLParen:
		return p.parseParen()
	case tLBracket:
		return p.parseList()
	case tLBrace:
		return p.parseRecord()
	}
	p.unexpected("an expression", "")
	return nil
}

// parseParen parses `()`, `(+)`, `(e)` and tuples.
func (p *parser) parseParen() Expr {
	open := p.next()
	if p.tok.kind == tRParen {
		p.next()
		return &Unit{Span: p.span(open.pos)}
	}
	if p.tok.kind == tOp && p.peek(1).kind == tRParen {
		op := p.next()
		if _, ok := binaryOps[op.name]; !ok {
			p.fail(op, fmt.Sprintf("unknown operator `%s`", op.name), "a known operator", "")
		}
		p.next()
		return &OpFunc{Span: p.span(open.pos), Op: op.name}
	}
	elems := []Expr{p.parseExpr()}
	for p.tok.kind == tComma {
		p.expect(tComma, "`,`", "")
		elems = append(elems, p.parseExpr())
	}
	p.expectCloser(tRParen, "`)`", open)
	if len(elems) == 1 {
		return elems[0]
	}
	return &Tuple{Span: p.span(open.pos), Elems: elems}
}

// parseList parses `[ a, b, c ]`.
func (p *parser) parseList() Expr {
	open := p.next()
	var elems []Expr
	if p.tok.kind != tRBracket {
		elems = append(elems, p.parseExpr())
		for p.tok.kind == tComma {
			p.expect(tComma, "`,`", "")
			elems = append(elems, p.parseExpr())
		}
	}
	p.expectCloser(tRBracket, "`,` or `]`", open)
	return &List{Span: p.span(open.pos), Elems: elems}
}

// parseRecord parses `{}`, `{ x = 1, y = 2 }` and `{ r | x = 2 }`.
func (p *parser) parseRecord() Expr {
	open := p.next()
	if p.tok.kind == tRBrace {
		p.next()
		return &Record{Span: p.span(open.pos)}
	}
	var base *Var
	if p.tok.kind == tLower && p.peek(1).kind == tPipe {
		t := p.next()
		if t.module != "" {
			p.fail(t, "a record update needs a plain variable", "a name such as `model`", "bind the record with let first, then write `{ r | field = value }`")
		}
		base = &Var{Span: t.span(), Name: t.name}
		p.next()
	}
	var fields []*FieldInit
	for {
		name := p.tok
		if name.kind != tLower || name.module != "" {
			p.unexpected("a field name", "record fields are written `{ name = value }`")
		}
		p.next()
		p.expect(tEquals, "`=`", "record fields are written `{ name = value }`; use `:` only in record types")
		v := p.parseExpr()
		fields = append(fields, &FieldInit{Span: Span{name.pos, p.prevEnd()}, Name: Ident{Span: name.span(), Name: name.name}, Value: v})
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	p.expectCloser(tRBrace, "`,` or `}`", open)
	if base != nil {
		return &RecordUpdate{Span: p.span(open.pos), Record: base, Fields: fields}
	}
	return &Record{Span: p.span(open.pos), Fields: fields}
}
