// Package syntax turns Sky source text into an abstract syntax tree: a lexer
// with positions, the column-based layout (off-side) rule, a recursive-descent
// parser and Elm-style error messages with source snippets.
//
// The AST is plain data. Every node carries a Span (start and end position) so
// later phases can point at it; later phases record facts in side tables keyed
// by node pointer and never mutate the tree.
//
// Choices the later phases rely on:
//   - Operators stay BinOp nodes (nothing is desugared, not even `|>`, `&&`
//     or `::`); precedence and associativity are resolved by the parser.
//   - Parentheses leave no node: `(e)` is e (its Span excludes the parens).
//   - `"""…"""` strings without `{{…}}` are a StringLit with Multiline set;
//     with interpolation they are an Interp node (see Interp.Desugar).
//   - `-x` is Neg{x}, also for literals (`-1` is Neg of IntLit 1), except in
//     patterns, where `-1` is an IntPat with Value -1.
//   - An annotation is attached to its ValueDecl; a lone annotation is a
//     syntax error. FFI bindings are ordinary ValueDecls (see ValueDecl).
//   - Doc comments attach to the next top-level declaration; the one right
//     after the module header is the module's (File.Docs).
//
// It may import compiler/diag and the standard library; never the phases
// after it (compiler/types, compiler/eval).
package syntax

import "strings"

// Pos is a position in a source file. Line and Col are 1-based; Col counts a
// tab as advancing to the next multiple of 4 columns (plus one), which is the
// column the layout rule uses. Offset is the 0-based byte offset in the source,
// which the error renderer uses to find the line.
type Pos struct {
	File   string
	Line   int
	Col    int
	Offset int
}

// IsValid reports whether p was set (Line is 1-based, so 0 means unknown).
func (p Pos) IsValid() bool { return p.Line > 0 }

// Span is the extent of a node: Start is its first character, End is just
// after its last character (same line and the column after, for one-line
// nodes). Every node embeds a Span.
type Span struct {
	Start Pos
	End   Pos
}

// Range returns the span itself; embedding Span gives every node the Node
// interface.
func (s Span) Range() Span { return s }

// Node is implemented by every AST node.
type Node interface {
	Range() Span
}

// Expr is an expression node. Implementations: *Var, *Ctor, *IntLit,
// *FloatLit, *CharLit, *StringLit, *Interp, *App, *BinOp, *OpFunc, *Neg,
// *Lambda, *Let, *Case, *If, *Tuple, *List, *Record, *RecordUpdate, *Access,
// *Accessor, *Unit.
type Expr interface {
	Node
	exprNode()
}

// Pattern is a pattern node. Implementations: *WildcardPat, *VarPat,
// *AliasPat, *UnitPat, *TuplePat, *ListPat, *ConsPat, *CtorPat, *RecordPat,
// *IntPat, *FloatPat, *StringPat, *CharPat.
type Pattern interface {
	Node
	patternNode()
}

// Type is a type-expression node. Implementations: *TypeVar, *TypeCon,
// *FuncType, *TupleType, *RecordType, *UnitType.
type Type interface {
	Node
	typeNode()
}

// Decl is a top-level declaration. Implementations: *ValueDecl, *TypeAlias,
// *CustomType.
type Decl interface {
	Node
	declNode()
}

// LetBinding is one binding of a let block. Implementations: *ValueDecl (a
// named value or function, optionally annotated) and *Destructure (a pattern
// binding such as `( a, b ) = pair` or `_ = task`).
type LetBinding interface {
	Node
	letBinding()
}

// Ident is a name together with where it was written.
type Ident struct {
	Span
	Name string
}

// ModuleName is a dotted module name such as Std.Durable.
type ModuleName struct {
	Span
	Parts []string
}

// String returns the dotted form, e.g. "Std.Durable".
func (m ModuleName) String() string { return strings.Join(m.Parts, ".") }

// DocComment is a `{-| ... -}` comment. Text is the content between the
// delimiters, without the leading `|`, exactly as written.
type DocComment struct {
	Span
	Text string
}

// File is one parsed source file.
type File struct {
	Span
	// Name is the file name given to ParseFile.
	Name string
	// Module is the declared module name, or nil when the file has no
	// `module` header (which exposes everything).
	Module *ModuleName
	// Exposing is the header's exposing list; nil when there is no header.
	Exposing *Exposing
	// Docs is the module documentation: a doc comment between the module
	// header and the first import or declaration. Nil when absent.
	Docs *DocComment
	// Imports in source order.
	Imports []*Import
	// Decls in source order. A declaration's annotation is attached to it.
	Decls []Decl
}

