package types

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// TypeInfo describes a named type: a custom type with its constructors, or
// a type alias with its definition.
type TypeInfo struct {
	Module string
	Name   string
	Params []string
	// IsAlias is set for `type alias`; Body is then the definition in terms
	// of ParamVars.
	IsAlias   bool
	Body      Type
	ParamVars []*Var
	// Ctors lists a custom type's constructors in declaration order.
	Ctors []*CtorInfo
	// RecordCtor is set for an alias of a closed record, which doubles as a
	// positional constructor taking the fields in declaration order.
	RecordCtor []string
	decl       syntax.Decl
	resolving  bool
	resolved   bool
}

// CtorInfo describes one constructor of a custom type.
type CtorInfo struct {
	Module string
	Name   string
	Type   *TypeInfo
	// Arity is the number of arguments the constructor takes.
	Arity  int
	Scheme Scheme
	// Args are the argument types in terms of the type's parameter vars.
	Args []Type
}

// ValueInfo describes a top-level value: its declaration and, once known,
// its type scheme.
type ValueInfo struct {
	Module string
	Name   string
	Decl   *syntax.ValueDecl
	Scheme Scheme
	// Kernel is the kernel name of an `Ffi.kernel "Name"` binding.
	Kernel string
	known  bool
}

// moduleInfo is everything the checker knows about one module.
type moduleInfo struct {
	name   string
	file   *syntax.File
	source string
	values map[string]*ValueInfo
	types  map[string]*TypeInfo
	ctors  map[string]*CtorInfo
	// What other modules see: the exposed values, types and constructors,
	// including names re-exported from the module's own imports.
	expValues map[string]*ValueInfo
	expTypes  map[string]*TypeInfo
	expCtors  map[string]*CtorInfo
	order     []string // value names in declaration order
	scope     *scope
}

// scope is what names mean inside one module.
type scope struct {
	mod *moduleInfo
	// unqualified imports (exposing lists), name → candidates from distinct
	// modules; more than one means the name is ambiguous.
	values map[string][]*ValueInfo
	ctors  map[string][]*CtorInfo
	types  map[string][]*TypeInfo
	// quals maps a qualifier (alias, full module name, or last segment of a
	// bare import) to the modules it may mean.
	quals map[string][]*moduleInfo
	// The implicit Prelude's names: a fallback layer, so a name exposed by
	// an explicit import (or defined locally) wins over the Prelude's.
	pvalues map[string]*ValueInfo
	pctors  map[string]*CtorInfo
	ptypes  map[string]*TypeInfo
	// defaultQual marks qualifiers that come from the default imports.
	defaultQual map[string]bool
	// missing holds qualifiers of imports that could not be found, so their
	// uses are not reported again.
	missing map[string]bool
	// missingNames holds the names such imports expose, missingAll is set
	// when one exposes `(..)` and missingCtors when one exposes a type's
	// constructors: an unknown unqualified name they may bind is not
	// reported either (the import was).
	missingNames             map[string]bool
	missingAll, missingCtors bool
}

// fromMissing reports whether the unqualified name (a constructor when
// ctor is set) may come from an import that could not be found.
func (sc *scope) fromMissing(name string, ctor bool) bool {
	return sc.missingAll || sc.missingNames[name] || (ctor && sc.missingCtors)
}

// builtin type infos; Bool has its constructors for exhaustiveness.
var builtinTypes = func() map[string]*TypeInfo {
	m := map[string]*TypeInfo{}
	for n, ar := range builtinArity {
		ti := &TypeInfo{Name: n, resolved: true}
		for i := 0; i < ar; i++ {
			ti.Params = append(ti.Params, string(rune('a'+i)))
		}
		m[n] = ti
	}
	b := m["Bool"]
	for _, n := range []string{"True", "False"} {
		b.Ctors = append(b.Ctors, &CtorInfo{Name: n, Type: b, Scheme: Scheme{Type: tBool}})
	}
	return m
}()

var builtinCtors = map[string]*CtorInfo{
	"True":  builtinTypes["Bool"].Ctors[0],
	"False": builtinTypes["Bool"].Ctors[1],
}

func addUnique[T comparable](m map[string][]T, name string, v T) {
	for _, x := range m[name] {
		if x == v {
			return
		}
	}
	m[name] = append(m[name], v)
}

