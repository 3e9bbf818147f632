package syntax

// Layout (the off-side rule), column based, tab = 4 columns:
//
//   - top-level declarations start at column 1, and every other line of a
//     declaration starts to the right of column 1;
//   - the bindings of a `let` start in one column C (the column of the first
//     binding) and the branches of a `case` likewise; a line belonging to a
//     binding or branch starts to the right of C;
//   - a line that starts at or left of the current block's column ends
//     whatever expression was being parsed (an operator at the start of a
//     more-indented line simply continues it).
//
// The parser keeps the current block column in p.indent. Only the first token
// of a line is checked; tokens later on a line always continue. The token
// that starts an aligned item (p.itemStart) is exempt, since it sits exactly
// at the block column.

// fits reports whether the current token may continue the construct being
// parsed under the layout rule.
func (p *parser) fits() bool {
	t := p.tok
	if t.kind == tEOF {
		return false
	}
	return !t.first || t.pos.Col > p.indent || p.i == p.itemStart
}

// alignedBlock parses a block of items (let bindings or case branches) that
// all start in the column of the current token. item parses one item with
// the block column as indent; more reports whether parsing should stop
// before looking for another item (e.g. at `in`). It restores the outer
// layout state afterwards.
func (p *parser) alignedBlock(what string, item func(), stop func() bool) {
	if !p.fits() {
		p.unexpected(what, "")
	}
	col := p.tok.pos.Col
	savedIndent, savedStart := p.indent, p.itemStart
	defer func() { p.indent, p.itemStart = savedIndent, savedStart }()
	for {
		p.indent, p.itemStart = col, p.i
		item()
		if stop() {
			return
		}
		t := p.tok
		if t.kind == tEOF || !t.first || t.pos.Col != col {
			return
		}
	}
}

// atColumnOne reports whether the current token begins a top-level item.
func (p *parser) atColumnOne() bool {
	return p.tok.first && p.tok.pos.Col == 1
}

// skipToTopLevel advances past the current (broken) declaration to the next
// token at column 1, so parsing can continue with the next declaration.
func (p *parser) skipToTopLevel() {
	p.next()
	for p.tok.kind != tEOF && !p.atColumnOne() {
		p.next()
	}
}
