package value

import (
	"errors"
	"fmt"
)

// RuntimeError is a failure of the program itself — a type error the checker
// would have caught, a `case` that matched nothing, a kernel called with the
// wrong kind of value — as opposed to a Sky failure carried by a Task. Task
// combinators must pass it through untouched (never hand it to `onError` or
// `mapError` as if it were a Sky Error); use IsRuntimeError to tell.
type RuntimeError struct {
	// File, Line and Col locate the expression that failed (1-based; Line
	// is 0 when unknown).
	File      string
	Line, Col int
	// SourceLine is the text of that line, so the CLI can show it with a
	// caret under Col; empty when unknown.
	SourceLine string
	// Message says what went wrong, naming the offending value.
	Message string
}

// Error returns "file:line:col: message" (the message alone when the
// position is unknown). The CLI renders the full report with the source
// line through compiler/diag.
func (e *RuntimeError) Error() string {
	if e.Line == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Message)
}

// IsRuntimeError reports whether err is (or wraps) a *RuntimeError or an
// *Exit: a failure no Sky code may handle.
func IsRuntimeError(err error) bool {
	var re *RuntimeError
	var ex *Exit
	return errors.As(err, &re) || errors.As(err, &ex)
}

// AsFloat reads a Float argument. An Int is accepted too: until the type
// checker lands, an integer literal in a Float position arrives as int64.
func AsFloat(v Value) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// Exit is System.exit: the program asks to stop at once with Code. It travels
// up like a RuntimeError (IsRuntimeError is true, so no Task combinator
// catches it), and the runner turns it into the process's exit status.
type Exit struct{ Code int }

// Error says which exit was requested, for a runner that does not exit.
func (e *Exit) Error() string { return fmt.Sprintf("System.exit %d", e.Code) }

// HaltsProgram makes an Exit a durable.Halter: a System.exit inside a
// workflow body or step stops the program instead of failing the run.
func (e *Exit) HaltsProgram() {}
