package syntax

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"skydurable/compiler/diag"
)

var update = flag.Bool("update", false, "rewrite the .golden files of TestErrorGolden")

// TestErrorGolden parses each testdata/errors/*.sky file, which must fail, and
// compares the rendered errors with the .golden file beside it. Run
// `go test -run TestErrorGolden -update` to regenerate after reviewing.
func TestErrorGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/errors/*.sky")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 12 {
		t.Fatalf("expected at least 12 error cases, found %d", len(files))
	}
	for _, path := range files {
		name := strings.TrimSuffix(filepath.Base(path), ".sky")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, perr := ParseFile(filepath.Base(path), src)
			if perr == nil {
				t.Fatalf("%s parsed without errors; it must fail", path)
			}
			list, ok := perr.(diag.List)
			if !ok {
				t.Fatalf("error has type %T, want diag.List", perr)
			}
			got := list.Error() + "\n"
			golden := strings.TrimSuffix(path, ".sky") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("errors for %s differ from %s (-want +got):\n%s", path, golden, diff)
			}
		})
	}
}
