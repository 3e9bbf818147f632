// Package task is Sky's effect type in Go: a lazy, context-aware computation
// that yields a value or fails with an error, plus Sky's Error (its kinds,
// details and labels). Every layer that performs I/O returns a Task or a Go
// error that converts to *Error through As.
//
// It may import only the standard library: every other layer imports it.
package task

import (
	"context"
	"errors"
	"fmt"
)

// Kind is Sky's ErrorKind. The order matches the Sky type declaration
// `type ErrorKind = Io | Network | Ffi | Decode | Timeout | NotFound |
// PermissionDenied | InvalidInput | Conflict | Unavailable | Unexpected`.
type Kind int

// The Sky error kinds.
const (
	Io Kind = iota
	Network
	Ffi
	Decode
	Timeout
	NotFound
	PermissionDenied
	InvalidInput
	Conflict
	Unavailable
	Unexpected
)

var kindNames = [...]string{"Io", "Network", "Ffi", "Decode", "Timeout", "NotFound", "PermissionDenied", "InvalidInput", "Conflict", "Unavailable", "Unexpected"}
var kindLabels = [...]string{"IO", "Network", "FFI", "Decode", "Timeout", "NotFound", "PermissionDenied", "InvalidInput", "Conflict", "Unavailable", "Unexpected"}

// String is the Sky constructor name of the kind (`Io`, `NotFound`, ...).
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Label is the word Error.toString prints before the message (`IO`, `FFI`, ...).
func (k Kind) Label() string {
	if k < 0 || int(k) >= len(kindLabels) {
		return "Unexpected"
	}
	return kindLabels[k]
}

// KindFromName is the inverse of Kind.String; ok is false for an unknown name.
func KindFromName(name string) (Kind, bool) {
	for i, n := range kindNames {
		if n == name {
			return Kind(i), true
		}
	}
	return Unexpected, false
}

// DetailTag says which ErrorDetails constructor a Details value is.
type DetailTag int

// The ErrorDetails constructors.
const (
	FfiPanic DetailTag = iota
	TypeMismatch
	HttpStatus
	JsonDecode
	Custom
)

// Details is Sky's `ErrorDetails`: a tag and its payload (Text for
// FfiPanic/TypeMismatch/JsonDecode/Custom, Status for HttpStatus).
type Details struct {
	Tag    DetailTag
	Text   string
	Status int
}

// Error is Sky's `Error ErrorKind ErrorInfo` as a Go error. Cause, when set,
// is the Go error it was made from, reachable through errors.Unwrap.
type Error struct {
	Kind    Kind
	Message string
	Details *Details
	Cause   error
}

// Error renders as Sky's Error.toString: "<Label>: <message>".
func (e *Error) Error() string { return e.Kind.Label() + ": " + e.Message }

// Unwrap exposes the Go error this Error was made from.
func (e *Error) Unwrap() error { return e.Cause }

// Retryable reports Sky's Error.isRetryable: Timeout, Network, Unavailable.
func (e *Error) Retryable() bool {
	return e.Kind == Timeout || e.Kind == Network || e.Kind == Unavailable
}

// New makes an Error of the given kind.
func New(kind Kind, message string) *Error { return &Error{Kind: kind, Message: message} }

// Errorf makes an Error whose message is formatted; a %w verb also sets Cause.
func Errorf(kind Kind, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Kind: kind, Message: err.Error(), Cause: errors.Unwrap(err)}
}

// WithDetails returns a copy of e carrying details d.
func (e *Error) WithDetails(d Details) *Error {
	c := *e
	c.Details = &d
	return &c
}

// As converts any Go error to a Sky *Error: an *Error anywhere in the chain is
// returned as is; context cancellation and deadlines become Timeout; anything
// else is Unexpected with the Go error as its cause. As(nil) is nil.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Kind: Timeout, Message: err.Error(), Cause: err}
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Kind: Unavailable, Message: err.Error(), Cause: err}
	}
	return &Error{Kind: Unexpected, Message: err.Error(), Cause: err}
}
