package eval

import (
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// namespace is what a module can name: its own definitions, what its
// imports expose unqualified, and its imports by qualifier.
type namespace struct {
	mod    *Module
	values map[string]*global
	ctors  map[string]*ctorInfo
	quals  map[string][]*Module
}

// newNamespace builds m's namespace from the implicit Prelude and its
// imports; an exposing item naming something the module lacks is an error.
func newNamespace(m *Module, errs *diag.List) *namespace {
	ns := &namespace{mod: m, values: map[string]*global{}, ctors: map[string]*ctorInfo{}, quals: map[string][]*Module{}}
	if p := m.prelude; p != nil {
		ns.exposeAll(p)
		ns.quals[p.Name] = append(ns.quals[p.Name], p)
	}
	byName := map[string]*Module{}
	for _, d := range m.deps {
		byName[d.Name] = d
	}
	for _, imp := range m.File.Imports {
		dep := byName[imp.Module.String()]
		if dep == nil {
			continue // already reported by the loader
		}
		full := imp.Module.String()
		ns.quals[full] = append(ns.quals[full], dep)
		if imp.Alias != nil {

			ns.quals[imp.Alias.Name] = append(ns.quals[imp.Alias.Name], dep)
		} else {
			if imp.Written != "" {
				ns.quals[imp.Written] = append(ns.quals[imp.Written], dep)
			}
			if last := imp.Module.Parts[len(imp.Module.Parts)-1]; last != full {
				ns.quals[last] = append(ns.quals[last], dep)
			}
		}
		if imp.Exposing == nil {
			continue
		}
		if imp.Exposing.All {
			ns.exposeAll(dep)
			continue
		}
		for _, it := range imp.Exposing.Items {
			ns.exposeItem(dep, it, errs)
		}
	}
	// A default import is only a fallback: an explicit import of the same
	// qualifier wins.
	for _, d := range m.defaults {
		if _, taken := ns.quals[lastPart(d.Name)]; !taken {
			ns.quals[lastPart(d.Name)] = []*Module{d}
		}
	}
	return ns
}

func (ns *namespace) exposeAll(dep *Module) {
	for name, g := range dep.values {
		if dep.exposesValue(name) {
			ns.values[name] = g
		}
	}
	for name, c := range dep.ctors {
		if dep.exposesCtor(name) {
			ns.ctors[name] = c
		}
	}
}

func (ns *namespace) exposeItem(dep *Module, it *syntax.ExposedItem, errs *diag.List) {
	switch it.Kind {
	case syntax.ExposeValue:
		g, ok := dep.values[it.Name]
		if !ok || !dep.exposesValue(it.Name) {
			ns.mod.errorf(errs, it.Start, "module %s does not expose a value `%s`; hint: check the spelling, or the module's `exposing` list", dep.Name, it.Name)
			return
		}
		ns.values[it.Name] = g
	case syntax.ExposeType:
		if c, ok := dep.ctors[it.Name]; ok && c.isRecord {
			ns.ctors[it.Name] = c
			return
		}
		names, ok := dep.types[it.Name]
		if !ok {
			// Opaque or built-in types (Db, Codec, Task) need nothing at run time.
			return
		}
		if it.Open {
			for _, n := range names {
				if it.ExposesCtor(n) && dep.exposesCtor(n) {
					ns.ctors[n] = dep.ctors[n]
				}
			}
		}
	}
}

// lookupValue finds an unqualified top-level or imported value.
func (ns *namespace) lookupValue(name string) *global {
	if g, ok := ns.mod.values[name]; ok {
		return g
	}
	return ns.values[name]
}

// lookupCtor finds a constructor, qualified or not.
func (ns *namespace) lookupCtor(qual, name string) (*ctorInfo, string) {
	if qual == "" {
		if c, ok := ns.mod.ctors[name]; ok {
			return c, ""
		}
		if c, ok := ns.ctors[name]; ok {
			return c, ""
		}
		if c, ok := builtinCtors[name]; ok {
			return c, ""
		}
		return nil, "I cannot find a `" + name + "` constructor; hint: import the module that defines it with `exposing (Type(..))`, or qualify it"
	}
	mods, ok := ns.quals[qual]
	if !ok {
		return nil, ns.unknownQualifier(qual)
	}
	for _, m := range mods {
		if c, ok := m.ctors[name]; ok && m.exposesCtor(name) {
			return c, ""
		}
		if c := m.reexportedCtor(name); c != nil {
			return c, ""
		}
	}
	return nil, "module " + mods[0].Name + " does not expose a constructor `" + name + "`"
}

// lookupQualified finds `qual.name`.
func (ns *namespace) lookupQualified(qual, name string) (*global, string) {
	mods, ok := ns.quals[qual]
	if !ok {
		return nil, ns.unknownQualifier(qual)
	}
	for _, m := range mods {
		if g, ok := m.values[name]; ok && m.exposesValue(name) {
			return g, ""
		}
	}
	return nil, "module " + mods[0].Name + " does not expose `" + name + "`; hint: check the spelling, or the module's `exposing` list"
}

func (ns *namespace) unknownQualifier(qual string) string {
	return "I cannot find a module named `" + qual + "`; hint: add `import " + qual + "` (or `import ... as " + lastPart(qual) + "`)"
}

func lastPart(s string) string { return s[strings.LastIndex(s, ".")+1:] }