// buildScope resolves a module's imports against already-checked modules.
func (c *checker) buildScope(m *moduleInfo) *scope {
	sc := &scope{
		mod:          m,
		values:       map[string][]*ValueInfo{},
		ctors:        map[string][]*CtorInfo{},
		types:        map[string][]*TypeInfo{},
		quals:        map[string][]*moduleInfo{},
		missing:      map[string]bool{},
		missingNames: map[string]bool{},
		defaultQual:  map[string]bool{},
		pvalues:      map[string]*ValueInfo{},
		pctors:       map[string]*CtorInfo{},
		ptypes:       map[string]*TypeInfo{},
	}
	if p := c.modules[preludeName]; p != nil && m.name != preludeName {
		for n, v := range p.expValues {
			sc.pvalues[n] = v
		}
		for n, ct := range p.expCtors {
			sc.pctors[n] = ct
		}
		for n, t := range p.expTypes {
			sc.ptypes[n] = t
		}
	}
	for _, imp := range m.file.Imports {
		name := imp.Module.String()
		dep := c.modules[name]
		if dep == nil {
			// Reported by importOrder; remember the names it would bind.
			sc.missing[name] = true
			if imp.Alias != nil {
				sc.missing[imp.Alias.Name] = true
			} else if n := len(imp.Module.Parts); n > 1 {
				sc.missing[imp.Module.Parts[n-1]] = true
			}
			if imp.Exposing != nil {
				sc.missingAll = sc.missingAll || imp.Exposing.All
				for _, it := range imp.Exposing.Items {
					sc.missingNames[it.Name] = true
					sc.missingCtors = sc.missingCtors || it.Open
				}
			}
			continue
		}
		if imp.Alias != nil {
			addUnique(sc.quals, imp.Alias.Name, dep)
		} else {
			addUnique(sc.quals, name, dep)
			if imp.Written != "" {
				addUnique(sc.quals, imp.Written, dep)
			}
			if n := len(imp.Module.Parts); n > 1 {
				addUnique(sc.quals, imp.Module.Parts[n-1], dep)
			}
		}
		if imp.Exposing == nil {
			continue
		}
		// An explicit `import Sky.Core.Prelude exposing (..)` adds nothing:
		// its names are already the fallback layer, so they must not become
		// ambiguous with Sky.Core.Basics, which binds the same kernels.
		preludeAgain := name == preludeName && m.name != preludeName
		if imp.Exposing.All {
			if preludeAgain {
				continue
			}
			for n, v := range dep.expValues {
				addUnique(sc.values, n, v)
			}
			for n, t := range dep.expTypes {
				addUnique(sc.types, n, t)
			}
			for n, ct := range dep.expCtors {
				addUnique(sc.ctors, n, ct)
			}
			continue
		}
		for _, it := range imp.Exposing.Items {
			switch it.Kind {
			case syntax.ExposeOperator:
				// Operators are built in; importing one is harmless.
			case syntax.ExposeValue:
				v := dep.expValues[it.Name]
				if v == nil {
					c.notExposed(m, it.Span, dep, it.Name, false)
					continue
				}
				if !preludeAgain {
					addUnique(sc.values, it.Name, v)
				}
			case syntax.ExposeType:
				t := dep.expTypes[it.Name]
				if t == nil && builtinTypes[it.Name] != nil {
					// `import Sky.Core.Dict exposing (Dict)`: the builtin.
					continue
				}
				if t == nil {
					c.notExposed(m, it.Span, dep, it.Name, true)
					continue
				}
				if preludeAgain {
					continue
				}
				addUnique(sc.types, it.Name, t)
				c.checkListedCtors(m, it, t, dep, "BAD IMPORT")
				if it.Open {
					for _, ct := range t.Ctors {
						if it.ExposesCtor(ct.Name) && dep.expCtors[ct.Name] == ct {
							addUnique(sc.ctors, ct.Name, ct)
						}
					}
				}
			}
		}
	}
	if !isStdlibModule(m.name) {
		for _, name := range DefaultImports {
			dep := c.modules[name]
			q := name[strings.LastIndexByte(name, '.')+1:]
			if _, taken := sc.quals[q]; dep != nil && !taken {
				sc.quals[q] = []*moduleInfo{dep}
				sc.defaultQual[q] = true
			}
		}
	}
	return sc
}

func (c *checker) notExposed(m *moduleInfo, sp syntax.Span, dep *moduleInfo, name string, isType bool) {
	hint := ""
	if s := diag.Suggest(name, exposedNames(dep, isType)); len(s) > 0 {
		hint = "Did you mean `" + s[0] + "`?"
	} else {
		hint = exposeHint(dep, name, isType)
	}
	c.errorAt(m, sp, "BAD IMPORT",
		"The `"+dep.name+"` module does not expose `"+name+"`:", "", hint)
}

