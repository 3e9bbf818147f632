package eval

import (
	"errors"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// Titles of the diagnostics the evaluator reports; the parser's and the
// checker's have their own.
const (
	titleCompile = "COMPILE ERROR"
	titleLoad    = "LOAD ERROR"
	titleRuntime = "RUNTIME ERROR"
)

// source is one loaded file: its name and text, for error positions and
// source lines.
type source struct {
	name string
	text string
}

// line returns the text of line n, or "" when unknown.
func (s *source) line(n int) string {
	if s == nil {
		return ""
	}
	return diag.Line(s.text, n)
}

// errorAt builds the runtime error for the expression at pos.
func (s *source) errorAt(pos syntax.Pos, msg string) error {
	e := &value.RuntimeError{Message: msg}
	s.locate(e, pos)
	return e
}

// locate gives e the position pos (and its source line), naming s's file
// when pos names none.
func (s *source) locate(e *value.RuntimeError, pos syntax.Pos) {
	e.File, e.Line, e.Col = pos.File, pos.Line, pos.Col
	if e.File == "" && s != nil {
		e.File = s.name
	}
	e.SourceLine = s.line(pos.Line)
}

// wrapAt gives an error from a kernel or from value.Apply the position of
// the call that got it; an error that already has a position is kept.
func (s *source) wrapAt(pos syntax.Pos, err error) error {
	var exit *value.Exit
	if err == nil || err == errTailCall || errors.As(err, &exit) {
		return err // a System.exit carries no position: it stops the program
	}
	var re *value.RuntimeError
	if !errors.As(err, &re) {
		return s.errorAt(pos, err.Error())
	}
	if re.Line == 0 {
		// A kernel's runtime error knows no position: this call is where.
		located := *re
		s.locate(&located, pos)
		return &located
	}
	return err
}

// diagnostic builds a load or compile error at pos in s. A message written
// as "what; hint: how" shows its hint apart.
func (s *source) diagnostic(title string, pos syntax.Pos, msg string) diag.Diagnostic {
	d := withHint(diag.Diagnostic{Title: title, File: pos.File, Start: diag.Pos{Line: pos.Line, Col: pos.Col}}, msg)
	if s != nil {
		if d.File == "" {
			d.File = s.name
		}
		d.SourceLine = s.line(pos.Line)
	}
	return d
}

// withHint sets d's message to msg, or to its part before "; hint: " with
// the rest as d's hint: evaluator and kernel messages carry their hint so.
func withHint(d diag.Diagnostic, msg string) diag.Diagnostic {
	d.Message = msg
	if what, hint, ok := strings.Cut(msg, "; hint: "); ok {
		d.Message, d.Hint = what, hint
	}
	return d
}

// Diagnostics returns what to show for a program that did not load or that
// went wrong: its load and compile errors, or its runtime error. ok is false
// for any other error, such as a Task's Sky failure.
func Diagnostics(err error) (ds diag.List, ok bool) {
	var l diag.List
	var d diag.Diagnostic
	var re *value.RuntimeError
	switch {
	case errors.As(err, &l):
		return l, true
	case errors.As(err, &d):
		return diag.List{d}, true
	case errors.As(err, &re):
		return diag.List{runtimeDiagnostic(re)}, true
	}
	return nil, false
}

// runtimeDiagnostic is the report of a runtime error.
func runtimeDiagnostic(re *value.RuntimeError) diag.Diagnostic {
	return withHint(diag.Diagnostic{
		Title: titleRuntime, File: re.File, Start: diag.Pos{Line: re.Line, Col: re.Col}, SourceLine: re.SourceLine,
	}, re.Message)
}
