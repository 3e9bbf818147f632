package value

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Equal is Sky's `==`: structural equality. An Int and a Float compare by
// numeric value (an untyped literal may meet a Float at run time). Comparing
// functions or tasks is an error, as Elm's runtime reports it.
func Equal(a, b Value) (bool, error) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return x == y, nil
		case float64:
			return float64(x) == y, nil
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return x == y, nil
		case int64:
			return x == float64(y), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return x == y, nil
		}
	case rune:
		if y, ok := b.(rune); ok {
			return x == y, nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y, nil
		}
	case Unit:
		if _, ok := b.(Unit); ok {
			return true, nil
		}
	case *List:
		if y, ok := b.(*List); ok {
			for x != nil && y != nil {
				eq, err := Equal(x.Head, y.Head)
				if err != nil || !eq {
					return false, err
				}
				x, y = x.Tail, y.Tail
			}
			return x == nil && y == nil, nil
		}
	case Tuple:
		if y, ok := b.(Tuple); ok {
			return equalSlices(x, y)
		}
	case *Record:
		if y, ok := b.(*Record); ok {
			if len(x.Names) != len(y.Names) {
				return false, nil
			}
			for i, n := range x.Names {
				if y.Names[i] != n {
					return false, nil
				}
			}
			return equalSlices(x.Values, y.Values)
		}
	case Ctor:
		if y, ok := b.(Ctor); ok {
			if x.Name != y.Name {
				return false, nil
			}
			return equalSlices(x.Args, y.Args)
		}
	case *Dict:
		if y, ok := b.(*Dict); ok {
			if x.Size() != y.Size() {
				return false, nil
			}
			for i := 0; i < x.Size(); i++ {
				if eq, err := Equal(x.keys[i], y.keys[i]); err != nil || !eq {
					return false, err
				}
				if eq, err := Equal(x.vals[i], y.vals[i]); err != nil || !eq {
					return false, err
				}
			}
			return true, nil
		}
	case Func:
		return false, fmt.Errorf("cannot compare functions with ==: %s; hint: compare the values the functions produce", Show(a))
	case Task:
		return false, fmt.Errorf("cannot compare tasks with ==; hint: run them and compare their results")
	case Opaque:
		if y, ok := b.(Opaque); ok {
			if x.Kind != y.Kind {
				return false, nil
			}
			if x.V == nil || y.V == nil || !reflect.TypeOf(x.V).Comparable() || !reflect.TypeOf(y.V).Comparable() {
				return false, fmt.Errorf("cannot compare %s values with ==", x.Kind)
			}
			return x.V == y.V, nil
		}
	}
	if _, ok := b.(Func); ok {
		return false, fmt.Errorf("cannot compare functions with ==: %s", Show(b))
	}
	if _, ok := b.(Task); ok {
		return false, fmt.Errorf("cannot compare tasks with ==")
	}
	return false, fmt.Errorf("cannot compare %s (%s) with %s (%s): they are different types", Show(a), KindName(a), Show(b), KindName(b))
}

func equalSlices(x, y []Value) (bool, error) {
	if len(x) != len(y) {
		return false, nil
	}
	for i := range x {
		if eq, err := Equal(x[i], y[i]); err != nil || !eq {
			return false, err
		}
	}
	return true, nil
}

