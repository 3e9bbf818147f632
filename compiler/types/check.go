package types

import (
	"slices"
	"sort"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

const preludeName = "Sky.Core.Prelude"

// Program is the checker's input, independent of how modules were found:
// every parsed module by name (the entry, the user's modules and the stdlib
// sources), plus the source text of each file for error snippets.
type Program struct {
	// Modules maps a module name ("Main", "Lib.User", "Sky.Core.List") to
	// its parsed file.
	Modules map[string]*syntax.File
	// Sources maps a file name (syntax.File.Name) to its text; optional,
	// used to print the offending source line.
	Sources map[string]string
	// Stdlib names every module the standard library provides, and Looked
	// maps a module imported but found nowhere to the files the loader
	// tried; both optional, for the message about such an import.
	Stdlib []string
	Looked map[string][]string
}

// Info records what the checker learned, in side tables keyed by AST node;
// the AST itself is never modified.
type Info struct {
	// Types is the inferred type of every expression checked.
	Types map[syntax.Expr]Type
	// Patterns is the type of every pattern checked.
	Patterns map[syntax.Pattern]Type
	// Defs is the type of every value definition, top-level or in a let
	// (for a top-level one, Values has its generalised scheme).
	Defs map[*syntax.ValueDecl]Type
	// Values maps module name → top-level name → its type scheme.
	Values map[string]map[string]*ValueInfo
	// Refs says what each name reference (*syntax.Var, *syntax.Ctor,
	// *syntax.CtorPat) resolved to.
	Refs map[syntax.Node]Ref
	// TaskDiscards marks `_ = task` let bindings whose value is a Task (the
	// evaluator runs them).
	TaskDiscards map[*syntax.Destructure]bool
	// Kernels maps "Module.name" of every `Ffi.kernel` binding to its kernel
	// name.
	Kernels map[string]string
	// Warnings are problems that do not stop the program (a final `_`
	// branch after the others cover every value), in position order.
	Warnings diag.List
}

// TypeOf returns the inferred type of an expression with its variables
// resolved, or nil when the expression was not checked.
func (i *Info) TypeOf(e syntax.Expr) Type {
	t, ok := i.Types[e]
	if !ok {
		return nil
	}
	return Prune(t)
}

// RefKind says what sort of entity a name refers to.
type RefKind int

const (
	// RefLocal is a lambda, case, function-parameter or let-bound name.
	RefLocal RefKind = iota
	// RefTopLevel is a module's top-level value.
	RefTopLevel
	// RefCtor is a custom-type constructor.
	RefCtor
	// RefRecordCtor is a record type alias used as a constructor.
	RefRecordCtor
)

// Ref is the resolution of one name occurrence. Module and Name are the
// defining module and the unqualified name (empty Module for locals and
// the builtin True/False).
type Ref struct {
	Kind   RefKind
	Module string
	Name   string
}

// checker is the state of one Check call.
type checker struct {
	u       unifier
	prog    *Program
	info    *Info
	errs    diag.List
	modules map[string]*moduleInfo
	mod     *moduleInfo
	sc      *scope
	// per top-level declaration: rigid variables of its annotation, in
	// scope for annotations of let bindings inside it.
	rigid    map[string]*Var
	patCtors map[*syntax.CtorPat]*CtorInfo
	declName string
	// uses of App.withDurable and Codec.auto* in the current module,
	// checked once its inference is done (persisted.go)
	persisted []persistedUse
	// autoWitnesses are the witnesses of the module's Codec.auto* calls,
	// checked with its persisted uses (persisted.go).
	autoWitnesses []autoWitness
	// floatLits are the Int literals of witnesses reported as FLOAT
	// WRITTEN AS AN INT, each once however many calls reach it.
	floatLits map[syntax.Expr]bool
}

// Check resolves, infers and checks every module of prog, in import order.
// It returns what it learned and every error found, sorted by position; a
// program is well-typed when the error list is empty.
func Check(prog *Program) (*Info, diag.List) {
	c := &checker{
		prog: prog,
		info: &Info{
			Types:        map[syntax.Expr]Type{},
			Patterns:     map[syntax.Pattern]Type{},
			Defs:         map[*syntax.ValueDecl]Type{},
			Values:       map[string]map[string]*ValueInfo{},
			Refs:         map[syntax.Node]Ref{},
			TaskDiscards: map[*syntax.Destructure]bool{},
			Kernels:      map[string]string{},
		},
		modules:   map[string]*moduleInfo{},
		patCtors:  map[*syntax.CtorPat]*CtorInfo{},
		floatLits: map[syntax.Expr]bool{},
	}
	for _, name := range c.importOrder() {
		f := prog.Modules[name]
		m := &moduleInfo{name: name, file: f, source: prog.Sources[f.Name]}
		c.modules[name] = m
		c.checkModule(m)
	}
	c.errs = append(c.errs, workflowEffects(prog, c.info)...)
	c.errs.Sort()
	c.info.Warnings.Sort()
	return c.info, c.errs
}

// knownModules is every module name the program could import.
func (c *checker) knownModules() []string {
	known := slices.Clone(c.prog.Stdlib)
	for n := range c.prog.Modules {
		known = append(known, n)
	}
	slices.Sort(known)
	return slices.Compact(known)
}

// importOrder returns module names so that each comes after its imports,
// reporting unknown imports and cycles.
func (c *checker) importOrder() []string {
	names := make([]string, 0, len(c.prog.Modules))
	for n := range c.prog.Modules {
		names = append(names, n)
	}
	sort.Strings(names)
	state := map[string]int{} // 1 visiting, 2 done
	var order []string
	var stack []string
	var visit func(n string)
	visit = func(n string) {
		state[n] = 1
		stack = append(stack, n)
		f := c.prog.Modules[n]
		deps := []string{}
		if n != preludeName {
			if _, ok := c.prog.Modules[preludeName]; ok {
				deps = append(deps, preludeName)
			}
		}
		if !isStdlibModule(n) {
			for _, d := range DefaultImports {
				if _, ok := c.prog.Modules[d]; ok && d != n {
					deps = append(deps, d)
				}
			}
		}
		for _, imp := range f.Imports {
			dep := imp.Module.String()
			if _, ok := c.prog.Modules[dep]; !ok {
				c.errs = append(c.errs, UnknownImport(f.Name, c.prog.Sources[f.Name], imp, c.knownModules(), c.prog.Looked[dep]))
				continue
			}
			if dep == n {
				c.errorIn(f, imp.Module.Span, "IMPORT CYCLE", "The module `"+n+"` imports itself:", "", "")
				continue
			}
			deps = append(deps, dep)
		}
		for _, dep := range deps {
			switch state[dep] {
			case 0:
				visit(dep)
			case 1:
				i := len(stack) - 1
				for i > 0 && stack[i] != dep {
					i--
				}
				cycle := append(append([]string{}, stack[i:]...), dep)
				var sp syntax.Span
				for _, imp := range f.Imports {
					if imp.Module.String() == dep {
						sp = imp.Module.Span
					}
				}
				c.errorIn(f, sp, "IMPORT CYCLE", "Your module imports form a cycle:\n\n    "+
					strings.Join(cycle, " -> "), "", "Sky does not allow import cycles; move the shared "+
					"declarations into a module that both can import.")
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = 2
		order = append(order, n)
	}
	for _, n := range names {
		if state[n] == 0 {
			visit(n)
		}
	}
	return order
}

// checkModule declares a module's types and values and checks its bodies.
func (c *checker) checkModule(m *moduleInfo) {
	c.mod = m
	m.values = map[string]*ValueInfo{}
	m.types = map[string]*TypeInfo{}
	m.ctors = map[string]*CtorInfo{}
	c.info.Values[m.name] = m.values
	c.declareTypes(m)
	m.scope = c.buildScope(m)
	c.sc = m.scope
	c.resolveTypes(m)
	c.declareValues(m)
	c.computeExports(m)
	c.checkValues(m)
	c.checkPersisted(m)
}

func (c *checker) errorIn(f *syntax.File, sp syntax.Span, title, msg, detail, hint string) {
	c.errs = append(c.errs, c.diagnostic(f, sp, title, msg, detail, hint))
}

func (c *checker) diagnostic(f *syntax.File, sp syntax.Span, title, msg, detail, hint string) diag.Diagnostic {
	return diag.Diagnostic{
		Title: title, File: f.Name, Start: diagPos(sp.Start), End: diagPos(sp.End),
		Message: msg, Detail: detail, Hint: hint, SourceLine: diag.Line(c.prog.Sources[f.Name], sp.Start.Line),
	}
}

// warnf records a warning at n in the current module (not in the standard
// library's: those are not the user's to fix).
func (c *checker) warnf(n syntax.Node, title, msg, detail, hint string) {
	if isStdlibModule(c.mod.name) {
		return
	}
	c.info.Warnings = append(c.info.Warnings, c.diagnostic(c.mod.file, n.Range(), title, msg, detail, hint))
}

// diagPos is p as a diagnostic's position.
func diagPos(p syntax.Pos) diag.Pos { return diag.Pos{Line: p.Line, Col: p.Col} }

func (c *checker) errorAt(m *moduleInfo, sp syntax.Span, title, msg, detail, hint string) {
	c.errorIn(m.file, sp, title, msg, detail, hint)
}

func (c *checker) errorf(n syntax.Node, title, msg, detail, hint string) {
	c.errorAt(c.mod, n.Range(), title, msg, detail, hint)
}

// computeExports reads the module header's exposing list. A name the
// module does not define but has imported unqualified is re-exported.
func (c *checker) computeExports(m *moduleInfo) {
	m.expValues = map[string]*ValueInfo{}
	m.expTypes = map[string]*TypeInfo{}
	m.expCtors = map[string]*CtorInfo{}
	f := m.file
	if f.Module == nil || f.Exposing == nil || f.Exposing.All {
		for n, v := range m.values {
			m.expValues[n] = v
		}
		for n, t := range m.types {
			m.expTypes[n] = t
		}
		for n, ct := range m.ctors {
			m.expCtors[n] = ct
		}
		return
	}
	for _, it := range f.Exposing.Items {
		switch it.Kind {
		case syntax.ExposeOperator:
			// Operators are built in; exposing one is harmless.
		case syntax.ExposeValue:
			v := m.values[it.Name]
			if v == nil && len(m.scope.values[it.Name]) == 1 {
				v = m.scope.values[it.Name][0]
			}
			if v == nil {
				v = m.scope.pvalues[it.Name]
			}
			if v == nil {
				c.errorAt(m, it.Span, "BAD EXPOSING",
					"The module exposes `"+it.Name+"`, but it does not define it:", "",
					didYouMean(it.Name, m.order))
				continue
			}
			m.expValues[it.Name] = v
		case syntax.ExposeType:
			t := m.types[it.Name]
			if t == nil && len(m.scope.types[it.Name]) == 1 {
				t = m.scope.types[it.Name][0]
			}
			if t == nil {
				t = m.scope.ptypes[it.Name]
			}
			if t == nil {
				var names []string
				for n := range m.types {
					names = append(names, n)
				}
				c.errorAt(m, it.Span, "BAD EXPOSING",
					"The module exposes the type `"+it.Name+"`, but it does not define it:", "",
					didYouMean(it.Name, names))
				continue
			}
			m.expTypes[it.Name] = t
			c.checkListedCtors(m, it, t, nil, "BAD EXPOSING")
			if it.Open {
				for _, ct := range t.Ctors {
					if it.ExposesCtor(ct.Name) {
						m.expCtors[ct.Name] = ct
					}
				}
			}
		}
	}
}

func didYouMean(name string, groups ...[]string) string {
	if s := diag.Suggest(name, groups...); len(s) > 0 {
		return "Did you mean `" + s[0] + "`?"
	}
	return ""
}
