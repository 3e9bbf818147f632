package syntax

import (
	"slices"
	"strings"
	"testing"

	"skydurable/compiler/diag"
)

// TestErrorCaretWithTabs checks that a caret lines up under a column that
// comes after tabs (tabs expand to 4-column stops in the snippet).
func TestErrorCaretWithTabs(t *testing.T) {
	src := "f =\n\tx ;\n"
	_, err := ParseFile("tab.sky", []byte(src))
	list, ok := err.(diag.List)
	if !ok || len(list) == 0 {
		t.Fatalf("want errors, got %v", err)
	}
	if list[0].Start.Col != 7 {
		t.Errorf("column = %d, want 7 (tab to column 5, then `x `)", list[0].Start.Col)
	}
	lines := strings.Split(list[0].Error(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "2| ") })
	if i < 0 || i+1 >= len(lines) {
		t.Fatalf("no source line 2 in:\n%s", list[0].Error())
	}
	srcLine, caretLine := lines[i], lines[i+1]
	if strings.Contains(srcLine, "\t") {
		t.Errorf("tabs not expanded in %q", srcLine)
	}
	if strings.Index(caretLine, "^") != strings.Index(srcLine, ";") {
		t.Errorf("caret misaligned:\n%s\n%s", srcLine, caretLine)
	}
}
