package syntax

import "fmt"

// parseFile fills f with header, imports and declarations. Each top-level item is
// a recovery point: after an error the parser skips to the next line that
// starts at column 1 and carries on.
func (p *parser) parseFile(f *File) {
	start := p.tok.pos
	p.indent = 1
	if p.tok.kind == tModule {
		p.topLevel(func() { p.parseHeader(f) })
	}
	if f.Module != nil {
		f.Docs = p.takeFirstDoc(p.prevEnd().Offset, p.tok.pos.Offset)
	}
	for p.tok.kind == tImport {
		p.topLevel(func() { f.Imports = append(f.Imports, p.parseImport()) })
	}
	lastEnd := p.prevEnd().Offset
	for p.tok.kind != tEOF {
		p.topLevel(func() {
			if d := p.parseDecl(lastEnd); d != nil {
				f.Decls = append(f.Decls, d)
			}
		})
		lastEnd = p.prevEnd().Offset
	}
	f.Span = Span{start, p.tok.pos}
}

// topLevel runs one top-level item with error recovery and checks that it
// starts at column 1 and that nothing is left over after it.
func (p *parser) topLevel(item func()) {
	startIdx := p.i
	ok := func() (ok bool) {
		defer p.catch()
		if !p.atColumnOne() {
			p.fail(p.tok, "a top-level declaration must start at column 1", "",
				"remove the indentation, or indent the line above it if it belongs there")
		}
		p.indent, p.itemStart = 1, p.i
		item()
		if p.tok.kind != tEOF && !p.atColumnOne() {
			hint := "this may be a missing operator, a stray bracket, or a line that should be indented"
			if p.tok.kind == tArrow || p.tok.kind == tEquals {
				hint = "" // unexpected gives a more specific layout hint
			}
			p.unexpected("a new declaration at column 1", hint)
		}
		return true
	}()
	if !ok {
		if p.i == startIdx || !p.atColumnOne() {
			p.skipToTopLevel()
		}
	}
}

// takeDoc returns the last doc comment lying between the byte offsets from
// and to, or nil. Calls come in source order, so each comment is looked at
// once.
func (p *parser) takeDoc(from, to int) *DocComment {
	var doc *DocComment
	docs := p.lx.docs
	for ; p.docIdx < len(docs) && docs[p.docIdx].End.Offset <= to; p.docIdx++ {
		if d := docs[p.docIdx]; d.Start.Offset >= from {
			doc = d
		}
	}
	return doc
}

// takeFirstDoc returns the first doc comment lying between the byte offsets
// from and to, or nil, leaving the ones after it: the module's doc comment
// comes first after the header, and when no import follows, the next one is
// the first declaration's.
func (p *parser) takeFirstDoc(from, to int) *DocComment {
	docs := p.lx.docs
	for ; p.docIdx < len(docs) && docs[p.docIdx].End.Offset <= to; p.docIdx++ {
		if d := docs[p.docIdx]; d.Start.Offset >= from {
			p.docIdx++
			return d
		}
	}
	return nil
}

func (p *parser) parseHeader(f *File) {
	p.next() // module
	name := p.tok
	if name.kind != tUpper {
		p.unexpected("a module name such as `Main` or `Lib.User`", "module names are capitalised, dot-separated words")
	}
	p.next()
	mn := moduleParts(name)
	f.Module = &mn
	if p.tok.kind != tExposing {
		p.unexpected("`exposing`", "write `module "+mn.String()+" exposing (..)` to expose everything")
	}
	p.next()
	f.Exposing = p.parseExposing()
}