// Exposing is an exposing list, `exposing (..)` or `exposing (a, T, U(..))`.
type Exposing struct {
	Span
	// All is true for `exposing (..)`; Items is then empty.
	All   bool
	Items []*ExposedItem
}

// ExposeKind says what an exposed item names.
type ExposeKind int

const (
	// ExposeValue is a lower-case value or function name, e.g. `println`.
	ExposeValue ExposeKind = iota
	// ExposeType is a type name, e.g. `Db`, or `SqlValue(..)` with Open set.
	ExposeType
	// ExposeOperator is an operator in parentheses, e.g. `(|>)`.
	ExposeOperator
)

// ExposedItem is one entry of an exposing list.
type ExposedItem struct {
	Span
	Kind ExposeKind
	// Name is the value, type or operator name (operators without parens).
	Name string
	// Open is true for `T(..)` or `T(A, B)`: constructors are exposed too.
	Open bool
	// Ctors lists the constructors of `T(A, B)`; nil for `T(..)` (all).
	Ctors []*Ident
}

// ExposesCtor reports whether the item exposes the constructor name: every
// constructor for `T(..)`, the listed ones for `T(A, B)`.
func (it *ExposedItem) ExposesCtor(name string) bool {
	if !it.Open {
		return false
	}
	if it.Ctors == nil {
		return true
	}
	for _, c := range it.Ctors {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Import is `import A.B as C exposing (...)`.
type Import struct {
	Span
	Module ModuleName
	// Alias is the `as` name, or nil when absent. Real Sky's `as _` is the
	// name "_": no qualifier anyone can write, so only Exposing binds names.
	Alias *Ident
	// Exposing is nil when the import has no exposing list.
	Exposing *Exposing
	// Written is the module name as the source wrote it when the loader
	// rewrote Module (an Elm short name, a stdlib alias), else empty; an
	// import without Alias qualifies by it too.
	Written string
}

// Annotation is a type signature `name : Type`.
type Annotation struct {
	Span
	Name Ident
	Type Type
}

// ValueDecl is a value or function definition `name p1 p2 = body`, at top
// level or inside a let. An FFI binding is an ordinary ValueDecl whose Body is
// the application `Ffi.kernel "Name"`; the loader recognises it.
type ValueDecl struct {
	Span
	// Doc is the doc comment before the declaration (top level only).
	Doc *DocComment
	// Annotation is the signature written before the definition, or nil.
	Annotation *Annotation
	Name       Ident
	// Params are the argument patterns, e.g. `(Ctx c)` in `conn (Ctx c) = ...`.
	Params []Pattern
	Body   Expr
}

// TypeAlias is `type alias Name a b = Type`.
type TypeAlias struct {
	Span
	Doc    *DocComment
	Name   Ident
	Params []Ident
	Type   Type
}

// CustomType is `type Name a = A | B Int | C { x : Int }`.
type CustomType struct {
	Span
	Doc    *DocComment
	Name   Ident
	Params []Ident
	Ctors  []*CtorDef
}

// CtorDef is one constructor of a custom type with its argument types.
type CtorDef struct {
	Span
	Name Ident
	Args []Type
}

// Destructure is a let binding of a pattern, `( a, b ) = pair` or `_ = task`.
type Destructure struct {
	Span
	Pattern Pattern
	Body    Expr
}

func (*ValueDecl) declNode()     {}
func (*TypeAlias) declNode()     {}
func (*CustomType) declNode()    {}
func (*ValueDecl) letBinding()   {}
func (*Destructure) letBinding() {}

// ---- Expressions ----

// Var is a lower-case name, optionally qualified: `x`, `Durable.step`
// (Module "Durable"), `Sky.Core.List.map` (Module "Sky.Core.List").
type Var struct {
	Span
	// Module is the qualifier as written, "" when unqualified.
	Module string
	Name   string
}

// Ctor is an upper-case name used as a value: a constructor (`Just`,
// `Durable.FailSafe`) or a record alias used as a constructor (`R 1 2`).
type Ctor struct {
	Span
	Module string
	Name   string
}

// IntLit is an integer literal; Raw keeps the spelling (e.g. "0xFF"). Value
// is never negative except for the operand of `-9223372036854775808`, whose
// Value is math.MinInt64 (negating it gives the smallest Int again).
type IntLit struct {
	Span
	Value int64
	Raw   string
}

// FloatLit is a float literal such as 1.5 or 1e-3.
type FloatLit struct {
	Span
	Value float64
	Raw   string
}

// CharLit is a character literal 'c' with escapes resolved.
type CharLit struct {
	Span
	Value rune
}

// StringLit is a string literal with escapes resolved. Multiline is true for
// a `"""…"""` string without interpolation (its content is raw).
type StringLit struct {
	Span
	Value     string
	Multiline bool
}

// Interp is a `"""…"""` multi-line string containing `{{expr}}`
// interpolations. The parser keeps it as a node (it does not desugar): Parts
// alternate literal text (*StringLit) and interpolated expressions (*Var,
// *Access or *App), in source order; empty literal parts are omitted. Its
// meaning is the `++` concatenation of the parts, each of which must be a
// String; Desugar builds that chain.
type Interp struct {
	Span
	Parts []Expr
}

// Desugar returns the equivalent `++` chain (right-nested, as `++` is
// right-associative), or an empty StringLit when there are no parts.
func (n *Interp) Desugar() Expr {
	if len(n.Parts) == 0 {
		return &StringLit{Span: n.Span, Multiline: true}
	}
	out := n.Parts[len(n.Parts)-1]
	for i := len(n.Parts) - 2; i >= 0; i-- {
		l := n.Parts[i]
		out = &BinOp{Span: Span{l.Range().Start, out.Range().End}, Op: "++", OpSpan: n.Span, L: l, R: out}
	}
	return out
}

// App is function application `f a b`: Fn applied to Args left to right
// (never empty). `f a b` is one App with two Args, not nested Apps.
type App struct {
	Span
	Fn   Expr
	Args []Expr
}

// BinOp is a binary operator application, kept as written (not desugared):
// arithmetic, comparison, `&&`/`||` (short-circuit), `++`, `::`, `|>`, `<|`,
// `>>`, `<<`. Precedence and associativity are already resolved in the tree.
type BinOp struct {
	Span
	Op     string
	OpSpan Span
	L, R   Expr
}

// OpFunc is an operator used as a function, `(+)` or `(::)`.
type OpFunc struct {
	Span
	Op string
}

// Neg is numeric negation `-x` (also `f -1`, which parses as `f (-1)`). A
// negated numeric literal is kept as Neg of the literal.
type Neg struct {
	Span
	X Expr
}

// Lambda is `\p q -> body`; Params are patterns (at least one).
type Lambda struct {
	Span
	Params []Pattern
	Body   Expr
}

// Let is `let bindings in body`. Bindings may refer to each other.
type Let struct {
	Span
	Bindings []LetBinding
	Body     Expr
}

// Case is `case subject of` followed by aligned branches.
type Case struct {
	Span
	Subject  Expr
	Branches []*CaseBranch
}

// CaseBranch is one `pattern -> body` arm of a case.
type CaseBranch struct {
	Span
	Pattern Pattern
	Body    Expr
}

// If is `if c then a else b`; an else-if chain nests in Else.
type If struct {
	Span
	Cond, Then, Else Expr
}

// Tuple is `( a, b )` or `( a, b, c )`.
type Tuple struct {
	Span
	Elems []Expr
}

// List is `[ a, b, c ]`.
type List struct {
	Span
	Elems []Expr
}

// FieldInit is `name = value` inside a record literal or update.
type FieldInit struct {
	Span
	Name  Ident
	Value Expr
}

// Record is a record literal `{ x = 1, y = 2 }` (fields in source order).
type Record struct {
	Span
	Fields []*FieldInit
}

// RecordUpdate is `{ r | x = 2 }`; Record is the (unqualified) variable.
type RecordUpdate struct {
	Span
	Record *Var
	Fields []*FieldInit
}

// Access is field access `r.a` or `(expr).a`; `r.a.b` nests two Access nodes.
type Access struct {
	Span
	Record Expr
	Field  Ident
}

// Accessor is the field accessor function `.field`.
type Accessor struct {
	Span
	Field string
}

// Unit is the unit value `()`.
type Unit struct {
	Span
}

func (*Var) exprNode()          {}
func (*Ctor) exprNode()         {}
func (*IntLit) exprNode()       {}
func (*FloatLit) exprNode()     {}
func (*CharLit) exprNode()      {}
func (*StringLit) exprNode()    {}
func (*Interp) exprNode()       {}
func (*App) exprNode()          {}
func (*BinOp) exprNode()        {}
func (*OpFunc) exprNode()       {}
func (*Neg) exprNode()          {}
func (*Lambda) exprNode()       {}
func (*Let) exprNode()          {}
func (*Case) exprNode()         {}
func (*If) exprNode()           {}
func (*Tuple) exprNode()        {}
func (*List) exprNode()         {}
func (*Record) exprNode()       {}
func (*RecordUpdate) exprNode() {}
func (*Access) exprNode()       {}
func (*Accessor) exprNode()     {}
func (*Unit) exprNode()         {}

// ---- Patterns ----

// WildcardPat is `_`.
type WildcardPat struct {
	Span
}

// VarPat binds a lower-case name.
type VarPat struct {
	Span
	Name string
}

// AliasPat is `pattern as name`.
type AliasPat struct {
	Span
	Pattern Pattern
	Name    Ident
}

// UnitPat is `()`.
type UnitPat struct {
	Span
}

// TuplePat is `( a, b )` or `( a, b, c )`.
type TuplePat struct {
	Span
	Elems []Pattern
}

// ListPat is a list literal pattern `[ a, b ]` (`[]` has no Elems).
type ListPat struct {
	Span
	Elems []Pattern
}

// ConsPat is `head :: tail` (right-associative).
type ConsPat struct {
	Span
	Head, Tail Pattern
}

// CtorPat is a constructor pattern, optionally qualified, with argument
// patterns: `Just x`, `Durable.FailSafe`, `True`.
type CtorPat struct {
	Span
	Module string
	Name   string
	Args   []Pattern
}

// RecordPat is `{ a, b }`: binds the named fields.
type RecordPat struct {
	Span
	Fields []Ident
}

// IntPat is an Int literal pattern (may be negative, `-1`).
type IntPat struct {
	Span
	Value int64
	Raw   string
}

// FloatPat is a Float literal pattern.
type FloatPat struct {
	Span
	Value float64
	Raw   string
}

// StringPat is a String literal pattern.
type StringPat struct {
	Span
	Value string
}

// CharPat is a Char literal pattern.
type CharPat struct {
	Span
	Value rune
}

func (*WildcardPat) patternNode() {}
func (*VarPat) patternNode()      {}
func (*AliasPat) patternNode()    {}
func (*UnitPat) patternNode()     {}
func (*TuplePat) patternNode()    {}
func (*ListPat) patternNode()     {}
func (*ConsPat) patternNode()     {}
func (*CtorPat) patternNode()     {}
func (*RecordPat) patternNode()   {}
func (*IntPat) patternNode()      {}
func (*FloatPat) patternNode()    {}
func (*StringPat) patternNode()   {}
func (*CharPat) patternNode()     {}

// ---- Types ----

// TypeVar is a lower-case type variable such as `a` or `comparable`.
type TypeVar struct {
	Span
	Name string
}

// TypeCon is a named type applied to arguments: `Int`, `List a`,
// `Task Error ()`, `Durable.Ctx` (Module "Durable").
type TypeCon struct {
	Span
	Module string
	Name   string
	Args   []Type
}

// FuncType is `Arg -> Result`; `a -> b -> c` nests to the right.
type FuncType struct {
	Span
	Arg, Result Type
}

// TupleType is `( a, b )` or `( a, b, c )`.
type TupleType struct {
	Span
	Elems []Type
}

// FieldType is `name : Type` inside a record type.
type FieldType struct {
	Span
	Name Ident
	Type Type
}

// RecordType is `{ a : Int }` or the extensible `{ r | a : Int }` (Ext set).
type RecordType struct {
	Span
	// Ext is the row variable of an extensible record, or nil.
	Ext    *Ident
	Fields []*FieldType
}

// UnitType is `()`.
type UnitType struct {
	Span
}

func (*TypeVar) typeNode()    {}
func (*TypeCon) typeNode()    {}
func (*FuncType) typeNode()   {}
func (*TupleType) typeNode()  {}
func (*RecordType) typeNode() {}
func (*UnitType) typeNode()   {}