// Compare orders two comparable values (Elm's `comparable`, widened as real
// Sky widens it): Int, Float, Char, String, Bool (False before True), lists
// and tuples of comparables, custom-type values (by constructor declaration
// order, then by payload left to right) and records (field by field, fields
// taken by name). It returns -1, 0 or 1; an Int and a Float compare
// numerically, and NaN sorts after +Inf (compare is total; `==` stays
// IEEE). Other kinds are an error.
func Compare(a, b Value) (int, error) {
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp3(x < y, x > y), nil
		case float64:
			return cmpFloat(float64(x), y), nil
		}
	case float64:
		switch y := b.(type) {
		case float64:
			return cmpFloat(x, y), nil
		case int64:
			return cmpFloat(x, float64(y)), nil
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case rune:
		if y, ok := b.(rune); ok {
			return cmp3(x < y, x > y), nil
		}
	case bool:
		if y, ok := b.(bool); ok {
			return cmp3(!x && y, x && !y), nil
		}
	case *List:
		if y, ok := b.(*List); ok {
			for x != nil && y != nil {
				c, err := Compare(x.Head, y.Head)
				if err != nil || c != 0 {
					return c, err
				}
				x, y = x.Tail, y.Tail
			}
			return cmp3(x == nil && y != nil, x != nil && y == nil), nil
		}
	case Tuple:
		if y, ok := b.(Tuple); ok && len(x) == len(y) {
			for i := range x {
				c, err := Compare(x[i], y[i])
				if err != nil || c != 0 {
					return c, err
				}
			}
			return 0, nil
		}
	case *Record:
		if y, ok := b.(*Record); ok && len(x.Names) == len(y.Names) {
			for i := range x.Values {
				if x.Names[i] != y.Names[i] {
					return 0, fmt.Errorf("cannot order %s against %s: the records have different fields", Show(a), Show(b))
				}
				c, err := Compare(x.Values[i], y.Values[i])
				if err != nil || c != 0 {
					return c, err
				}
			}
			return 0, nil
		}
	case Ctor:
		if y, ok := b.(Ctor); ok {
			if x.Name != y.Name {
				return ctorOrder(x.Name, y.Name)
			}
			for i := range x.Args {
				if i >= len(y.Args) {
					break
				}
				c, err := Compare(x.Args[i], y.Args[i])
				if err != nil || c != 0 {
					return c, err
				}
			}
			return cmp3(len(x.Args) < len(y.Args), len(x.Args) > len(y.Args)), nil
		}
	}
	if !isComparable(a) {
		return 0, fmt.Errorf("cannot order %s: a %s is not comparable (only Int, Float, Char, String, Bool, custom types, records, and lists and tuples of them are)", Show(a), KindName(a))
	}
	if !isComparable(b) {
		return 0, fmt.Errorf("cannot order %s: a %s is not comparable (only Int, Float, Char, String, Bool, custom types, records, and lists and tuples of them are)", Show(b), KindName(b))
	}
	return 0, fmt.Errorf("cannot order %s (%s) against %s (%s): they are different types", Show(a), KindName(a), Show(b), KindName(b))
}

func isComparable(v Value) bool {
	switch v.(type) {
	case int64, float64, string, rune, bool, *List, Tuple, *Record, Ctor:
		return true
	}
	return false
}

// cmpFloat orders floats with NaN after every other value and equal to
// itself, so sorting is total.
func cmpFloat(x, y float64) int {
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn || yn:
		return cmp3(!xn, !yn)
	default:
		return cmp3(x < y, x > y)
	}
}

// ctorTypes maps a constructor name to the constructor lists (in declaration
// order) of the custom types that declare it; RegisterCtors fills it as
// modules load, Compare reads it.
var (
	ctorTypesMu sync.RWMutex
	ctorTypes   = map[string][][]string{}
)

// RegisterCtors records the constructors of one custom type in declaration
// order, which is the order Compare puts its values in.
func RegisterCtors(names []string) {
	list := append([]string(nil), names...)
	ctorTypesMu.Lock()
	defer ctorTypesMu.Unlock()
	if len(names) == 0 || slices.ContainsFunc(ctorTypes[names[0]], func(l []string) bool { return slices.Equal(l, list) }) {
		return
	}
	for _, n := range names {
		ctorTypes[n] = append(ctorTypes[n], list)
	}
}

// ctorOrder orders two constructors of one type by their declaration order.
func ctorOrder(a, b string) (int, error) {
	ctorTypesMu.RLock()
	defer ctorTypesMu.RUnlock()
	for _, l := range ctorTypes[a] {
		ia, ib := -1, -1
		for i, n := range l {
			switch n {
			case a:
				ia = i
			case b:
				ib = i
			}
		}
		if ia >= 0 && ib >= 0 {
			return cmp3(ia < ib, ia > ib), nil
		}
	}
	return 0, fmt.Errorf("cannot order %s against %s: no custom type declares both constructors", a, b)
}

func cmp3(less, greater bool) int {
	switch {
	case less:
		return -1
	case greater:
		return 1
	}
	return 0
}
