package syntax

import (
	"fmt"
	"strconv"
	"strings"
)

// Print renders a node in a fully parenthesised debug form, one line per
// declaration, so tests can assert the structure the parser built:
// `(f a b)` for applications, `(a + b)` for operators, `(-x)` for negation,
// `(\p -> e)`, `(let x = 1; y = 2 in e)`, `(case x of p -> e; q -> f)`,
// `(if c then a else b)`, `r.a`, `.a`, `(+)`, `(interp "text" x)`. Integer
// literals print in decimal (0xFF prints as 255). It is not a formatter.
func Print(n Node) string {
	var b strings.Builder
	pr := printer{&b}
	pr.node(n)
	return b.String()
}

type printer struct{ b *strings.Builder }

func (pr printer) w(parts ...string) {
	for _, s := range parts {
		pr.b.WriteString(s)
	}
}

func qualified(module, name string) string {
	if module == "" {
		return name
	}
	return module + "." + name
}

func (pr printer) node(n Node) {
	switch n := n.(type) {
	case nil:
		pr.w("<nil>")
	case *File:
		pr.file(n)
	case Decl:
		pr.decl(n)
	case Expr:
		pr.expr(n)
	case Pattern:
		pr.pat(n)
	case Type:
		pr.typ(n)
	case *Destructure:
		pr.pat(n.Pattern)
		pr.w(" = ")
		pr.expr(n.Body)
	default:
		fmt.Fprintf(pr.b, "<%T>", n)
	}
}

func (pr printer) file(f *File) {
	if f.Module != nil {
		pr.w("module ", f.Module.String(), " exposing ", exposingString(f.Exposing), "\n")
	}
	for _, im := range f.Imports {
		pr.w("import ", im.Module.String())
		if im.Alias != nil {
			pr.w(" as ", im.Alias.Name)
		}
		if im.Exposing != nil {
			pr.w(" exposing ", exposingString(im.Exposing))
		}
		pr.w("\n")
	}
	for _, d := range f.Decls {
		pr.decl(d)
		pr.w("\n")
	}
}

func exposingString(e *Exposing) string {
	if e == nil {
		return "<nil>"
	}
	if e.All {
		return "(..)"
	}
	var items []string
	for _, it := range e.Items {
		switch {
		case it.Kind == ExposeOperator:
			items = append(items, "("+it.Name+")")
		case it.Open && it.Ctors != nil:
			var ctors []string
			for _, c := range it.Ctors {
				ctors = append(ctors, c.Name)
			}
			items = append(items, it.Name+"("+strings.Join(ctors, ", ")+")")
		case it.Open:
			items = append(items, it.Name+"(..)")
		default:
			items = append(items, it.Name)
		}
	}
	return "(" + strings.Join(items, ", ") + ")"
}

func (pr printer) decl(d Decl) {
	switch d := d.(type) {
	case *ValueDecl:
		if d.Annotation != nil {
			pr.w(d.Annotation.Name.Name, " : ")
			pr.typ(d.Annotation.Type)
			pr.w("; ")
		}
		pr.w(d.Name.Name)
		for _, p := range d.Params {
			pr.w(" ")
			pr.pat(p)
		}
		pr.w(" = ")
		pr.expr(d.Body)
	case *TypeAlias:
		pr.w("type alias ", d.Name.Name)
		for _, p := range d.Params {
			pr.w(" ", p.Name)
		}
		pr.w(" = ")
		pr.typ(d.Type)
	case *CustomType:
		pr.w("type ", d.Name.Name)
		for _, p := range d.Params {
			pr.w(" ", p.Name)
		}
		pr.w(" =")
		for i, c := range d.Ctors {
			if i > 0 {
				pr.w(" |")
			}
			pr.w(" ", c.Name.Name)
			for _, a := range c.Args {
				pr.w(" ")
				pr.typ(a)
			}
		}
	}
}

func (pr printer) exprs(xs []Expr, sep string) {
	for i, x := range xs {
		if i > 0 {
			pr.w(sep)
		}
		pr.expr(x)
	}
}

