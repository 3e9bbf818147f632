package types_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/compiler/types"
)

// TestOKPrograms checks each testdata/ok/*.sky clean and compares the
// inferred type of every top-level name announced by a `--: name : Type`
// comment.
func TestOKPrograms(t *testing.T) {
	files, err := filepath.Glob("testdata/ok/*.sky")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/ok files")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			prog := stdlibProgram(t, nil)
			addEntry(t, prog, path, string(src))
			info, errs := types.Check(prog)
			for _, e := range errs {
				t.Errorf("%s", e.Error())
			}
			module := prog.Modules
			_ = module
			var modName string
			for name, f := range prog.Modules {
				if f.Name == path {
					modName = name
				}
			}
			checked := 0
			for _, line := range strings.Split(string(src), "\n") {
				rest, ok := strings.CutPrefix(line, "--: ")
				if !ok {
					continue
				}
				name, want, ok := strings.Cut(rest, " : ")
				if !ok {
					t.Fatalf("bad expectation %q", line)
				}
				vi := info.Values[modName][name]
				if vi == nil {
					t.Errorf("%s: no top-level value %s", path, name)
					continue
				}
				if got := types.TypeString(vi.Scheme.Type); got != want {
					t.Errorf("%s: type of %s\n got: %s\nwant: %s", path, name, got, want)
				}
				checked++
			}
			t.Logf("%d inferred types compared", checked)
		})
	}
}
