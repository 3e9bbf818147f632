package types

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"skydurable/compiler/syntax"
)

// A value stored as JSON (App.withDurable's model, the witness of a
// Codec.auto*) must be data: a function, a `Db` or another runtime handle
// cannot be encoded, and one that could be would be dead after a restart.
// The checker refuses such a type where it is fixed: at each use of these
// functions, once the module's inference settled the instantiated type.

// persistedUse is one use of a function whose Codec argument or result
// stores its type as JSON.
type persistedUse struct {
	x   *syntax.Var
	fn  string // "App.withDurable", "Codec.auto", ...
	typ Type   // the instantiated type of the function
}

// storesAsJSON names the function at module.name when it stores its
// Codec's type as JSON ("" otherwise).
func storesAsJSON(module, name string) string {
	switch {
	case module == "Std.App" && (name == "withDurable" || name == "withDurableId"):
		return "App." + name
	case module == "Std.Codec" && strings.HasPrefix(name, "auto"):
		return "Codec." + name
	}
	return ""
}

// runtimeHandles are the types whose values live in a running process
// only (module "" is a builtin type).
var runtimeHandles = map[string][]string{
	"":                     {"Task", "Cmd", "Sub"},
	"Std.Db":               {"Db"},
	"Std.Durable":          {"Ctx", "WorkflowDef", "RegisteredWorkflow"},
	"Std.Durable.Test":     {"Harness"},
	"Std.App":              {"App"},
	"Std.Codec":            {"Codec", "ObjectCodec", "Variant"},
	"Sky.Core.Json.Decode": {"Decoder"},
	"Std.Http.Server":      {"Route"},
	"Sky.Core.Process":     {"Process"},
}

func isRuntimeHandle(c *Con) bool {
	for _, n := range runtimeHandles[c.Module] {
		if n == c.Name {
			return true
		}
	}
	return false
}

// notePersisted remembers x when it names a function that stores a type as
// JSON; checkPersisted checks it at the end of the module.
func (c *checker) notePersisted(x syntax.Node, vi *ValueInfo, t Type) {
	v, ok := x.(*syntax.Var)
	if !ok {
		return
	}
	if fn := storesAsJSON(vi.Module, vi.Name); fn != "" {
		c.persisted = append(c.persisted, persistedUse{x: v, fn: fn, typ: t})
	}
}

// checkPersisted reports every remembered use whose stored type holds a
// function or a runtime handle.
func (c *checker) checkPersisted(m *moduleInfo) {
	c.checkAutoWitnesses(m)
	uses := c.persisted
	c.persisted = nil
	for _, u := range uses {
		stored := codecArg(u.typ)
		if stored == nil {
			continue
		}
		what, where, found := c.findUnstorable(stored, nil, map[*TypeInfo]bool{})
		if !found {
			continue
		}
		subject := "the model"
		if strings.HasPrefix(u.fn, "Codec.") {
			subject = "the witness"
		}
		at := ""
		if len(where) > 0 {
			at = " in " + strings.Join(where, ", in ")
		}
		c.errorAt(m, u.x.Range(), "NOT STORABLE AS JSON",
			"`"+u.fn+"` stores "+subject+" as JSON, but its type holds "+what+at+":",
			indent(c.printer().String(stored)),
			"Keep functions, `Db` and other runtime handles out of it: store the data they are made from (an id, a name, a setting) and rebuild them where they are used.")
	}
}

// autoWitness is the witness given to a Codec.auto* call.
type autoWitness struct {
	fn      string // "Codec.auto", "Codec.autoWith"
	witness syntax.Expr
	// written is the witness's definition when it names a value bound in
	// a let (`Codec.auto defaults` after `let defaults = { ... }`), named
	// name; else the witness itself.
	written syntax.Expr
	name    string
}