// parseExposing parses `(..)` or `(a, T, U(..), (|>))`.
func (p *parser) parseExposing() *Exposing {
	open := p.expect(tLParen, "`(`", "an exposing list is written `exposing (a, B, C(..))` or `exposing (..)`")
	ex := &Exposing{}
	if p.tok.kind == tDotDot {
		p.next()
		p.expectCloser(tRParen, "`)`", open)
		ex.All = true
		ex.Span = p.span(open.pos)
		return ex
	}
	for {
		t := p.tok
		item := &ExposedItem{Name: t.name}
		switch {
		case t.kind == tLower && t.module == "":
			p.next()
			item.Kind = ExposeValue
		case t.kind == tUpper && t.module == "":
			p.next()
			item.Kind = ExposeType
			if p.tok.kind == tLParen && (!p.tok.spaceBefore || p.peek(1).kind == tDotDot) {
				o := p.next()
				item.Open = true
				if p.tok.kind == tDotDot {
					p.next()
				} else {
					item.Ctors = p.parseExposedCtors()
				}
				p.expectCloser(tRParen, "`)`", o)
			}
		case t.kind == tLParen && p.peek(1).kind == tOp && p.peek(2).kind == tRParen:
			p.next()
			item.Name = p.next().name
			p.next()
			item.Kind = ExposeOperator
		default:
			p.unexpected("a name to expose", "list values, types and `Type(..)` separated by commas")
		}
		item.Span = p.span(t.pos)
		ex.Items = append(ex.Items, item)
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	p.expectCloser(tRParen, "`,` or `)`", open)
	ex.Span = p.span(open.pos)
	return ex
}

// parseExposedCtors parses the `A, B` of `T(A, B)`, as real Sky writes
// it, up to the closing parenthesis.
func (p *parser) parseExposedCtors() []*Ident {
	var ctors []*Ident
	for {
		t := p.tok
		if t.kind != tUpper || t.module != "" {
			p.unexpected("`..` or a constructor name", "expose a type's constructors with `T(..)` or `T(A, B)`")
			return ctors
		}
		p.next()
		ctors = append(ctors, &Ident{Span: t.span(), Name: t.name})
		if p.tok.kind != tComma {
			return ctors
		}
		p.next()
	}
}

// parseImport parses `import A.B as C exposing (...)`.
func (p *parser) parseImport() *Import {
	start := p.next()
	name := p.tok
	if name.kind != tUpper {
		p.unexpected("a module name", "imports are written `import Std.Log exposing (println)`")
	}
	p.next()
	imp := &Import{Module: moduleParts(name)}
	if p.tok.kind == tAs && p.fits() {
		p.next()
		a := p.tok
		if a.kind != tUnderscore && (a.kind != tUpper || a.module != "") {
			p.unexpected("a capitalised alias such as `Db`, or `_`", "")
		}
		p.next()
		imp.Alias = &Ident{Span: a.span(), Name: a.name}
	}
	if p.tok.kind == tExposing && p.fits() {
		p.next()
		imp.Exposing = p.parseExposing()
	}
	imp.Span = p.span(start.pos)
	return imp
}

// parseDecl parses one top-level declaration; lastEnd is where the previous
// one ended (doc comments in between belong to this one).
func (p *parser) parseDecl(lastEnd int) Decl {
	doc := p.takeDoc(lastEnd, p.tok.pos.Offset)
	switch t := p.tok; {
	case t.kind == tType:
		if p.peek(1).kind == tLower && p.peek(1).name == "alias" {
			a := p.parseTypeAlias()
			a.Doc = doc
			return a
		}
		c := p.parseCustomType()
		c.Doc = doc
		return c
	case t.kind == tLower && t.module == "":
		var ann *Annotation
		if p.peek(1).kind == tColon {
			ann = p.parseAnnotation()
			if n := p.tok; n.kind == tLower && n.module == "" && p.atColumnOne() && n.name != ann.Name.Name {
				p.fail(n, fmt.Sprintf("the annotation for `%s` is followed by a definition of `%s`", ann.Name.Name, n.name), "",
					fmt.Sprintf("an annotation must be immediately followed by its definition; if this is a typo, rename it to `%s`", ann.Name.Name))
			}
			if p.tok.kind == tEOF || !p.atColumnOne() || p.tok.kind != tLower || p.tok.name != ann.Name.Name {
				p.errs.errorAt(ann.Name.Start, ann.Name.End,
					fmt.Sprintf("the type annotation for `%s` has no definition", ann.Name.Name),
					fmt.Sprintf("write the definition `%s … = …` on the line right after the annotation", ann.Name.Name))
				return nil
			}
			p.itemStart = p.i
		}
		d := p.parseValueDecl(ann, doc)
		return d
	case t.kind == tImport:
		p.fail(t, "imports must come before all declarations", "", "move this import up, next to the other imports")
	case t.kind == tModule:
		p.fail(t, "the module header must be the first line of the file", "", "")
	}
	p.unexpected("a declaration", "a declaration is `name args = expression`, `name : Type`, `type …` or `type alias …`")
	return nil
}

// parseAnnotation parses `name : Type`.
func (p *parser) parseAnnotation() *Annotation {
	name := p.next()
	p.next() // :
	t := p.parseType()
	return &Annotation{Span: Span{name.pos, p.prevEnd()}, Name: Ident{Span: name.span(), Name: name.name}, Type: t}
}

// parseValueDecl parses `name p1 p2 = body` (top level or in a let).
func (p *parser) parseValueDecl(ann *Annotation, doc *DocComment) *ValueDecl {
	name := p.tok
	if name.kind != tLower || name.module != "" {
		p.unexpected("a definition", "")
	}
	p.next()
	if ann != nil && ann.Name.Name != name.name {
		p.fail(name, fmt.Sprintf("the annotation for `%s` is followed by a definition of `%s`", ann.Name.Name, name.name), "",
			fmt.Sprintf("an annotation must be immediately followed by its definition; if this is a typo, rename it to `%s`", ann.Name.Name))
	}
	var params []Pattern
	for p.tok.kind != tEquals {
		if !p.fits() || !p.startsPatternAtom(p.tok) {
			hint := "a definition is written `name arg1 arg2 = expression`"
			if p.tok.kind == tColon {
				hint = "a type annotation is written `name : Type` on its own line"
			}
			p.unexpected("an argument pattern or `=`", hint)
		}
		params = append(params, p.parsePatternAtom())
	}
	p.expect(tEquals, "`=`", "")
	body := p.parseExpr()
	start := name.pos
	if ann != nil {
		start = ann.Start
	}
	return &ValueDecl{Span: Span{start, p.prevEnd()}, Doc: doc, Annotation: ann,
		Name: Ident{Span: name.span(), Name: name.name}, Params: params, Body: body}
}

// parseTypeParams parses the lower-case parameters of a type declaration.
func (p *parser) parseTypeParams() []Ident {
	var params []Ident
	for p.tok.kind == tLower && p.tok.module == "" && p.fits() {
		t := p.next()
		params = append(params, Ident{Span: t.span(), Name: t.name})
	}
	return params
}

// parseTypeName parses the capitalised name of a type declaration.
func (p *parser) parseTypeName() Ident {
	t := p.tok
	if t.kind != tUpper || t.module != "" || !p.fits() {
		p.unexpected("a capitalised type name", "type names start with a capital letter: `type alias User = …`")
	}
	p.next()
	return Ident{Span: t.span(), Name: t.name}
}

// parseTypeAlias parses `type alias Name a = Type`.
func (p *parser) parseTypeAlias() *TypeAlias {
	start := p.next()
	p.next() // alias
	name := p.parseTypeName()
	params := p.parseTypeParams()
	p.expect(tEquals, "`=`", "a type alias is written `type alias Name = Type`")
	t := p.parseType()
	return &TypeAlias{Span: Span{start.pos, p.prevEnd()}, Name: name, Params: params, Type: t}
}

// parseCustomType parses `type Name a = A | B Int | C { x : Int }`.
func (p *parser) parseCustomType() *CustomType {
	start := p.next()
	name := p.parseTypeName()
	params := p.parseTypeParams()
	p.expect(tEquals, "`=`", "a custom type is written `type Name = A | B Int`")
	ct := &CustomType{Name: name, Params: params}
	for {
		c := p.tok
		if c.kind != tUpper || c.module != "" || !p.fits() {
			p.unexpected("a constructor name", "constructors start with a capital letter: `type Color = Red | Green`")
		}
		p.next()
		def := &CtorDef{Name: Ident{Span: c.span(), Name: c.name}}
		for p.fits() && p.startsTypeAtom(p.tok) {
			def.Args = append(def.Args, p.parseTypeAtom())
		}
		def.Span = p.span(c.pos)
		ct.Ctors = append(ct.Ctors, def)
		if p.tok.kind != tPipe || !p.fits() {
			break
		}
		p.next()
	}
	ct.Span = p.span(start.pos)
	return ct
}
