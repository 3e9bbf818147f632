package syntax

import "skydurable/compiler/diag"

// title is the title of every diagnostic the lexer and parser report.
const title = "SYNTAX ERROR"

// errorSink collects the diagnostics of one parse, dropping a second error
// at a position that already has one and capping the count so a
// pathological input cannot flood the output.
type errorSink struct {
	src  []byte
	errs diag.List
}

const maxErrors = 50

// errorAt records the error msg (with an optional hint) at pos..end; end is
// zero when the extent is unknown.
func (s *errorSink) errorAt(pos, end Pos, msg, hint string) {
	s.add(pos, end, diag.Diagnostic{Message: msg, Hint: hint})
}

// add records d at pos..end, filling in its title, file and source line.
func (s *errorSink) add(pos, end Pos, d diag.Diagnostic) {
	if len(s.errs) >= maxErrors {
		return
	}
	start := diag.Pos{Line: pos.Line, Col: pos.Col}
	for _, old := range s.errs {
		if old.Start == start {
			return // one error per position: the first is the most precise
		}
	}
	d.Title = title
	d.File = pos.File
	d.Start = start
	d.End = diag.Pos{Line: end.Line, Col: end.Col}
	d.SourceLine = diag.Line(string(s.src), pos.Line)
	s.errs = append(s.errs, d)
}

// result returns the sorted diagnostics as a diag.List error, or nil when
// there are none.
func (s *errorSink) result() error {
	if len(s.errs) == 0 {
		return nil
	}
	s.errs.Sort()
	return s.errs
}