// exposedNames are the types (isType) or values module dep exposes.
func exposedNames(dep *moduleInfo, isType bool) []string {
	var names []string
	if isType {
		for n := range dep.expTypes {
			names = append(names, n)
		}
	} else {
		for n := range dep.expValues {
			names = append(names, n)
		}
	}
	return names
}

// exposeHint is the hint of a name that module dep does not expose, when
// no exposed name is spelled like it: the module defines it but keeps it
// private, or here is what it does expose.
func exposeHint(dep *moduleInfo, name string, isType bool) string {
	_, private := dep.values[name]
	if isType {
		_, private = dep.types[name]
	}
	if private && !isStdlibModule(dep.name) {
		return "`" + dep.name + "` defines `" + name + "` but keeps it private: add it to the `exposing` list of its `module " + dep.name + " exposing (...)` line."
	}
	names := exposedNames(dep, isType)
	if len(names) == 0 {
		return "`" + dep.name + "` exposes none: check the spelling, or define `" + name + "` there and add it to its `exposing` list."
	}
	sort.Strings(names)
	const most = 12
	list := strings.Join(names, ", ")
	if len(names) > most {
		list = strings.Join(names[:most], ", ") + " and " + strconv.Itoa(len(names)-most) + " more"
	}
	return "`" + dep.name + "` exposes " + list + "."
}

// checkListedCtors reports each constructor of `T(A, B)` that type t does
// not have (or, imported from dep, does not expose), naming the ones it has.
//
// Imported with `T(..)` or `T(A, B)` from a module that exposes T without
// its constructors (an opaque type), it reports the import itself, as Elm
// does.
func (c *checker) checkListedCtors(m *moduleInfo, it *syntax.ExposedItem, t *TypeInfo, dep *moduleInfo, title string) {
	var names []string
	for _, ct := range t.Ctors {
		if dep == nil || dep.expCtors[ct.Name] == ct {
			names = append(names, ct.Name)
		}
	}
	if dep != nil && it.Open && len(names) == 0 && len(t.Ctors) > 0 {
		hint := "`" + it.Name + "` is opaque outside `" + dep.name + "`: import it as `" + it.Name +
			"` without the parentheses, and make and read its values with the functions `" + dep.name + "` exposes"
		if isStdlibModule(dep.name) {
			hint += "."
		} else {
			hint += " (or expose it there as `" + it.Name + "(..)`)."
		}
		c.errorAt(m, it.Span, title,
			"The `"+dep.name+"` module exposes the type `"+it.Name+"` but not its constructors:", "", hint)
		return
	}
	for _, listed := range it.Ctors {
		if !slices.Contains(names, listed.Name) {
			c.errorAt(m, listed.Span, title,
				"The type `"+it.Name+"` has no constructor `"+listed.Name+"`:", "",
				"Its constructors are "+strings.Join(names, ", ")+".")
		}
	}
}

// sortedQuals returns the scope's qualifiers: those of explicit imports
// first, then the default ones (List, String, ...), each group sorted.
func (sc *scope) sortedQuals() []string {
	var explicit, defaults []string
	for q := range sc.quals {
		if sc.defaultQual[q] {
			defaults = append(defaults, q)
		} else {
			explicit = append(explicit, q)
		}
	}
	sort.Strings(explicit)
	sort.Strings(defaults)
	return append(explicit, defaults...)
}

// qualify spells a type name as code in module m would refer to it: bare
// when that name means this type here, otherwise with an import alias (or
// the full module name) so two different types never print alike.
func (sc *scope) qualify(module, name string) string {
	if sc == nil || module == "" {
		return name
	}
	if module == sc.mod.name {
		return name
	}
	if _, shadowed := sc.mod.types[name]; !shadowed {
		if ts := sc.types[name]; len(ts) == 1 && ts[0].Module == module {
			return name
		}
		if t := sc.ptypes[name]; len(sc.types[name]) == 0 && t != nil && t.Module == module {
			return name
		}
	}
	best := ""
	for q, ms := range sc.quals {
		for _, dm := range ms {
			if dm.name == module && (best == "" || len(q) < len(best) || (len(q) == len(best) && q < best)) {
				best = q
			}
		}
	}
	if best == "" {
		best = module
		if module == preludeName {
			best = "Prelude"
		}
	}
	return best + "." + name
}
