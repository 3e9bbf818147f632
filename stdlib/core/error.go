package core

import (
	"errors"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

func errorKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Error_toString", Arity: 1, Fn: errorToString},
		{Name: "Error_kindLabel", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			if c, ok := a[0].(value.Ctor); ok {
				if k, ok := task.KindFromName(c.Name); ok {
					return k.Label(), nil
				}
			}
			return nil, value.BadArg("Error.kindLabel", "an ErrorKind", a[0])
		}},
	}
}

// errorToString renders a Sky Error as task.Error does ("<Label>: <message>"),
// so Sky and Go print an error the same way.
func errorToString(a []value.Value) (value.Value, error) {
	var e *task.Error
	if err := value.ToError(a[0]); errors.As(err, &e) {
		return e.Error(), nil
	}
	return nil, value.BadArg("Error.toString", "an Error (Error kind { message, details })", a[0])
}
