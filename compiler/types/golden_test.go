package types_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/compiler/diag"
	"skydurable/compiler/types"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/errors")

// TestErrorGolden checks each testdata/errors/NAME.sky (an entry module,
// checked with the stdlib) and compares every rendered error with
// NAME.golden. A file NAME.*.sky beside it is an extra user module named by
// the middle part (e.g. import_cycle.Lib.A.sky is module Lib.A).
func TestErrorGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.sky")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		base := filepath.Base(path)
		if strings.Count(base, ".") > 1 {
			continue // an extra module of another case
		}
		name := strings.TrimSuffix(base, ".sky")
		t.Run(name, func(t *testing.T) {
			got := renderCase(t, path)
			golden := strings.TrimSuffix(path, ".sky") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("missing golden file (run go test -update): %v", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s\n--- got ---\n%s\n--- want ---\n%s", golden, got, want)
			}
			if got == "" {
				t.Errorf("%s checks clean, but an error case must report an error", path)
			}
		})
	}
}

func renderCase(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]string{}
	stem := strings.TrimSuffix(path, ".sky")
	others, _ := filepath.Glob(stem + ".*.sky")
	for _, o := range others {
		mod := strings.TrimSuffix(strings.TrimPrefix(o, stem+"."), ".sky")
		b, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		extra[mod] = string(b)
	}
	prog := stdlibProgram(t, extra)
	addEntry(t, prog, path, string(src))
	_, errs := types.Check(prog)
	return diag.Render(errs)
}