// noteAutoWitness remembers the witness of x when x calls Codec.auto or
// Codec.autoWith; checkPersisted checks it once the module's types settled.
// e is the scope of x, where a witness named by a let is looked up.
func (c *checker) noteAutoWitness(x *syntax.App, e *env) {
	ref, ok := c.info.Refs[x.Fn]
	if !ok || ref.Kind != RefTopLevel || ref.Module != "Std.Codec" {
		return
	}
	at, ok := map[string]int{"auto": 0, "autoWith": 1}[ref.Name]
	if !ok || at >= len(x.Args) {
		return
	}
	u := autoWitness{fn: "Codec." + ref.Name, witness: x.Args[at], written: x.Args[at]}
	if v, ok := u.witness.(*syntax.Var); ok && c.info.Refs[v].Kind == RefLocal {
		if d := e.letDecl(v.Name); d != nil && len(d.Params) == 0 {
			u.written, u.name = d.Body, v.Name
		}
	}
	c.autoWitnesses = append(c.autoWitnesses, u)
}

// checkAutoWitnesses refuses an Int literal where a witness's type says
// Float: Codec.auto* reads each field's JSON type off the witness's value
// at run time, so `price = 0` in a witness of `{ price : Float }` would make
// an Int field, and Codec.toJson would fail on 1.5. A witness given by the
// name of a value (`Codec.auto defaults`) is the literal that defines it,
// checked against the type the call gives it; a literal reached from two
// calls is reported once.
func (c *checker) checkAutoWitnesses(m *moduleInfo) {
	uses := c.autoWitnesses
	c.autoWitnesses = nil
	for _, u := range uses {
		start := witnessPart{file: m.file, name: u.name}
		c.intsForFloats(u.written, c.info.TypeOf(u.witness), start, map[*syntax.ValueDecl]bool{}, func(lit syntax.Expr, at witnessPart) {
			if c.floatLits[lit] {
				return
			}
			c.floatLits[lit] = true
			text := intLitText(lit)
			name := "a Float element"
			fix := text + ".0"
			if at.field != "" {
				name = "the Float field `" + at.field + "`"
			}
			if at.fieldValue {
				fix = at.field + " = " + text + ".0"
			}
			message := "The witness of `" + u.fn + "` gives " + name + " the Int `" + text + "`:"
			if at.name != "" {
				p := u.witness.Range().Start
				message = fmt.Sprintf("The witness of `%s` at %s:%d:%d gives %s the Int `%s` (through `%s`):",
					u.fn, m.file.Name, p.Line, p.Col, name, text, at.name)
			}
			c.errorIn(at.file, lit.Range(), "FLOAT WRITTEN AS AN INT", message,
				"`"+u.fn+"` reads the JSON type of each field off the witness's value, and `"+text+"` is an Int, so the codec would read and write it as an Int and fail on a Float such as 1.5.",
				"Write it with a decimal point: `"+fix+"`.")
		})
	}
}

// witnessPart is where a part of a witness is written: the file, the name
// of the value it was reached through ("" when it is written in the call),
// and the field it is in ("" outside a record), of which it is the value
// itself when fieldValue is set.
type witnessPart struct {
	file       *syntax.File
	name       string
	field      string
	fieldValue bool
}

// intsForFloats calls report with each Int literal (or negated one) of a
// witness e where its type t says Float, and where it is, looking through
// record, tuple and list literals, `Just` and the names of the program's
// top-level values that take no arguments (seen holds those on the way, so
// a cycle ends).
func (c *checker) intsForFloats(e syntax.Expr, t Type, at witnessPart, seen map[*syntax.ValueDecl]bool, report func(lit syntax.Expr, at witnessPart)) {
	t = unalias(t)
	inner := at
	inner.fieldValue = false
	switch e := e.(type) {
	case *syntax.Record:
		var fields map[string]Type
		if r, ok := t.(*Record); ok {
			fields, _ = flatten(r)
		}
		for _, f := range e.Fields {
			inner.field, inner.fieldValue = f.Name.Name, true
			c.intsForFloats(f.Value, fields[f.Name.Name], inner, seen, report)
		}
	case *syntax.Tuple:
		tt, _ := t.(*Tuple)
		for i, x := range e.Elems {
			var elem Type
			if tt != nil && i < len(tt.Elems) {
				elem = tt.Elems[i]
			}
			c.intsForFloats(x, elem, inner, seen, report)
		}
	case *syntax.List:
		for _, x := range e.Elems {
			c.intsForFloats(x, typeArg(t, "List"), inner, seen, report)
		}
	case *syntax.App:
		if ct, ok := e.Fn.(*syntax.Ctor); ok && ct.Name == "Just" && len(e.Args) == 1 {
			c.intsForFloats(e.Args[0], typeArg(t, "Maybe"), inner, seen, report)
		}
	case *syntax.Var:
		ref := c.info.Refs[e]
		vi := c.info.Values[ref.Module][ref.Name]
		if ref.Kind != RefTopLevel || isStdlibModule(ref.Module) || vi == nil || vi.Decl == nil ||
			len(vi.Decl.Params) > 0 || seen[vi.Decl] {
			return
		}
		seen[vi.Decl] = true
		inner.file = c.prog.Modules[ref.Module]
		if inner.name == "" {
			inner.name = writtenName(e)
		}
		c.intsForFloats(vi.Decl.Body, t, inner, seen, report)
		delete(seen, vi.Decl)
	case *syntax.IntLit, *syntax.Neg:
		if intLitText(e) != "" && isCon(t, "Float") {
			report(e, at)
		}
	}
}