func (pr printer) expr(e Expr) {
	switch e := e.(type) {
	case *Var:
		pr.w(qualified(e.Module, e.Name))
	case *Ctor:
		pr.w(qualified(e.Module, e.Name))
	case *IntLit:
		// uint64 prints the magnitude 9223372036854775808 held as MinInt64.
		pr.w(strconv.FormatUint(uint64(e.Value), 10))
	case *FloatLit:
		pr.w(strconv.FormatFloat(e.Value, 'g', -1, 64))
	case *CharLit:
		pr.w(strconv.QuoteRune(e.Value))
	case *StringLit:
		pr.w(strconv.Quote(e.Value))
	case *Interp:
		pr.w("(interp")
		for _, p := range e.Parts {
			pr.w(" ")
			pr.expr(p)
		}
		pr.w(")")
	case *App:
		pr.w("(")
		pr.expr(e.Fn)
		pr.w(" ")
		pr.exprs(e.Args, " ")
		pr.w(")")
	case *BinOp:
		pr.w("(")
		pr.expr(e.L)
		pr.w(" ", e.Op, " ")
		pr.expr(e.R)
		pr.w(")")
	case *OpFunc:
		pr.w("(", e.Op, ")")
	case *Neg:
		pr.w("(-")
		pr.expr(e.X)
		pr.w(")")
	case *Lambda:
		pr.w("(\\")
		for i, p := range e.Params {
			if i > 0 {
				pr.w(" ")
			}
			pr.pat(p)
		}
		pr.w(" -> ")
		pr.expr(e.Body)
		pr.w(")")
	case *Let:
		pr.w("(let ")
		for i, b := range e.Bindings {
			if i > 0 {
				pr.w("; ")
			}
			pr.node(b)
		}
		pr.w(" in ")
		pr.expr(e.Body)
		pr.w(")")
	case *Case:
		pr.w("(case ")
		pr.expr(e.Subject)
		pr.w(" of ")
		for i, br := range e.Branches {
			if i > 0 {
				pr.w("; ")
			}
			pr.pat(br.Pattern)
			pr.w(" -> ")
			pr.expr(br.Body)
		}
		pr.w(")")
	case *If:
		pr.w("(if ")
		pr.expr(e.Cond)
		pr.w(" then ")
		pr.expr(e.Then)
		pr.w(" else ")
		pr.expr(e.Else)
		pr.w(")")
	case *Tuple:
		pr.w("(")
		pr.exprs(e.Elems, ", ")
		pr.w(")")
	case *List:
		pr.w("[")
		pr.exprs(e.Elems, ", ")
		pr.w("]")
	case *Record:
		pr.w("{")
		pr.fields(e.Fields)
		pr.w("}")
	case *RecordUpdate:
		pr.w("{", e.Record.Name, " | ")
		pr.fields(e.Fields)
		pr.w("}")
	case *Access:
		pr.expr(e.Record)
		pr.w(".", e.Field.Name)
	case *Accessor:
		pr.w(".", e.Field)
	case *Unit:
		pr.w("()")
	default:
		fmt.Fprintf(pr.b, "<%T>", e)
	}
}

func (pr printer) fields(fs []*FieldInit) {
	for i, f := range fs {
		if i > 0 {
			pr.w(", ")
		}
		pr.w(f.Name.Name, " = ")
		pr.expr(f.Value)
	}
}

func (pr printer) pats(ps []Pattern, sep string) {
	for i, p := range ps {
		if i > 0 {
			pr.w(sep)
		}
		pr.pat(p)
	}
}

func (pr printer) pat(p Pattern) {
	switch p := p.(type) {
	case *WildcardPat:
		pr.w("_")
	case *VarPat:
		pr.w(p.Name)
	case *AliasPat:
		pr.w("(")
		pr.pat(p.Pattern)
		pr.w(" as ", p.Name.Name, ")")
	case *UnitPat:
		pr.w("()")
	case *TuplePat:
		pr.w("(")
		pr.pats(p.Elems, ", ")
		pr.w(")")
	case *ListPat:
		pr.w("[")
		pr.pats(p.Elems, ", ")
		pr.w("]")
	case *ConsPat:
		pr.w("(")
		pr.pat(p.Head)
		pr.w(" :: ")
		pr.pat(p.Tail)
		pr.w(")")
	case *CtorPat:
		if len(p.Args) == 0 {
			pr.w(qualified(p.Module, p.Name))
			return
		}
		pr.w("(", qualified(p.Module, p.Name), " ")
		pr.pats(p.Args, " ")
		pr.w(")")
	case *RecordPat:
		names := make([]string, len(p.Fields))
		for i, f := range p.Fields {
			names[i] = f.Name
		}
		pr.w("{", strings.Join(names, ", "), "}")
	case *IntPat:
		pr.w(strconv.FormatInt(p.Value, 10))
	case *FloatPat:
		pr.w(strconv.FormatFloat(p.Value, 'g', -1, 64))
	case *StringPat:
		pr.w(strconv.Quote(p.Value))
	case *CharPat:
		pr.w(strconv.QuoteRune(p.Value))
	default:
		fmt.Fprintf(pr.b, "<%T>", p)
	}
}

func (pr printer) typ(t Type) {
	switch t := t.(type) {
	case *TypeVar:
		pr.w(t.Name)
	case *TypeCon:
		if len(t.Args) == 0 {
			pr.w(qualified(t.Module, t.Name))
			return
		}
		pr.w("(", qualified(t.Module, t.Name))
		for _, a := range t.Args {
			pr.w(" ")
			pr.typ(a)
		}
		pr.w(")")
	case *FuncType:
		pr.w("(")
		pr.typ(t.Arg)
		pr.w(" -> ")
		pr.typ(t.Result)
		pr.w(")")
	case *TupleType:
		pr.w("(")
		for i, e := range t.Elems {
			if i > 0 {
				pr.w(", ")
			}
			pr.typ(e)
		}
		pr.w(")")
	case *RecordType:
		pr.w("{")
		if t.Ext != nil {
			pr.w(t.Ext.Name, " | ")
		}
		for i, f := range t.Fields {
			if i > 0 {
				pr.w(", ")
			}
			pr.w(f.Name.Name, " : ")
			pr.typ(f.Type)
		}
		pr.w("}")
	case *UnitType:
		pr.w("()")
	default:
		fmt.Fprintf(pr.b, "<%T>", t)
	}
}
