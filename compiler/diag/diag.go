// Package diag is the front end's one error representation and its one
// renderer. The parser (compiler/syntax), the type checker (compiler/types)
// and the evaluator (compiler/eval) report every problem as a Diagnostic, and
// `sky check`, `sky run` and `sky test` print them with Render, so a syntax,
// type, load or runtime error all look alike:
//
//	-- TYPE MISMATCH ----------------------------------------- src/Main.sky:7:11
//
//	The 2nd argument to `add` is not what I expect:
//
//	7|     add 1 "two"
//	             ^^^^^
//	This argument is a string of type:
//	...
//
//	Hint: ...
//
// The package depends on nothing but the standard library, so every phase
// can use it.
//
// It may import only the standard library; every phase of the front end
// imports it.
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Pos is a 1-based line and column in a file; Col counts a tab as advancing
// to the next multiple of 4 columns (plus one), as the layout rule does. A
// zero Line means the position is unknown.
type Pos struct {
	Line, Col int
}

// Diagnostic is one problem: where it is, what kind it is, what was expected
// and found, the offending source line, and a hint for the common cause.
type Diagnostic struct {
	// Title is the kind of problem in capitals, e.g. "SYNTAX ERROR",
	// "TYPE MISMATCH", "UNKNOWN IMPORT", "RUNTIME ERROR".
	Title string
	// File, Start and End locate the offending code; End is just after it
	// (zero when unknown: the caret then marks one column).
	File       string
	Start, End Pos
	// Message says what went wrong, naming the offending value or token.
	Message string
	// SourceLine is the text of line Start.Line (tabs kept), shown with a
	// caret under the offending span; empty when the source is unknown.
	SourceLine string
	// Expected and Found, when set, are shown as two lines below the source.
	Expected, Found string
	// Detail is free text below the source line (for instance the two types
	// of a mismatch); may be empty.
	Detail string
	// Hint suggests a fix for the common cause; may be empty.
	Hint string
}

// Error renders d as Render does, without the final newline.
func (d Diagnostic) Error() string { return strings.TrimSuffix(Render([]Diagnostic{d}), "\n") }

// List is every diagnostic of one phase. As an error it renders them all in
// position order.
type List []Diagnostic

// Error renders the list as Render does, without the final newline.
func (l List) Error() string { return strings.TrimSuffix(Render(l), "\n") }

// Sort orders the list by file, line and column (stable, so diagnostics at
// one position keep the order they were found in).
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Start.Line != b.Start.Line {
			return a.Start.Line < b.Start.Line
		}
		return a.Start.Col < b.Start.Col
	})
}

// Render is the one renderer: every diagnostic in position order (ds itself
// is not reordered), each ending in a newline, separated by blank lines.
func Render(ds []Diagnostic) string {
	sorted := append(List(nil), ds...)
	sorted.Sort()
	parts := make([]string, len(sorted))
	for i, d := range sorted {
		parts[i] = d.render()
	}
	return strings.Join(parts, "\n")
}

// headerWidth is the width the `-- TITLE ---- file:line:col` line fills.
const headerWidth = 80

func (d Diagnostic) render() string {
	var b strings.Builder
	loc := d.File
	if loc == "" {
		loc = "<input>"
	}
	if d.Start.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", loc, d.Start.Line, d.Start.Col)
	}
	head := "-- " + d.Title + " "
	pad := max(headerWidth-len(head)-len(loc)-1, 3)
	b.WriteString(head + strings.Repeat("-", pad) + " " + loc + "\n\n")
	b.WriteString(strings.TrimRight(d.Message, "\n") + "\n")
	var below []string
	if d.Expected != "" || d.Found != "" {
		below = append(below, "Expected: "+d.Expected+"\nFound:    "+d.Found)
	}
	if d.Detail != "" {
		below = append(below, strings.TrimRight(d.Detail, "\n"))
	}
	if d.Hint != "" {
		below = append(below, "Hint: "+strings.TrimRight(d.Hint, "\n"))
	}
	if snip := d.snippet(); snip != "" {
		b.WriteString("\n" + snip)
	}
	if len(below) > 0 {
		b.WriteString("\n" + strings.Join(below, "\n\n") + "\n")
	}
	return b.String()
}

// snippet renders the source line with carets under the offending span: to
// End when it is on the same line, to the end of the line when the span
// goes on, one caret when End is unknown.
func (d Diagnostic) snippet() string {
	if d.SourceLine == "" || d.Start.Line <= 0 {
		return ""
	}
	line := []rune(ExpandTabs(strings.TrimRight(d.SourceLine, "\r")))
	prefix := fmt.Sprintf("%d| ", d.Start.Line)
	start := min(max(d.Start.Col, 1), len(line)+1)
	end := start + 1
	switch {
	case d.End.Line == d.Start.Line && d.End.Col > start:
		end = min(d.End.Col, len(line)+1)
	case d.End.Line > d.Start.Line:
		end = len(line) + 1
	}
	end = max(end, start+1)
	return prefix + string(line) + "\n" +
		strings.Repeat(" ", len(prefix)+start-1) + strings.Repeat("^", end-start) + "\n"
}

// ExpandTabs replaces each tab with spaces up to the next multiple of 4
// columns, the rule Pos.Col uses, so a caret under a column lines up.
func ExpandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// Line returns line n (1-based) of src without its line ending, or "" when
// src has fewer lines.
func Line(src string, n int) string {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if n < 1 {
		return ""
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimRight(src, "\r")
}
