package main

import (
	"errors"
	"os"

	"skydurable/compiler/diag"
	"skydurable/runtime/project"
)

// projectDiagnostic renders a sky.toml problem as every other error is
// rendered: the file and position, the line with a caret, and the hint.
func projectDiagnostic(err error) (diag.Diagnostic, bool) {
	var pe *project.Error
	if !errors.As(err, &pe) {
		return diag.Diagnostic{}, false
	}
	d := diag.Diagnostic{Title: "PROJECT FILE ERROR", File: pe.Path, Message: pe.Message, Hint: pe.Hint}
	if pe.Line > 0 {
		d.Start = diag.Pos{Line: pe.Line, Col: pe.Col}
		if pe.Len > 1 {
			d.End = diag.Pos{Line: pe.Line, Col: pe.Col + pe.Len}
		}
		if text, err := os.ReadFile(pe.Path); err == nil {
			d.SourceLine = diag.Line(string(text), pe.Line)
		}
	}
	return d, true
}
