package eval

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
	"skydurable/runtime/value"
)

// Stdlib is the standard library a program loads against: the Sky source of
// each stdlib module by name, and the Go kernels `Ffi.kernel "Name"` binds.
type Stdlib struct {
	Modules map[string]string
	Kernels map[string]value.Kernel
}

// ParseFunc parses one Sky file; compiler/syntax.ParseFile is the real one.
type ParseFunc func(filename string, src []byte) (*syntax.File, error)

// Options says where a program's modules come from.
type Options struct {
	// Root is the source root: module `A.B` is `<Root>/A/B.sky`. When empty,
	// the entry file's directory and a `src` directory beside it are tried.
	Root string
	// Stdlib is the standard library; modules found here win over files.
	Stdlib Stdlib
	// Parse parses a file; nil means syntax.ParseFile.
	Parse ParseFunc
}

// preludeName is the module every other module imports implicitly.
const preludeName = "Sky.Core.Prelude"

// loader finds, parses and orders the modules of one program.
type loader struct {
	opts    Options
	roots   []string
	modules map[string]*Module
	order   []*Module // dependencies before dependents
	stack   []string  // modules being loaded, for cycle messages
	errs    diag.List
}

// Load loads the program whose entry is the file at path, with every module
// it imports, and compiles it. Load and compile errors come back together
// as a diag.List sorted by position.
func Load(path string, opts Options) (*Program, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, diag.Diagnostic{Title: titleLoad, File: path, Message: fmt.Sprintf("cannot read the program %s: %v", path, errors.Unwrap(err))}
	}
	if opts.Root == "" {
		return load(path, src, opts, types.DefaultRoots(path))
	}
	return load(path, src, opts, []string{opts.Root})
}

// LoadSource is Load for an entry file already in memory (named filename in
// messages); user modules are looked up under opts.Root.
func LoadSource(filename string, src []byte, opts Options) (*Program, error) {
	var roots []string
	if opts.Root != "" {
		roots = []string{opts.Root}
	}
	return load(filename, src, opts, roots)
}

func load(filename string, src []byte, opts Options, roots []string) (*Program, error) {
	if opts.Parse == nil {
		opts.Parse = syntax.ParseFile
	}
	l := &loader{opts: opts, roots: roots, modules: map[string]*Module{}}
	entry := l.parse(filename, src, "")
	if entry == nil {
		return nil, l.errs
	}
	l.visit(entry)
	if len(l.errs) > 0 {
		l.errs.Sort()
		return nil, l.errs
	}
	return link(l.order, entry, opts.Stdlib.Kernels)
}

// parse parses one file into a Module; name is "" for the entry file (its
// header, or "Main", names it).
func (l *loader) parse(filename string, src []byte, name string) *Module {
	f, err := l.opts.Parse(filename, src)
	if err != nil {
		var syntaxErrs diag.List
		if errors.As(err, &syntaxErrs) {
			l.errs = append(l.errs, syntaxErrs...)
		} else {
			l.errs = append(l.errs, diag.Diagnostic{Title: titleLoad, File: filename, Message: err.Error()})
		}
		return nil
	}
	if name == "" {
		name = "Main"
		if f.Module != nil {
			name = f.Module.String()
		}
	}
	if !strings.HasPrefix(filename, "<stdlib>/") {
		types.ResolveElmImports(f, l.roots, func(n string) bool { _, ok := l.opts.Stdlib.Modules[n]; return ok })
	}
	m := &Module{Name: name, File: f, src: &source{name: filename, text: string(src)}}
	l.modules[name] = m
	return m
}

// visit loads m's imports depth first, then appends m to the order.
func (l *loader) visit(m *Module) {
	l.stack = append(l.stack, m.Name)
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	if m.Name != preludeName {
		if _, ok := l.opts.Stdlib.Modules[preludeName]; ok {
			if p := l.find(preludeName, nil, m); p != nil {
				m.prelude = p
			}
		}
	}
	for _, imp := range m.File.Imports {
		dep := l.find(imp.Module.String(), imp, m)
		if dep != nil {
			m.deps = append(m.deps, dep)
		}
	}
	if !m.stdlib {
		for _, name := range types.DefaultImports {
			if _, ok := l.opts.Stdlib.Modules[name]; ok {
				if dep := l.find(name, nil, m); dep != nil {
					m.defaults = append(m.defaults, dep)
				}
			}
		}
	}
	m.loaded = true
	l.order = append(l.order, m)
}

// find returns the loaded module name, loading it first if needed; imp is
// the import that asks for it (nil for the implicit Prelude).
func (l *loader) find(name string, imp *syntax.Import, from *Module) *Module {
	if m, ok := l.modules[name]; ok {
		if !m.loaded {
			l.errorAt(from, imp, "import cycle: "+l.cycle(name)+
				"; hint: move what both modules need into a third module that imports neither")
			return nil
		}
		return m
	}
	if src, ok := l.opts.Stdlib.Modules[name]; ok {
		m := l.parse("<stdlib>/"+strings.ReplaceAll(name, ".", "/")+".sky", []byte(src), name)
		if m == nil {
			return nil
		}
		m.stdlib = true
		l.visit(m)
		return m
	}
	rel := filepath.Join(strings.Split(name, ".")...) + ".sky"
	var tried []string
	for _, root := range l.roots {
		path := filepath.Join(root, rel)
		src, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			tried = append(tried, path)
			continue
		}
		if err != nil {
			l.errorAt(from, imp, fmt.Sprintf("cannot read module `%s` from %s: %v", name, path, err))
			return nil
		}
		m := l.parse(path, src, name)
		if m == nil {
			return nil
		}
		if h := m.File.Module; h != nil && h.String() != name {
			l.errs = append(l.errs, m.src.diagnostic(titleLoad, h.Start, fmt.Sprintf("this file is imported as `%s` but its header says `module %s`; hint: rename the module or move the file to match", name, h.String())))
		}
		l.visit(m)
		return m
	}
	if imp == nil {
		l.errorAt(from, imp, fmt.Sprintf("cannot find the standard library module `%s`", name))
		return nil
	}
	known := slices.Collect(maps.Keys(l.opts.Stdlib.Modules))
	known = append(known, slices.Collect(maps.Keys(l.modules))...)
	l.errs = append(l.errs, types.UnknownImport(from.src.name, from.src.text, imp, known, tried))
	return nil
}

// cycle renders the import chain from name back to name.
func (l *loader) cycle(name string) string {
	for i, n := range l.stack {
		if n == name {
			return strings.Join(append(append([]string(nil), l.stack[i:]...), name), " -> ")
		}
	}
	return name
}

func (l *loader) errorAt(from *Module, imp *syntax.Import, msg string) {
	var pos syntax.Pos
	if imp != nil {
		pos = imp.Start
	}
	l.errs = append(l.errs, from.src.diagnostic(titleLoad, pos, msg))
}
