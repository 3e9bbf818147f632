package ffi

import (
	"sort"
	"strings"
	"testing"

	"skydurable/compiler/syntax"
)

// binding is one `name : Type` + `name = Ffi.kernel "Kernel"` in a module.
type binding struct {
	module, name, kernel string
	arity                int // arrows at the top of the annotation; -1 without one
}

func kernelBindings(t *testing.T) []binding {
	t.Helper()
	var out []binding
	for modName, src := range Modules() {
		f, err := syntax.ParseFile(modName+".sky", []byte(src))
		if err != nil {
			t.Errorf("stdlib module %s does not parse:\n%v", modName, err)
			continue
		}
		if f.Module == nil || f.Module.String() != modName {
			t.Errorf("stdlib module registered as %s declares another name", modName)
		}
		for _, d := range f.Decls {
			vd, ok := d.(*syntax.ValueDecl)
			if !ok {
				continue
			}
			name, ok := kernelName(vd.Body)
			if !ok {
				continue
			}
			b := binding{module: modName, name: vd.Name.Name, kernel: name, arity: -1}
			if vd.Annotation != nil {
				b.arity = arrows(vd.Annotation.Type)
			}
			out = append(out, b)
		}
	}
	return out
}

// kernelName recognises the body `Ffi.kernel "Name"`.
func kernelName(e syntax.Expr) (string, bool) {
	app, ok := e.(*syntax.App)
	if !ok || len(app.Args) != 1 {
		return "", false
	}
	fn, ok := app.Fn.(*syntax.Var)
	if !ok || fn.Module != "Ffi" || fn.Name != "kernel" {
		return "", false
	}
	lit, ok := app.Args[0].(*syntax.StringLit)
	return lit.Value, ok
}

func arrows(t syntax.Type) int {
	n := 0
	for {
		f, ok := t.(*syntax.FuncType)
		if !ok {
			return n
		}
		n++
		t = f.Result
	}
}

func TestEveryKernelBindingMatchesTheTable(t *testing.T) {
	kernels := Kernels()
	used := map[string]bool{}
	for _, b := range kernelBindings(t) {
		used[b.kernel] = true
		k, ok := kernels[b.kernel]
		switch {
		case !ok:
			t.Errorf("%s.%s binds kernel %q, which no stdlib package provides", b.module, b.name, b.kernel)
		case b.arity < 0:
			t.Errorf("%s.%s binds kernel %q without a type annotation; write `%s : Type` above it", b.module, b.name, b.kernel, b.name)
		case k.Arity != b.arity:
			t.Errorf("%s.%s: the annotation takes %d arguments but kernel %q has arity %d", b.module, b.name, b.arity, b.kernel, k.Arity)
		case k.Fn == nil:
			t.Errorf("kernel %q has no Go function", b.kernel)
		}
		if ok && k.Name != b.kernel {
			t.Errorf("kernel table entry %q carries the name %q", b.kernel, k.Name)
		}
	}
	var unused []string
	for name := range kernels {
		if !used[name] {
			unused = append(unused, name)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("kernels no .sky file binds (remove them or bind them): %s", strings.Join(unused, ", "))
	}
}

func TestTheDocumentedModulesAreAllThere(t *testing.T) {
	mods := Modules()
	for _, name := range []string{
		"Sky.Core.Prelude", "Sky.Core.Basics", "Sky.Core.Task", "Sky.Core.Error", "Sky.Core.Result",
		"Sky.Core.Maybe", "Sky.Core.List", "Sky.Core.String", "Sky.Core.Dict", "Sky.Core.Time",
		"Sky.Core.Uuid", "Std.Log", "Sky.Test", "Std.Codec", "Std.Db", "Std.Db.Store",
	} {
		if _, ok := mods[name]; !ok {
			t.Errorf("stdlib module %s is missing", name)
		}
	}
}
