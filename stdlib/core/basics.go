package core

import (
	"fmt"
	"math"

	"skydurable/runtime/value"
)

func basicsKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Basics_toFloat", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			i, err := intArg("toFloat", a[0])
			return float64(i), err
		}},
		floatToInt("Basics_round", "round", func(f float64) float64 { return math.Floor(f + 0.5) }),
		floatToInt("Basics_floor", "floor", math.Floor),
		floatToInt("Basics_ceiling", "ceiling", math.Ceil),
		floatToInt("Basics_truncate", "truncate", math.Trunc),
		{Name: "Basics_abs", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			switch x := a[0].(type) {
			case int64:
				if x < 0 {
					return -x, nil
				}
				return x, nil
			case float64:
				return math.Abs(x), nil
			}
			return nil, value.BadArg("abs", "a number", a[0])
		}},
		{Name: "Basics_negate", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			switch x := a[0].(type) {
			case int64:
				return -x, nil
			case float64:
				return -x, nil
			}
			return nil, value.BadArg("negate", "a number", a[0])
		}},
		{Name: "Basics_min", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := value.Compare(a[0], a[1])
			if err != nil || c <= 0 {
				return a[0], err
			}
			return a[1], nil
		}},
		{Name: "Basics_max", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := value.Compare(a[0], a[1])
			if err != nil || c >= 0 {
				return a[0], err
			}
			return a[1], nil
		}},
		{Name: "Basics_compare", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			c, err := value.Compare(a[0], a[1])
			if err != nil {
				return nil, err
			}
			return orderOf(c), nil
		}},
		{Name: "Basics_clamp", Arity: 3, Fn: basicsClamp},
		{Name: "Basics_modBy", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			m, x, err := intPair("modBy", a)
			if err != nil {
				return nil, err
			}
			if m == 0 {
				return int64(0), nil // total, as real Sky: modBy 0 x is 0
			}
			r := x % m
			if r != 0 && (r < 0) != (m < 0) {
				r += m
			}
			return r, nil
		}},
		{Name: "Basics_remainderBy", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, x, err := intPair("remainderBy", a)
			if err != nil {
				return nil, err
			}
			if d == 0 {
				return int64(0), nil // total, as real Sky: remainderBy 0 x is 0
			}
			return x % d, nil
		}},
		floatFn("Basics_sqrt", "sqrt", math.Sqrt),
		floatFn("Basics_sin", "sin", math.Sin),
		floatFn("Basics_cos", "cos", math.Cos),
		floatFn("Basics_tan", "tan", math.Tan),
		floatFn("Basics_acos", "acos", math.Acos),
		floatFn("Basics_asin", "asin", math.Asin),
		floatFn("Basics_atan", "atan", math.Atan),
		{Name: "Basics_atan2", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			y, err := floatArg("atan2", a[0])
			if err != nil {
				return nil, err
			}
			x, err := floatArg("atan2", a[1])
			if err != nil {
				return nil, err
			}
			return math.Atan2(y, x), nil
		}},
		{Name: "Basics_pi", Arity: 0, Fn: func([]value.Value) (value.Value, error) { return math.Pi, nil }},
		{Name: "Basics_e", Arity: 0, Fn: func([]value.Value) (value.Value, error) { return math.E, nil }},
		{Name: "Basics_logBase", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			b, err := floatArg("logBase", a[0])
			if err != nil {
				return nil, err
			}
			x, err := floatArg("logBase", a[1])
			if err != nil {
				return nil, err
			}
			return math.Log(x) / math.Log(b), nil
		}},
		{Name: "Basics_isNaN", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			f, err := floatArg("isNaN", a[0])
			return math.IsNaN(f), err
		}},
		{Name: "Basics_isInfinite", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			f, err := floatArg("isInfinite", a[0])
			return math.IsInf(f, 0), err
		}},
	}
}

// floatToInt is a rounding kernel; NaN, infinities and floats beyond the
// Int range have no Int and are a runtime error.
func floatToInt(name, fn string, round func(float64) float64) value.Kernel {
	return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
		f, err := floatArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		r := round(f)
		if math.IsNaN(r) || r >= 1<<63 || r < -(1<<63) {
			return nil, fmt.Errorf("%s %s: the result is not an Int (NaN, infinite or beyond 64 bits)", fn, value.ShowFloat(f))
		}
		return int64(r), nil
	}}
}

func floatFn(name, fn string, f func(float64) float64) value.Kernel {
	return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
		x, err := floatArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		return f(x), nil
	}}
}

func intPair(fn string, a []value.Value) (int64, int64, error) {
	x, err := intArg(fn, a[0])
	if err != nil {
		return 0, 0, err
	}
	y, err := intArg(fn, a[1])
	return x, y, err
}

func basicsClamp(a []value.Value) (value.Value, error) {
	lo, hi, x := a[0], a[1], a[2]
	if c, err := value.Compare(x, lo); err != nil || c < 0 {
		return lo, err
	}
	if c, err := value.Compare(x, hi); err != nil || c > 0 {
		return hi, err
	}
	return x, nil
}
