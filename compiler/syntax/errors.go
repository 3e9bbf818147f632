package syntax

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one syntax error: where it is, a headline, what the parser
// expected and found, and a hint for the common cause. Its Error method
// renders Elm-style, with the source line and a caret under the column.
type Error struct {
	Pos Pos
	// End is the end of the offending text when known (for a `^^^` span);
	// zero otherwise.
	End Pos
	// Msg is the headline, e.g. "unexpected `)` in an expression".
	Msg string
	// Expected and Found describe the mismatch when there is one.
	Expected string
	Found    string
	// Hint suggests a fix; may be empty.
	Hint string
	// SourceLine is the text of the offending line (tabs kept), filled in by
	// the parser so Error can render a snippet without the whole source.
	SourceLine string
}

// Error renders the error as:
//
//	file:line:col: headline
//	   3 |     foo = (1 + )
//	     |                ^
//	expected: an expression
//	found:    `)`
//	hint: ...
func (e Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s", fileOrDefault(e.Pos.File), e.Pos.Line, e.Pos.Col, e.Msg)
	writeSnippet(&b, e)
	if e.Expected != "" {
		fmt.Fprintf(&b, "\nexpected: %s", e.Expected)
	}
	if e.Found != "" {
		fmt.Fprintf(&b, "\nfound:    %s", e.Found)
	}
	if e.Hint != "" {
		fmt.Fprintf(&b, "\nhint: %s", e.Hint)
	}
	return b.String()
}

func fileOrDefault(f string) string {
	if f == "" {
		return "<input>"
	}
	return f
}

// writeSnippet prints the numbered source line and a caret line. Tabs in the
// line are expanded to 4-column stops so the caret lines up with Pos.Col.
func writeSnippet(b *strings.Builder, e Error) {
	if e.SourceLine == "" {
		return
	}
	line := ExpandTabs(e.SourceLine)
	num := fmt.Sprintf("%d", e.Pos.Line)
	pad := strings.Repeat(" ", len(num))
	fmt.Fprintf(b, "\n %s |\n %s | %s\n %s | ", pad, num, line, pad)
	col := e.Pos.Col
	if col < 1 {
		col = 1
	}
	width := 1
	if e.End.Line == e.Pos.Line && e.End.Col > col {
		width = e.End.Col - col
	}
	// Keep the caret within (or just after) the visible line.
	if max := len([]rune(line)) + 1; col > max {
		col = max
	}
	b.WriteString(strings.Repeat(" ", col-1))
	b.WriteString(strings.Repeat("^", width))
}

// ExpandTabs replaces each tab with spaces up to the next multiple of 4
// columns, the same rule Pos.Col uses, so a caret under a column lines up.
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

// ErrorList is every syntax error of one parse, sorted by position. It is
// the error type ParseFile and ParseExpr return.
type ErrorList []Error

// Error renders all errors, separated by blank lines.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n\n")
}

// Sort orders the errors by file, line and column.
func (l ErrorList) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

// FormatErrors renders errs against src (filling in each error's source line
// from src when missing), sorted by position, separated by blank lines. The
// CLI uses it to print what ParseFile returned.
func FormatErrors(src []byte, errs []Error) string {
	l := make(ErrorList, len(errs))
	copy(l, errs)
	for i := range l {
		if l[i].SourceLine == "" {
			l[i].SourceLine = sourceLine(src, l[i].Pos)
		}
	}
	l.Sort()
	return l.Error()
}

// sourceLine returns the text of the line containing p (by Offset when valid,
// else by Line), without its newline.
func sourceLine(src []byte, p Pos) string {
	if p.Offset >= 0 && p.Offset <= len(src) && p.Line > 0 {
		start := p.Offset
		for start > 0 && src[start-1] != '\n' {
			start--
		}
		end := p.Offset
		for end < len(src) && src[end] != '\n' {
			end++
		}
		return strings.TrimRight(string(src[start:end]), "\r")
	}
	return ""
}

// errorSink collects errors for one parse, dropping exact duplicates and
// capping the count so a pathological input cannot flood the output.
type errorSink struct {
	src  []byte
	errs ErrorList
}

const maxErrors = 50

func (s *errorSink) add(e Error) {
	if len(s.errs) >= maxErrors {
		return
	}
	for _, old := range s.errs {
		if old.Pos == e.Pos {
			return // one error per position: the first is the most precise
		}
	}
	if e.SourceLine == "" {
		e.SourceLine = sourceLine(s.src, e.Pos)
	}
	s.errs = append(s.errs, e)
}

// result returns the sorted errors as an error, or nil when there are none.
func (s *errorSink) result() error {
	if len(s.errs) == 0 {
		return nil
	}
	s.errs.Sort()
	return s.errs
}
