package types_test

import (
	"os"
	"path/filepath"
	"testing"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
)

// FuzzCheck feeds arbitrary programs that parse to the checker, which must
// never panic, whatever the program. Seeds: every testdata program.
func FuzzCheck(f *testing.F) {
	for _, pattern := range []string{"testdata/errors/*.sky", "testdata/ok/*.sky"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if src, err := os.ReadFile(p); err == nil {
				f.Add(string(src))
			}
		}
	}
	base := stdlibProgram(f, nil)
	f.Fuzz(func(t *testing.T, src string) {
		file, err := syntax.ParseFile("Main.sky", []byte(src))
		if err != nil || file == nil {
			return
		}
		prog := &types.Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{"Main.sky": src}}
		for k, v := range base.Modules {
			prog.Modules[k] = v
		}
		name := types.EntryModuleName
		if file.Module != nil {
			name = file.Module.String()
		}
		prog.Modules[name] = file
		_, errs := types.Check(prog)
		for _, e := range errs {
			_ = e.Error()
		}
	})
}

// TestPartialSyntaxTrees checks the partial trees the parser returns with
// its errors: the checker must not panic on them either.
func TestPartialSyntaxTrees(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(repoRoot, "compiler/syntax/testdata/errors/*.sky"))
	if len(files) == 0 {
		t.Skip("no parser error cases")
	}
	base := stdlibProgram(t, nil)
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		file, _ := syntax.ParseFile(p, src)
		if file == nil {
			continue
		}
		prog := &types.Program{Modules: map[string]*syntax.File{}, Sources: map[string]string{p: string(src)}}
		for k, v := range base.Modules {
			prog.Modules[k] = v
		}
		prog.Modules["Main"] = file
		_, errs := types.Check(prog)
		_ = diag.Render(errs)
	}
	t.Logf("%d partial trees checked without a panic", len(files))
}
