package diag

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRenderLayout checks the whole layout of one diagnostic with every
// part set: header, message, source line with carets, expected/found,
// detail and hint.
func TestRenderLayout(t *testing.T) {
	d := Diagnostic{
		Title:      "SYNTAX ERROR",
		File:       "src/Main.sky",
		Start:      Pos{Line: 12, Col: 9},
		End:        Pos{Line: 12, Col: 12},
		Message:    "unexpected `foo`",
		SourceLine: "    bar foo",
		Expected:   "`=`",
		Found:      "the name `foo`",
		Detail:     "The definition started here.",
		Hint:       "write it like this",
	}
	want := "-- SYNTAX ERROR ---------------------------------------------- src/Main.sky:12:9\n" +
		"\n" +
		"unexpected `foo`\n" +
		"\n" +
		"12|     bar foo\n" +
		"            ^^^\n" +
		"\n" +
		"Expected: `=`\n" +
		"Found:    the name `foo`\n" +
		"\n" +
		"The definition started here.\n" +
		"\n" +
		"Hint: write it like this\n"
	if diff := cmp.Diff(want, Render([]Diagnostic{d})); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	if got := d.Error(); got != strings.TrimSuffix(want, "\n") {
		t.Errorf("Error() is not Render without the final newline:\n%s", got)
	}
}

// TestRenderCarets checks where the carets go for each kind of span.
func TestRenderCarets(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		start, end Pos
		want       string // the caret line
	}{
		{"one column when the end is unknown", "x = foo", Pos{1, 5}, Pos{}, "       ^"},
		{"to the end on the same line", "x = foo", Pos{1, 5}, Pos{1, 8}, "       ^^^"},
		{"to the end of the line when the span goes on", "x = foo bar", Pos{1, 5}, Pos{3, 2}, "       ^^^^^^^"},
		{"just after the line at its end", "x = (", Pos{1, 6}, Pos{}, "        ^"},
		{"clamped to just after the line", "x", Pos{1, 40}, Pos{1, 44}, "    ^"},
		{"under a column after a tab", "\tx ;", Pos{1, 7}, Pos{}, "         ^"},
		{"counting runes, not bytes", `s = "é" + 1`, Pos{1, 9}, Pos{1, 10}, "           ^"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Diagnostic{Title: "T", File: "f.sky", Start: tc.start, End: tc.end, Message: "m", SourceLine: tc.line}
			lines := strings.Split(d.Error(), "\n")
			if len(lines) < 6 {
				t.Fatalf("no snippet in:\n%s", d.Error())
			}
			if want := "1| " + ExpandTabs(tc.line); lines[4] != want {
				t.Errorf("source line %q, want %q", lines[4], want)
			}
			if lines[5] != tc.want {
				t.Errorf("caret line\n%q, want\n%q", lines[5], tc.want)
			}
		})
	}
}

// TestRenderSortsWithoutReordering checks that Render prints in position
// order and leaves its argument as it was.
func TestRenderSortsWithoutReordering(t *testing.T) {
	ds := []Diagnostic{
		{Title: "B", File: "b.sky", Start: Pos{1, 1}, Message: "in b"},
		{Title: "A", File: "a.sky", Start: Pos{2, 1}, Message: "second in a"},
		{Title: "A", File: "a.sky", Start: Pos{1, 3}, Message: "first in a"},
	}
	got := Render(ds)
	first, second, third := strings.Index(got, "first in a"), strings.Index(got, "second in a"), strings.Index(got, "in b")
	if first < 0 || first > second || second > third {
		t.Errorf("not in position order:\n%s", got)
	}
	if ds[0].Message != "in b" {
		t.Errorf("Render reordered its argument: %+v", ds)
	}
	if !strings.Contains(got, "first in a\n\n-- A") {
		t.Errorf("diagnostics are not separated by one blank line:\n%s", got)
	}
}

// TestRenderWithoutPosition checks a diagnostic that knows neither the
// position nor the source: the header names the file alone, no snippet.
func TestRenderWithoutPosition(t *testing.T) {
	d := Diagnostic{Title: "LOAD ERROR", File: "main.sky", Message: "cannot read it"}
	want := "-- LOAD ERROR --------------------------------------------------------- main.sky\n\ncannot read it"
	if got := d.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLine(t *testing.T) {
	src := "a\r\nbb\n\nccc"
	for n, want := range map[int]string{0: "", 1: "a", 2: "bb", 3: "", 4: "ccc", 5: ""} {
		if got := Line(src, n); got != want {
			t.Errorf("Line(%d) = %q, want %q", n, got, want)
		}
	}
}
