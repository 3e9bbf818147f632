// Package types is Sky's static checker: it resolves names across modules
// (imports, aliases, exposing lists, the implicit Prelude), infers and checks
// types with Hindley–Milner inference extended with extensible records and
// Elm's constrained type variables, and checks that every `case` is
// exhaustive and free of redundant patterns.
//
// The checker never mutates the AST: what it learns is recorded in an Info
// value's side tables keyed by AST node, which later phases (the evaluator)
// may read. Errors are values with positions; Check collects them all.
//
// It may import compiler/syntax, compiler/diag and the standard library;
// never compiler/eval or compiler/ffi (its corpus test, an external test
// package, reads the stdlib sources through compiler/ffi).
package types

import "skydurable/compiler/syntax"

// Type is a Sky type as the checker sees it. Implementations: *Var, *Con,
// *Fun, *Tuple, *Record and *Alias. Type variables are mutable cells that
// unification links to other types; Prune follows those links.
type Type interface {
	isType()
}

// Constraint is the class a constrained type variable ranges over, per Elm's
// rules for `number`, `comparable`, `appendable` and `compappend`.
type Constraint int

const (
	// NoConstraint: the variable may be any type.
	NoConstraint Constraint = iota
	// Number: Int or Float.
	Number
	// Comparable: Int, Float, Char, String, Bool (real Sky orders False before
	// True; Elm does not), and lists and tuples of comparables.
	Comparable
	// Appendable: String or List a.
	Appendable
	// CompAppend: both comparable and appendable (String or List comparable).
	CompAppend
)

// String returns the constraint's name as written in a type signature.
func (c Constraint) String() string {
	switch c {
	case Number:
		return "number"
	case Comparable:
		return "comparable"
	case Appendable:
		return "appendable"
	case CompAppend:
		return "compappend"
	}
	return ""
}

// constraintOf returns the constraint a type-variable name carries (`number`,
// `number1`, `comparableKey` all count, as in Elm).
func constraintOf(name string) Constraint {
	for _, c := range []Constraint{Number, Comparable, Appendable, CompAppend} {
		p := c.String()
		if len(name) >= len(p) && name[:len(p)] == p {
			return c
		}
	}
	return NoConstraint
}

// genericLevel marks a generalised (quantified) variable in a type scheme.
const genericLevel = 1 << 30

// Var is a type variable. A flexible variable may be bound by unification;
// a rigid one (from a type annotation) only equals itself.
type Var struct {
	id    int
	Link  Type // the type this variable was unified with, or nil
	Name  string
	Rigid bool
	Kind  Constraint
	level int
}

// Con is a named type constructor applied to arguments: Int, List a,
// Task Error a, or a custom type. Module is the defining module ("" for the
// builtin types), Name the unqualified name.
type Con struct {
	Module string
	Name   string
	Args   []Type
}

// Fun is a one-argument function type; `a -> b -> c` is Fun{a, Fun{b, c}}.
type Fun struct {
	Arg, Res Type
}

// Tuple is a tuple type; the unit type () is the tuple of no elements.
type Tuple struct {
	Elems []Type
}

// Record is a record type. Ext is nil for a closed record, or the row (a
// variable, possibly linked to another record) an extensible record extends.
type Record struct {
	Fields map[string]Type
	Ext    Type
}

// Alias is a use of a type alias: it keeps the alias name (so error messages
// say OrderId, not String) while Real is what it stands for.
type Alias struct {
	Module string
	Name   string
	Args   []Type
	Real   Type
}

func (*Var) isType()    {}
func (*Con) isType()    {}
func (*Fun) isType()    {}
func (*Tuple) isType()  {}
func (*Record) isType() {}
func (*Alias) isType()  {}

// Prune follows variable links to the type a variable currently stands for.
func Prune(t Type) Type {
	for {
		v, ok := t.(*Var)
		if !ok || v.Link == nil {
			return t
		}
		// Path compression keeps long chains from making lookups quadratic.
		if w, ok := v.Link.(*Var); ok && w.Link != nil {
			v.Link = w.Link
		}
		t = v.Link
	}
}

// unalias prunes t and looks through aliases to the underlying type.
func unalias(t Type) Type {
	for {
		t = Prune(t)
		a, ok := t.(*Alias)
		if !ok {
			return t
		}
		t = a.Real
	}
}

// Builtin type constructors, always in scope.
var (
	tInt    = &Con{Name: "Int"}
	tFloat  = &Con{Name: "Float"}
	tString = &Con{Name: "String"}
	tChar   = &Con{Name: "Char"}
	tBool   = &Con{Name: "Bool"}
	tUnit   = &Tuple{}
)

// builtinArity lists the builtin types and their number of parameters.
var builtinArity = map[string]int{
	"Int": 0, "Float": 0, "String": 0, "Char": 0, "Bool": 0,
	"List": 1, "Task": 2, "Cmd": 1, "Sub": 1, "Dict": 2,
}

func listOf(t Type) *Con { return &Con{Name: "List", Args: []Type{t}} }

func fn(args ...Type) Type {
	t := args[len(args)-1]
	for i := len(args) - 2; i >= 0; i-- {
		t = &Fun{Arg: args[i], Res: t}
	}
	return t
}

func isCon(t Type, name string) bool {
	c, ok := unalias(t).(*Con)
	return ok && c.Module == "" && c.Name == name
}

// Scheme is a possibly polymorphic type: the variables at the generic level
// inside Type are quantified and instantiated afresh at every use.
type Scheme struct {
	Type Type
}

// Pos aliases syntax.Pos for brevity in this package.
type Pos = syntax.Pos
