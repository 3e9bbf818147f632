package value

import (
	"errors"
	"fmt"
	"strings"

	"skydurable/runtime/task"
)

// Failure is the Go error of a Task that failed with a Sky value that is not
// Sky's `Error` (a `Task String a` failing with "boom", say). FromError gives
// V back unchanged.
type Failure struct{ V Value }

// Error renders the failure value as Debug.toString does.
func (f *Failure) Error() string { return "task failed with " + Show(f.V) }

var detailNames = [...]string{task.FfiPanic: "FfiPanic", task.TypeMismatch: "TypeMismatch", task.HttpStatus: "HttpStatus", task.JsonDecode: "JsonDecode", task.Custom: "Custom"}

// FromError turns a Go error into the Sky value a Task failed with: a
// *Failure gives back its value; anything else goes through task.As and
// becomes `Error kind { details = Maybe ErrorDetails, message = String }`.
// FromError(nil) is nil.
func FromError(err error) Value {
	if err == nil {
		return nil
	}
	var f *Failure
	if errors.As(err, &f) {
		return f.V
	}
	e := task.As(err)
	details := Nothing
	if d := e.Details; d != nil {
		var arg Value = d.Text
		switch d.Tag {
		case task.HttpStatus:
			arg = int64(d.Status)
		case task.FfiPanic:
			msg, stack, _ := strings.Cut(d.Text, "\n")
			var lines []Value
			if stack != "" {
				for l := range strings.SplitSeq(stack, "\n") {
					lines = append(lines, l)
				}
			}
			arg = &Record{Names: []string{"message", "stack"}, Values: []Value{msg, FromSlice(lines)}}
		case task.TypeMismatch:
			expected, actual, _ := strings.Cut(d.Text, "\n")
			arg = &Record{Names: []string{"actual", "expected"}, Values: []Value{actual, expected}}
		}
		name := "Custom"
		if int(d.Tag) >= 0 && int(d.Tag) < len(detailNames) {
			name = detailNames[d.Tag]
		}
		details = Just(Ctor{Name: name, Args: []Value{arg}})
	}
	info := &Record{Names: []string{"details", "message"}, Values: []Value{details, e.Message}}
	return Ctor{Name: "Error", Args: []Value{Ctor{Name: e.Kind.String()}, info}}
}

// ToError turns the Sky value a Task fails with into a Go error: Sky's
// `Error` becomes a *task.Error with the same kind, message and details; any
// other value becomes a *Failure carrying it.
func ToError(v Value) error {
	if e, ok := asSkyError(v); ok {
		return e
	}
	return &Failure{V: v}
}

// asSkyError decodes `Error kind info`; ok is false for any other shape.
func asSkyError(v Value) (*task.Error, bool) {
	c, ok := v.(Ctor)
	if !ok || c.Name != "Error" || len(c.Args) != 2 {
		return nil, false
	}
	kc, ok := c.Args[0].(Ctor)
	if !ok || len(kc.Args) != 0 {
		return nil, false
	}
	kind, ok := task.KindFromName(kc.Name)
	if !ok {
		return nil, false
	}
	info, ok := c.Args[1].(*Record)
	if !ok {
		return nil, false
	}
	msgV, _ := info.Get("message")
	msg, ok := msgV.(string)
	if !ok {
		return nil, false
	}
	e := &task.Error{Kind: kind, Message: msg}
	dv, _ := info.Get("details")
	if dc, ok := dv.(Ctor); ok && dc.Name == "Just" && len(dc.Args) == 1 {
		if d, ok := detailsOf(dc.Args[0]); ok {
			e.Details = &d
		}
	}
	return e, true
}

func detailsOf(v Value) (task.Details, bool) {
	c, ok := v.(Ctor)
	if !ok || len(c.Args) != 1 {
		return task.Details{}, false
	}
	for tag, name := range detailNames {
		if name != c.Name {
			continue
		}
		switch task.DetailTag(tag) {
		case task.HttpStatus:
			n, ok := c.Args[0].(int64)
			return task.Details{Tag: task.HttpStatus, Status: int(n)}, ok
		case task.FfiPanic, task.TypeMismatch:
			text, ok := detailsText(c.Args[0])
			return task.Details{Tag: task.DetailTag(tag), Text: text}, ok
		}
		s, ok := c.Args[0].(string)
		return task.Details{Tag: task.DetailTag(tag), Text: s}, ok
	}
	return task.Details{}, false
}

// detailsText flattens the record of an FfiPanic ({ message, stack }) or a
// TypeMismatch ({ expected, actual }) into the Text of task.Details, one
// part a line, which FromError splits back.
func detailsText(v Value) (string, bool) {
	r, ok := v.(*Record)
	if !ok {
		return "", false
	}
	if msg, ok := r.Get("message"); ok {
		parts := []string{fmt.Sprint(msg)}
		if st, ok := r.Get("stack"); ok {
			if l, ok := st.(*List); ok {
				for _, x := range l.Slice() {
					parts = append(parts, fmt.Sprint(x))
				}
			}
		}
		return strings.Join(parts, "\n"), true
	}
	expected, ok1 := r.Get("expected")
	actual, ok2 := r.Get("actual")
	return fmt.Sprint(expected) + "\n" + fmt.Sprint(actual), ok1 && ok2
}
