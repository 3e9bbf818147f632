package core

import (
	"math"

	"skydurable/runtime/value"
)

// mathKernels are the Sky.Core.Math functions Basics does not already have
// (Math.sqrt, sin, floor, ... bind the Basics kernels).
func mathKernels() []value.Kernel {
	float2 := func(name, fn string, f func(x, y float64) float64) value.Kernel {
		return value.Kernel{Name: name, Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			x, err := floatArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			y, err := floatArg(fn, a[1])
			if err != nil {
				return nil, err
			}
			return f(x, y), nil
		}}
	}
	constant := func(name string, c float64) value.Kernel {
		return value.Kernel{Name: name, Arity: 0, Fn: func([]value.Value) (value.Value, error) { return c, nil }}
	}
	return []value.Kernel{
		floatToInt("Math_round", "Math.round", math.Round),
		// Math's own rounding kernels, so a runtime error names Math.floor,
		// not the Prelude's floor the user did not call.
		floatToInt("Math_floor", "Math.floor", math.Floor),
		floatToInt("Math_ceil", "Math.ceil", math.Ceil),
		floatToInt("Math_trunc", "Math.trunc", math.Trunc),
		float2("Math_pow", "Math.pow", math.Pow),
		float2("Math_hypot", "Math.hypot", math.Hypot),
		float2("Math_mod", "Math.mod", math.Mod),
		float2("Math_remainder", "Math.remainder", math.Remainder),
		floatFn("Math_cbrt", "Math.cbrt", math.Cbrt),
		floatFn("Math_exp", "Math.exp", math.Exp),
		floatFn("Math_exp2", "Math.exp2", math.Exp2),
		floatFn("Math_log", "Math.log", math.Log),
		floatFn("Math_log2", "Math.log2", math.Log2),
		floatFn("Math_log10", "Math.log10", math.Log10),
		floatFn("Math_sinh", "Math.sinh", math.Sinh),
		floatFn("Math_cosh", "Math.cosh", math.Cosh),
		floatFn("Math_tanh", "Math.tanh", math.Tanh),
		floatFn("Math_asinh", "Math.asinh", math.Asinh),
		floatFn("Math_acosh", "Math.acosh", math.Acosh),
		floatFn("Math_atanh", "Math.atanh", math.Atanh),
		constant("Math_phi", math.Phi),
		constant("Math_sqrt2", math.Sqrt2),
		constant("Math_inf", math.Inf(1)),
		constant("Math_nan", math.NaN()),
	}
}
