package durable

import (
	"skydurable/runtime/durable"
	"skydurable/runtime/value"
)

// PermanentKernels returns the Sky kernels of permanent errors:
//
//	permanent : Error -> Error
//	permanent = Ffi.kernel "Durable_permanent"
//	isPermanent : Error -> Bool
//	isPermanent = Ffi.kernel "Durable_isPermanent"
func PermanentKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Durable_permanent", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return value.FromError(durable.Permanent(value.ToError(a[0]))), nil
		}},
		{Name: "Durable_isPermanent", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			return durable.IsPermanent(value.ToError(a[0])), nil
		}},
	}
}
