package types

import (
	"fmt"
	"sort"
	"strings"

	"skydurable/compiler/syntax"
)

// Error is one problem the checker found, with enough context to render an
// Elm-style report: where (file:line:col and the source line with the
// offending part marked), what was expected and what was found, and a hint.
type Error struct {
	// Title is the kind of problem in capitals, e.g. "TYPE MISMATCH".
	Title string
	// File, Start and End locate the offending code.
	File       string
	Start, End Pos
	// Message is the explanation shown above the source snippet.
	Message string
	// Detail is shown below the snippet (typically the two types).
	Detail string
	// Hint suggests a fix for the common cause; may be empty.
	Hint string

	source string
}

// Error returns a one-line summary: "file:line:col: message".
func (e *Error) Error() string {
	msg := e.Message
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Start.Line, e.Start.Col, msg)
}

// Render returns the full report: a header, the message, the source line
// with carets under the offending part, the detail and the hint.
func (e *Error) Render() string {
	var b strings.Builder
	loc := fmt.Sprintf("%s:%d:%d", e.File, e.Start.Line, e.Start.Col)
	head := "-- " + e.Title + " "
	pad := 80 - len(head) - len(loc) - 1
	if pad < 3 {
		pad = 3
	}
	b.WriteString(head + strings.Repeat("-", pad) + " " + loc + "\n\n")
	b.WriteString(strings.TrimRight(e.Message, "\n") + "\n\n")
	if snip := e.snippet(); snip != "" {
		b.WriteString(snip)
		if e.Detail != "" || e.Hint != "" {
			b.WriteString("\n")
		}
	}
	if e.Detail != "" {
		b.WriteString(strings.TrimRight(e.Detail, "\n") + "\n")
	}
	if e.Hint != "" {
		if e.Detail != "" {
			b.WriteString("\n")
		}
		b.WriteString("Hint: " + strings.TrimRight(e.Hint, "\n") + "\n")
	}
	return b.String()
}

// snippet renders the first line of the error's span with carets.
func (e *Error) snippet() string {
	if e.source == "" || !e.Start.IsValid() {
		return ""
	}
	lines := strings.Split(e.source, "\n")
	if e.Start.Line > len(lines) {
		return ""
	}
	line := syntax.ExpandTabs(strings.TrimRight(lines[e.Start.Line-1], "\r"))
	prefix := fmt.Sprintf("%d| ", e.Start.Line)
	startCol := e.Start.Col
	endCol := len(line) + 1
	if e.End.Line == e.Start.Line && e.End.Col > startCol {
		endCol = e.End.Col
	}
	if endCol <= startCol {
		endCol = startCol + 1
	}
	if endCol > len(line)+1 && len(line)+1 > startCol {
		endCol = len(line) + 1
	}
	return prefix + line + "\n" +
		strings.Repeat(" ", len(prefix)+startCol-1) + strings.Repeat("^", endCol-startCol) + "\n"
}

// RenderAll renders every error, separated by blank lines, in position order.
func RenderAll(errs []Error) string {
	var parts []string
	for i := range errs {
		parts = append(parts, errs[i].Render())
	}
	return strings.Join(parts, "\n")
}

func sortErrors(errs []Error) {
	sort.SliceStable(errs, func(i, j int) bool {
		a, b := errs[i], errs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Start.Line != b.Start.Line {
			return a.Start.Line < b.Start.Line
		}
		return a.Start.Col < b.Start.Col
	})
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// suggest returns the candidates closest to name (case-insensitively), best
// first, at most three, within a distance that scales with the name length.
// Candidates come in groups: on equal distance an earlier group wins, and
// within a group the alphabetically first, so the answer is deterministic.
func suggest(name string, groups ...[]string) []string {
	type scored struct {
		s        string
		d, group int
	}
	limit := 2
	if len(name) > 6 {
		limit = 3
	}
	var out []scored
	seen := map[string]bool{}
	for g, cands := range groups {
		for _, c := range cands {
			if seen[c] || c == name {
				continue
			}
			seen[c] = true
			d := editDistance(strings.ToLower(name), strings.ToLower(c))
			if d > 1 && strings.EqualFold(lastPart(name), lastPart(c)) {
				d = 1
			}
			if d <= limit {
				out = append(out, scored{c, d, g})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.d != b.d {
			return a.d < b.d
		}
		if a.group != b.group {
			return a.group < b.group
		}
		return a.s < b.s
	})
	var res []string
	for i := 0; i < len(out) && i < 3; i++ {
		res = append(res, out[i].s)
	}
	return res
}

func lastPart(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}
