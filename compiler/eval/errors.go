package eval

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// source is one loaded file: its name and text, for error snippets.
type source struct {
	name string
	text []byte
}

// snippet renders the source line of pos with a caret under its column.
func (s *source) snippet(pos syntax.Pos) string {
	if s == nil || pos.Line <= 0 {
		return ""
	}
	lines := strings.Split(string(s.text), "\n")
	if pos.Line > len(lines) {
		return ""
	}
	line := strings.TrimRight(syntax.ExpandTabs(lines[pos.Line-1]), "\r")
	num := fmt.Sprint(pos.Line)
	pad := strings.Repeat(" ", len(num))
	col := pos.Col
	if col < 1 {
		col = 1
	}
	return fmt.Sprintf(" %s |\n %s | %s\n %s | %s^", pad, num, line, pad, strings.Repeat(" ", col-1))
}

func where(pos syntax.Pos) string {
	return fmt.Sprintf("%s:%d:%d", pos.File, pos.Line, pos.Col)
}

// errorAt builds the runtime error for the expression at pos.
func (s *source) errorAt(pos syntax.Pos, msg string) error {
	if pos.File == "" && s != nil {
		pos.File = s.name
	}
	return &value.RuntimeError{Where: where(pos), Message: msg, Snippet: s.snippet(pos)}
}

// wrapAt gives an error from a kernel or from value.Apply the position of
// the call that got it; an error that already has a position is kept.
func (s *source) wrapAt(pos syntax.Pos, err error) error {
	if err == nil || err == errTailCall || value.IsRuntimeError(err) {
		return err
	}
	return s.errorAt(pos, err.Error())
}

// Error is one load or compile error: where, what, and the source line.
type Error struct {
	Pos     syntax.Pos
	Msg     string
	Snippet string
}

// Error renders "file:line:col: message" and the source snippet.
func (e *Error) Error() string {
	s := e.Msg
	if e.Pos.File != "" {
		s = where(e.Pos) + ": " + s
	}
	if e.Snippet != "" {
		s += "\n" + e.Snippet
	}
	return s
}

// ErrorList is every error found while loading a program, sorted by
// position. It is returned as an error when non-empty.
type ErrorList []*Error

// Error renders every error, one after the other.
func (l ErrorList) Error() string {
	parts := make([]string, len(l))
	for i, e := range l {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n\n")
}

func (l ErrorList) sorted() ErrorList {
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
	return l
}

// IsLoadError reports whether err is a load/compile failure (as opposed to a
// failure of the running program).
func IsLoadError(err error) bool {
	var l ErrorList
	var e *Error
	return errors.As(err, &l) || errors.As(err, &e)
}
