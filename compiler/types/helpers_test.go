package types_test

import (
	"testing"

	"skydurable/compiler/ffi"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
)

// stdlibProgram parses every stdlib module into a Program; extra files
// (module name → source) are added under "<name>.sky".
func stdlibProgram(t testing.TB, extra map[string]string) *types.Program {
	t.Helper()
	prog := &types.Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{}}
	add := func(name, file, src string) {
		f, err := syntax.ParseFile(file, []byte(src))
		if err != nil {
			t.Fatalf("parse %s: %v", file, err)
		}
		prog.Modules[name] = f
		prog.Sources[file] = src
	}
	for name, src := range ffi.Modules() {
		add(name, "<stdlib>/"+name+".sky", src)
	}
	for name, src := range extra {
		add(name, name+".sky", src)
	}
	return prog
}

// addEntry parses src as the program's entry module (named by its header,
// or Main) under the file name path.
func addEntry(t testing.TB, prog *types.Program, path, src string) {
	t.Helper()
	f, err := syntax.ParseFile(path, []byte(src))
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	name := types.EntryModuleName
	if f.Module != nil {
		name = f.Module.String()
	}
	prog.Modules[name] = f
	prog.Sources[path] = src
}

func TestStdlibChecksClean(t *testing.T) {
	_, errs := types.Check(stdlibProgram(t, nil))
	for _, e := range errs {
		t.Errorf("%s", e.Error())
	}
}
