package project

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindWalksUp: the project of a file is the nearest folder above it with
// a sky.toml; its entry and source root come back relative to the working
// directory; with no sky.toml above, the working directory is the root.
func TestFindWalksUp(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{"app/src/Lib", "loose"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	toml := "entry = \"src/Main.sky\"\n[source]\nroot = \"src\"\n[database]\npath = \"data/x.db\"\n"
	if err := os.WriteFile("app/sky.toml", []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{"app/src/Lib/A.sky", "app/src/Lib", "app/src/Main.sky", "app"} {
		p, err := Find(start)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Found || p.Root != "app" || p.File.SourceRoot != filepath.Join("app", "src") ||
			p.Entry() != filepath.Join("app", "src", "Main.sky") || p.File.DatabasePath != "data/x.db" {
			t.Errorf("Find(%q) = %+v, entry %q; want root app, source root app/src, entry app/src/Main.sky", start, p, p.Entry())
		}
	}
	t.Chdir(filepath.Join(dir, "app", "src", "Lib"))
	if p, err := Find(""); err != nil || p.Root != filepath.Join("..", "..") {
		t.Errorf("Find(\"\") in app/src/Lib = %+v, %v; want root ../..", p, err)
	}
	t.Chdir(filepath.Join(dir, "loose"))
	if p, err := Find("Main.sky"); err != nil || p.Found || p.Root != "." || p.Entry() != filepath.Join("src", "Main.sky") {
		t.Errorf("Find with no sky.toml above = %+v, %v; want root . and not found", p, err)
	}
}
