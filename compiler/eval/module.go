package eval

import (
	"fmt"
	"sort"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// Module is one loaded Sky module: its syntax tree and what it defines.
type Module struct {
	// Name is the dotted module name ("Main" for an entry file without a
	// header).
	Name string
	// File is the parsed source.
	File *syntax.File

	src      *source
	deps     []*Module // explicit imports, in source order
	prelude  *Module   // the implicit Prelude, nil for Prelude itself
	defaults []*Module // default imports usable by last segment (user modules)
	loaded   bool
	stdlib   bool

	values map[string]*global   // top-level values and functions
	ctors  map[string]*ctorInfo // constructors (custom types and record aliases)
	types  map[string][]string  // custom type name -> its constructor names
	// exposing is the header's list; nil exposes everything.
	exposing *syntax.Exposing
}

// global is one top-level value. Functions are ready once compiled;
// constants are computed on first use while the program is linked (so their
// order does not matter) and are all ready before any driver runs.
type global struct {
	name  string // qualified, for messages
	pos   syntax.Pos
	src   *source
	v     value.Value
	state int // stateUnset, stateComputing or stateReady
	init  func() (value.Value, error)
}

const (
	stateUnset = iota
	stateComputing
	stateReady
)

// get returns the global's value, computing a constant the first time.
func (g *global) get() (value.Value, error) {
	if g.state == stateReady {
		return g.v, nil
	}
	if g.state == stateComputing {
		return nil, g.src.errorAt(g.pos, fmt.Sprintf("the value `%s` depends on itself; hint: make it a function, or break the cycle", g.name))
	}
	g.state = stateComputing
	v, err := g.init()
	if err != nil {
		g.state = stateUnset
		return nil, err
	}
	g.v, g.state = v, stateReady
	return v, nil
}

// ctorInfo is a constructor usable in expressions and patterns.
type ctorInfo struct {
	name     string
	typeName string
	arity    int
	v        value.Value // a value.Ctor (arity 0), a ctorFunc or a recordFunc
	isBool   bool
	boolV    bool
	isRecord bool // a record alias constructor: not usable in patterns
}

var builtinCtors = map[string]*ctorInfo{
	"True":  {name: "True", typeName: "Bool", v: true, isBool: true, boolV: true},
	"False": {name: "False", typeName: "Bool", v: false, isBool: true},
}

// declare fills m's tables of values, constructors and types.
func (m *Module) declare(errs *diag.List) {
	m.values = map[string]*global{}
	m.ctors = map[string]*ctorInfo{}
	m.types = map[string][]string{}
	m.exposing = m.File.Exposing
	for _, d := range m.File.Decls {
		switch d := d.(type) {
		case *syntax.ValueDecl:
			if _, dup := m.values[d.Name.Name]; dup {
				m.errorf(errs, d.Name.Start, "`%s` is defined twice in module %s; hint: rename one of them", d.Name.Name, m.Name)
				continue
			}
			m.values[d.Name.Name] = &global{name: m.Name + "." + d.Name.Name, pos: d.Name.Start, src: m.src}
		case *syntax.CustomType:
			var names []string
			for _, c := range d.Ctors {
				info := &ctorInfo{name: c.Name.Name, typeName: d.Name.Name, arity: len(c.Args)}
				if info.arity == 0 {
					info.v = value.Ctor{Name: c.Name.Name}
				} else {
					info.v = &ctorFunc{name: c.Name.Name, arity: info.arity}
				}
				m.ctors[c.Name.Name] = info
				names = append(names, c.Name.Name)
			}
			m.types[d.Name.Name] = names
			value.RegisterCtors(names)
		case *syntax.TypeAlias:
			rt, ok := d.Type.(*syntax.RecordType)
			if !ok || rt.Ext != nil {
				continue
			}
			m.ctors[d.Name.Name] = &ctorInfo{name: d.Name.Name, typeName: d.Name.Name, arity: len(rt.Fields), v: recordCtor(rt), isRecord: true}
		}
	}
}

// recordCtor builds the positional constructor of a record alias.
func recordCtor(rt *syntax.RecordType) *recordFunc {
	declared := make([]string, len(rt.Fields))
	for i, f := range rt.Fields {
		declared[i] = f.Name.Name
	}
	names := append([]string(nil), declared...)
	sort.Strings(names)
	perm := make([]int, len(declared))
	for i, n := range declared {
		perm[i] = sort.SearchStrings(names, n)
	}
	return &recordFunc{names: names, perm: perm, declared: declared}
}

func (m *Module) errorf(errs *diag.List, pos syntax.Pos, format string, args ...any) {
	*errs = append(*errs, m.src.diagnostic(titleCompile, pos, fmt.Sprintf(format, args...)))
}

// exposesValue reports whether other modules may use value name.
func (m *Module) exposesValue(name string) bool {
	if m.exposing == nil || m.exposing.All {
		return true
	}
	for _, it := range m.exposing.Items {
		if it.Kind == syntax.ExposeValue && it.Name == name {
			return true
		}
	}
	return false
}

// exposesCtor reports whether other modules may use constructor name: its
// type is exposed with `(..)`, or it is an exposed record alias.
func (m *Module) exposesCtor(name string) bool {
	c, ok := m.ctors[name]
	if !ok {
		return false
	}
	if m.exposing == nil || m.exposing.All {
		return true
	}
	for _, it := range m.exposing.Items {
		if it.Kind == syntax.ExposeType && it.Name == c.typeName && (it.ExposesCtor(name) || c.isRecord) {
			return true
		}
	}
	return false
}

// reexportedCtor finds constructor name of a type m imports and exposes
// again with `(..)` (Sky.Core.Error exposes the Prelude's `Error(..)`, so
// `Error.NotFound` works), or nil.
func (m *Module) reexportedCtor(name string) *ctorInfo {
	if m.exposing == nil {
		return nil
	}
	for _, it := range m.exposing.Items {
		if it.Kind != syntax.ExposeType || !it.Open {
			continue
		}
		for _, dep := range append(append([]*Module(nil), m.deps...), m.prelude) {
			if dep == nil {
				continue
			}
			for _, ctor := range dep.types[it.Name] {
				if ctor == name && it.ExposesCtor(name) && dep.exposesCtor(name) {
					return dep.ctors[name]
				}
			}
		}
	}
	return nil
}