// typeArg is the argument of t when t is the one-argument type name
// (`List a`, `Maybe a`), else nil.
func typeArg(t Type, name string) Type {
	if con, ok := unalias(t).(*Con); ok && con.Name == name && len(con.Args) == 1 {
		return con.Args[0]
	}
	return nil
}

// intLitText is an Int literal in decimal, negated when it is (`-1`), or ""
// for any other expression.
func intLitText(e syntax.Expr) string {
	switch e := e.(type) {
	case *syntax.IntLit:
		return strconv.FormatInt(e.Value, 10)
	case *syntax.Neg:
		if lit, ok := e.X.(*syntax.IntLit); ok {
			return "-" + strconv.FormatInt(lit.Value, 10)
		}
	}
	return ""
}

// codecArg is the `a` of the first `Codec a` in a function type's
// parameters or result.
func codecArg(t Type) Type {
	params, res := uncurry(t)
	for _, p := range append(params, res) {
		if c, ok := unalias(p).(*Con); ok && c.Module == "Std.Codec" && c.Name == "Codec" && len(c.Args) == 1 {
			return c.Args[0]
		}
	}
	return nil
}

// findUnstorable looks through t for a function or a runtime handle and
// says what it is and where (field and constructor names, outermost first).
func (c *checker) findUnstorable(t Type, where []string, seen map[*TypeInfo]bool) (string, []string, bool) {
	p := c.printer()
	switch t := Prune(t).(type) {
	case *Alias:
		return c.findUnstorable(t.Real, where, seen)
	case *Fun:
		return "a function (`" + p.String(t) + "`)", where, true
	case *Tuple:
		for i, e := range t.Elems {
			if w, at, ok := c.findUnstorable(e, append(where, "the "+ordinal(i+1)+" element of a tuple"), seen); ok {
				return w, at, true
			}
		}
	case *Record:
		names := make([]string, 0, len(t.Fields))
		for n := range t.Fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if w, at, ok := c.findUnstorable(t.Fields[n], append(where, "field `"+n+"`"), seen); ok {
				return w, at, true
			}
		}
		if t.Ext != nil {
			return c.findUnstorable(t.Ext, where, seen)
		}
	case *Con:
		if isRuntimeHandle(t) {
			return "a runtime handle (`" + p.String(t) + "`)", where, true
		}
		for _, a := range t.Args {
			if w, at, ok := c.findUnstorable(a, where, seen); ok {
				return w, at, true
			}
		}
		ti := c.typeInfoOf(t)
		if ti == nil || ti.IsAlias || seen[ti] {
			return "", nil, false
		}
		seen[ti] = true
		sub := map[*Var]Type{}
		for i, v := range ti.ParamVars {
			if i < len(t.Args) {
				sub[v] = t.Args[i]
			}
		}
		for _, ct := range ti.Ctors {
			for _, a := range ct.Args {
				if w, at, ok := c.findUnstorable(substitute(a, sub), append(where, "constructor `"+ct.Name+"` of `"+ti.Name+"`"), seen); ok {
					return w, at, true
				}
			}
		}
	}
	return "", nil, false
}

// typeInfoOf is the declaration of a custom type (nil for a builtin).
func (c *checker) typeInfoOf(t *Con) *TypeInfo {
	m := c.modules[t.Module]
	if m == nil {
		return nil
	}
	return m.types[t.Name]
}
