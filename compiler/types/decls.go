package types

import (
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// isStdlibModule reports whether a module belongs to Sky's stdlib, whose
// declarations of the builtin type names (Task, Dict, Cmd, Sub) are the
// builtin types themselves.
func isStdlibModule(name string) bool {
	return strings.HasPrefix(name, "Sky.") || strings.HasPrefix(name, "Std.")
}

// declareTypes registers the module's custom types and aliases by name.
func (c *checker) declareTypes(m *moduleInfo) {
	for _, d := range m.file.Decls {
		var name syntax.Ident
		var params []syntax.Ident
		ti := &TypeInfo{Module: m.name, decl: d}
		switch d := d.(type) {
		case *syntax.TypeAlias:
			name, params = d.Name, d.Params
			ti.IsAlias = true
		case *syntax.CustomType:
			name, params = d.Name, d.Params
			if ar, ok := builtinArity[d.Name.Name]; ok && isStdlibModule(m.name) && ar == len(d.Params) {
				ti.Module = ""
			}
		default:
			continue
		}
		ti.Name = name.Name
		for _, p := range params {
			ti.Params = append(ti.Params, p.Name)
			v := &Var{Name: p.Name, level: genericLevel, Kind: constraintOf(p.Name)}
			ti.ParamVars = append(ti.ParamVars, v)
		}
		if prev := m.types[name.Name]; prev != nil {
			c.errorAt(m, name.Span, "DUPLICATE TYPE", "There are multiple types named `"+name.Name+"` in this module:",
				"", "Rename one of them.")
			continue
		}
		m.types[name.Name] = ti
	}
}

// resolveTypes resolves the definitions of the module's types and declares
// the constructors.
func (c *checker) resolveTypes(m *moduleInfo) {
	for _, d := range m.file.Decls {
		var name string
		switch d := d.(type) {
		case *syntax.TypeAlias:
			name = d.Name.Name
		case *syntax.CustomType:
			name = d.Name.Name
		default:
			continue
		}
		if ti := m.types[name]; ti != nil && ti.decl == d {
			c.resolveTypeInfo(ti)
		}
	}
}

func (c *checker) resolveTypeInfo(ti *TypeInfo) {
	if ti.resolved {
		return
	}
	if ti.resolving {
		d := ti.decl.(*syntax.TypeAlias)
		c.errorf(d.Name, "ALIAS PROBLEM", "The type alias `"+ti.Name+"` refers to itself:", "",
			"A type alias is only a shorter name; a recursive type needs a custom type, e.g. `type "+
				ti.Name+" = "+ti.Name+" { ... }`.")
		ti.Body = &Var{level: genericLevel}
		ti.resolved = true
		return
	}
	ti.resolving = true
	vars := map[string]*Var{}
	for i, p := range ti.Params {
		vars[p] = ti.ParamVars[i]
	}
	switch d := ti.decl.(type) {
	case *syntax.TypeAlias:
		ti.Body = c.convertType(d.Type, vars, declVars)
		if r, ok := d.Type.(*syntax.RecordType); ok && r.Ext == nil {
			for _, f := range r.Fields {
				ti.RecordCtor = append(ti.RecordCtor, f.Name.Name)
			}
		}
		if !ti.resolved {
			ti.resolved = true
		}
	case *syntax.CustomType:
		ti.resolved = true
		self := &Con{Module: ti.Module, Name: ti.Name}
		for _, v := range ti.ParamVars {
			self.Args = append(self.Args, v)
		}
		for _, cd := range d.Ctors {
			ct := &CtorInfo{Module: c.mod.name, Name: cd.Name.Name, Type: ti, Arity: len(cd.Args)}
			var args []Type
			for _, a := range cd.Args {
				args = append(args, c.convertType(a, vars, declVars))
			}
			ct.Args = args
			ct.Scheme = Scheme{Type: fn(append(append([]Type{}, args...), self)...)}
			if prev := c.mod.ctors[ct.Name]; prev != nil {
				c.errorf(cd.Name, "DUPLICATE CONSTRUCTOR", "There are multiple constructors named `"+ct.Name+
					"` in this module:", "", "Rename one of them.")
				continue
			}
			c.mod.ctors[ct.Name] = ct
			ti.Ctors = append(ti.Ctors, ct)
		}
	}
	ti.resolving = false
}

// varMode says how convertType treats type variables it has not seen.
type varMode int

const (
	declVars       varMode = iota // only the declared parameters are allowed
	annotationVars                // new names become fresh variables
)

// convertType turns a written type into a Type. vars maps names already
// bound; in annotationVars mode new names are added to it.
func (c *checker) convertType(t syntax.Type, vars map[string]*Var, mode varMode) Type {
	switch t := t.(type) {
	case *syntax.TypeVar:
		return c.typeVar(t.Name, t, vars, mode)
	case *syntax.UnitType:
		return tUnit
	case *syntax.FuncType:
		return &Fun{Arg: c.convertType(t.Arg, vars, mode), Res: c.convertType(t.Result, vars, mode)}
	case *syntax.TupleType:
		el := make([]Type, len(t.Elems))
		for i, e := range t.Elems {
			el[i] = c.convertType(e, vars, mode)
		}
		return &Tuple{Elems: el}
	case *syntax.RecordType:
		r := &Record{Fields: map[string]Type{}}
		for _, f := range t.Fields {
			if _, dup := r.Fields[f.Name.Name]; dup {
				c.errorf(f.Name, "DUPLICATE FIELD", "This record type has more than one `"+f.Name.Name+"` field:", "", "")
			}
			r.Fields[f.Name.Name] = c.convertType(f.Type, vars, mode)
		}
		if t.Ext != nil {
			r.Ext = c.typeVar(t.Ext.Name, t.Ext, vars, mode)
		}
		return r
	case *syntax.TypeCon:
		ti := c.lookupType(t)
		if ti != nil && len(t.Args) > len(ti.Params) {
			t = c.regroupTypeArgs(t, len(ti.Params))
		}
		args := make([]Type, len(t.Args))
		for i, a := range t.Args {
			args[i] = c.convertType(a, vars, mode)
		}
		if ti == nil {
			return c.unknownTypeVar()
		}
		if len(args) != len(ti.Params) {
			c.errorf(t, "TOO MANY ARGS", "The `"+ti.Name+"` type needs "+plural(len(ti.Params), "argument", "arguments")+
				", but I see "+plural(len(args), "argument", "arguments")+" here:", "", typeArityHint(ti))
			return c.u.fresh()
		}
		if ti.IsAlias {
			if !ti.resolved {
				c.resolveTypeInfo(ti)
			}
			sub := map[*Var]Type{}
			for i, v := range ti.ParamVars {
				sub[v] = args[i]
			}
			return &Alias{Module: ti.Module, Name: ti.Name, Args: args, Real: substitute(ti.Body, sub)}
		}
		return &Con{Module: ti.Module, Name: ti.Name, Args: args}
	}
	return c.u.fresh()
}

// regroupTypeArgs reads an over-applied type the way real Sky's checker
// does: `Result Error List Row` has three arguments where Result takes two,
// and its bare `List` still wants one, so `List` takes the argument after it
// and the annotation means `Result Error (List Row)`. It returns t unchanged
// unless the regrouping gives exactly want arguments, and warns where it
// applies (write the parentheses).
func (c *checker) regroupTypeArgs(t *syntax.TypeCon, want int) *syntax.TypeCon {
	var out []syntax.Type
	rest := t.Args
	for len(rest) > 0 {
		a := rest[0]
		rest = rest[1:]
		if con, ok := a.(*syntax.TypeCon); ok && len(con.Args) == 0 {
			if n := c.typeArity(con); n > 0 && len(rest) >= n && len(out)+1+len(rest)-n >= want {
				grouped := &syntax.TypeCon{Span: syntax.Span{Start: con.Start, End: rest[n-1].Range().End}, Module: con.Module, Name: con.Name, Args: rest[:n]}
				a, rest = grouped, rest[n:]
			}
		}
		out = append(out, a)
	}
	if len(out) != want {
		return t
	}
	src := c.prog.Sources[c.mod.file.Name]
	texts := []string{t.Name}
	for _, a := range out {
		sp := a.Range()
		if sp.End.Offset > len(src) || sp.Start.Offset > sp.End.Offset {
			texts = append(texts, "…")
			continue
		}
		text := src[sp.Start.Offset:sp.End.Offset]
		if con, ok := a.(*syntax.TypeCon); ok && len(con.Args) > 0 {
			text = "(" + text + ")"
		}
		texts = append(texts, text)
	}
	c.warnf(t, "WARNING: MISSING PARENTHESES", "This type gives `"+t.Name+"` more arguments than it takes, so I read it as real Sky does:",
		"", "Write the parentheses: `"+strings.Join(texts, " ")+"`.")
	return &syntax.TypeCon{Span: t.Span, Module: t.Module, Name: t.Name, Args: out}
}

// typeArity is the number of parameters of the type a bare name refers to,
// looked up without reporting anything (0 when it is not known here).
func (c *checker) typeArity(t *syntax.TypeCon) int {
	if t.Module != "" {
		return 0
	}
	ti := c.mod.types[t.Name]
	if ti == nil && len(c.sc.types[t.Name]) == 1 {
		ti = c.sc.types[t.Name][0]
	}
	if ti == nil {
		ti = c.sc.ptypes[t.Name]
	}
	if ti == nil {
		ti = builtinTypes[t.Name]
	}
	if ti == nil {
		return 0
	}
	return len(ti.Params)
}

// unknownTypeVar stands for a type that was reported (an unknown name, or
// one from an import that does not exist): a flexible variable that is
// never generalised, so an annotation using it is not checked as "any type"
// and the code using its values reports nothing more.
func (c *checker) unknownTypeVar() *Var {
	v := c.u.fresh()
	v.level = 0
	return v
}

func typeArityHint(ti *TypeInfo) string {
	if len(ti.Params) == 0 {
		return "`" + ti.Name + "` takes no type arguments."
	}
	return "It is declared as `" + ti.Name + " " + strings.Join(ti.Params, " ") + "`."
}

func (c *checker) typeVar(name string, n syntax.Node, vars map[string]*Var, mode varMode) Type {
	if v, ok := vars[name]; ok {
		return v
	}
	if mode == declVars {
		c.errorf(n, "UNBOUND TYPE VARIABLE", "The type variable `"+name+"` is not declared:", "",
			"Add it as a parameter of the type, e.g. `type alias Thing "+name+" = ...`.")
		v := c.u.fresh()
		vars[name] = v
		return v
	}
	if r, ok := c.rigid[name]; ok {
		return r
	}
	v := c.u.fresh()
	v.Name, v.Kind = name, constraintOf(name)
	vars[name] = v
	return v
}

// substitute replaces the variables in sub throughout t.
func substitute(t Type, sub map[*Var]Type) Type {
	switch x := Prune(t).(type) {
	case *Var:
		if r, ok := sub[x]; ok {
			return r
		}
		return x
	case *Con:
		if len(x.Args) == 0 {
			return x
		}
		args := make([]Type, len(x.Args))
		for i, a := range x.Args {
			args[i] = substitute(a, sub)
		}
		return &Con{Module: x.Module, Name: x.Name, Args: args}
	case *Fun:
		return &Fun{Arg: substitute(x.Arg, sub), Res: substitute(x.Res, sub)}
	case *Tuple:
		el := make([]Type, len(x.Elems))
		for i, a := range x.Elems {
			el[i] = substitute(a, sub)
		}
		return &Tuple{Elems: el}
	case *Record:
		r := &Record{Fields: make(map[string]Type, len(x.Fields))}
		for n, f := range x.Fields {
			r.Fields[n] = substitute(f, sub)
		}
		if x.Ext != nil {
			r.Ext = substitute(x.Ext, sub)
		}
		return r
	case *Alias:
		args := make([]Type, len(x.Args))
		for i, a := range x.Args {
			args[i] = substitute(a, sub)
		}
		return &Alias{Module: x.Module, Name: x.Name, Args: args, Real: substitute(x.Real, sub)}
	}
	return t
}

// lookupType resolves a type name as written in the current module.
func (c *checker) lookupType(t *syntax.TypeCon) *TypeInfo {
	if t.Module == "" {
		if ti := c.mod.types[t.Name]; ti != nil {
			return ti
		}
		cands := c.sc.types[t.Name]
		if len(cands) > 1 {
			var mods []string
			for _, x := range cands {
				mods = append(mods, x.Module+"."+x.Name)
			}
			c.errorf(t, "AMBIGUOUS TYPE", "The type `"+t.Name+"` is exposed by several imports:\n\n"+
				indent(strings.Join(mods, "\n")), "", "Qualify it, e.g. `"+mods[0]+"`.")
			return cands[0]
		}
		if len(cands) == 1 {
			return cands[0]
		}
		if ti := c.sc.ptypes[t.Name]; ti != nil {
			return ti
		}
		if ti := builtinTypes[t.Name]; ti != nil {
			return ti
		}
		if ti := c.mainType(t.Name); ti != nil {
			return ti
		}
		if ti := c.importedType(t.Name); ti != nil {
			return ti
		}
		c.unknownType(t)
		return nil
	}
	mods := c.sc.quals[t.Module]
	if len(mods) == 0 {
		c.unknownQualifier(t, t.Module)
		return nil
	}
	for _, dm := range mods {
		if ti := dm.expTypes[t.Name]; ti != nil {
			return ti
		}
	}
	if ti := builtinTypes[t.Name]; ti != nil {
		return ti // `Dict.Dict`, `Task.Task`: the builtin types
	}
	c.unknownType(t)
	return nil
}

// mainType is real Sky's bare main type of an imported module: after
// `import Std.Db as Db` the type `Db` means `Std.Db.Db`, the type a module
// exports under its own last name segment. It is the last fallback of an
// unqualified type name (a local, exposed or builtin type wins), and only
// explicit imports count.
func (c *checker) mainType(name string) *TypeInfo {
	for _, q := range c.sc.sortedQuals() {
		if c.sc.defaultQual[q] {
			continue
		}
		for _, dm := range c.sc.quals[q] {
			if dm.name == name || strings.HasSuffix(dm.name, "."+name) {
				if ti := dm.expTypes[name]; ti != nil {
					return ti
				}
			}
		}
	}
	return nil
}

// importedType is real Sky's bare name for a type of an imported module that
// is neither exposed nor the module's main type: after `import
// Sky.Core.Json.Decode as Decode`, `Decoder` means `Decode.Decoder`. It is
// the very last fallback and holds only when exactly one explicitly imported
// module exports a type of that name; two leave the name unknown.
func (c *checker) importedType(name string) *TypeInfo {
	var found *TypeInfo
	for _, q := range c.sc.sortedQuals() {
		if c.sc.defaultQual[q] {
			continue
		}
		for _, dm := range c.sc.quals[q] {
			ti := dm.expTypes[name]
			if ti == nil || ti == found {
				continue
			}
			if found != nil {
				return nil
			}
			found = ti
		}
	}
	return found
}

func (c *checker) unknownType(t *syntax.TypeCon) {
	if t.Module == "" && c.sc.fromMissing(t.Name, false) {
		return // the import itself was reported
	}
	var cands []string
	for n := range c.mod.types {
		cands = append(cands, n)
	}
	for n := range c.sc.types {
		cands = append(cands, n)
	}
	for n := range c.sc.ptypes {
		cands = append(cands, n)
	}
	for n := range builtinTypes {
		cands = append(cands, n)
	}
	for q, ms := range c.sc.quals {
		for _, dm := range ms {
			for n := range dm.expTypes {
				cands = append(cands, q+"."+n)
			}
		}
	}
	full := t.Name
	if t.Module != "" {
		full = t.Module + "." + t.Name
	}
	c.errorf(t, "NAMING ERROR", "I cannot find a `"+full+"` type:", "", didYouMean(full, cands))
}

func (c *checker) unknownQualifier(n syntax.Node, q string) {
	if c.sc.missing[q] {
		return // the import itself was reported
	}
	var cands []string
	for k := range c.sc.quals {
		cands = append(cands, k)
	}
	hint := "Add an import such as `import " + q + "` (or `import Some.Module as " + q + "`)."
	// A module the program could import whose last name is q (Error is
	// Sky.Core.Error): the import to write.
	var named []string
	for _, m := range c.knownModules() {
		if m == q || strings.HasSuffix(m, "."+q) {
			named = append(named, m)
		}
	}
	if len(named) > 0 {
		imports := make([]string, len(named))
		for i, m := range named {
			imports[i] = "`import " + m + " as " + q + "`"
			if m == q {
				imports[i] = "`import " + q + "`"
			}
		}
		hint = "Add the import: " + strings.Join(imports, " or ") + "."
	}
	if s := diag.Suggest(q, cands); len(s) > 0 {
		hint = "Did you mean `" + s[0] + "`? Otherwise add the import."
	}
	c.errorf(n, "NAMING ERROR", "I cannot find a module or import alias named `"+q+"`:", "", hint)
}
