package store

import (
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadMigrations: files load in number order; a gap, a repeat or a
// badly named file is an error naming it.
func TestLoadMigrations(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	ms, err := LoadMigrations(fstest.MapFS{"m/0002_b.sql": file("B"), "m/0001_a.sql": file("A")}, "m")
	if err != nil || len(ms) != 2 || ms[0].Name != "a" || ms[1].Version != 2 || ms[1].SQL != "B" {
		t.Fatalf("LoadMigrations = %+v, %v", ms, err)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"expected version 2": {"m/0001_a.sql": file(""), "m/0003_c.sql": file("")},
		"found 1 (b)":        {"m/0001_a.sql": file(""), "m/0001_b.sql": file("")},
		"m/notes.txt":        {"m/0001_a.sql": file(""), "m/notes.txt": file("")},
		"m/0000_zero.sql":    {"m/0000_zero.sql": file("")},
	} {
		if _, err := LoadMigrations(fsys, "m"); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("LoadMigrations of %v = %v, want an error mentioning %q", fsys, err, name)
		}
	}
}
