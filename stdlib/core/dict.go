package core

import (
	"skydurable/runtime/value"
)

func dictKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Dict_empty", Arity: 0, Fn: func([]value.Value) (value.Value, error) { return (*value.Dict)(nil), nil }},
		{Name: "Dict_insert", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			d, err := dictArg("Dict.insert", a[2])
			if err != nil {
				return nil, err
			}
			return d.Insert(a[0], a[1])
		}},
		{Name: "Dict_remove", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, err := dictArg("Dict.remove", a[1])
			if err != nil {
				return nil, err
			}
			return d.Remove(a[0])
		}},
		{Name: "Dict_member", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, err := dictArg("Dict.member", a[1])
			if err != nil {
				return nil, err
			}
			_, ok, err := d.Get(a[0])
			return ok, err
		}},
		{Name: "Dict_get", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			d, err := dictArg("Dict.get", a[1])
			if err != nil {
				return nil, err
			}
			v, ok, err := d.Get(a[0])
			if err != nil || !ok {
				return value.Nothing, err
			}
			return value.Just(v), nil
		}},
		dict1("Dict_size", "Dict.size", func(d *value.Dict) value.Value { return int64(d.Size()) }),
		dict1("Dict_keys", "Dict.keys", func(d *value.Dict) value.Value { return d.Keys() }),
		dict1("Dict_values", "Dict.values", func(d *value.Dict) value.Value { return d.Values() }),
		dict1("Dict_toList", "Dict.toList", func(d *value.Dict) value.Value { return d.ToList() }),
		{Name: "Dict_fromList", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("Dict.fromList", a[0])
			if err != nil {
				return nil, err
			}
			return value.DictFromList(l)
		}},
		{Name: "Dict_map", Arity: 2, Fn: dictMap},
		{Name: "Dict_foldl", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return dictFold("Dict.foldl", a, false) }},
		{Name: "Dict_foldr", Arity: 3, Fn: func(a []value.Value) (value.Value, error) { return dictFold("Dict.foldr", a, true) }},
		{Name: "Dict_filter", Arity: 2, Fn: dictFilter},
		{Name: "Dict_union", Arity: 2, Fn: dictUnion},
	}
}

func dict1(name, fn string, f func(*value.Dict) value.Value) value.Kernel {
	return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
		d, err := dictArg(fn, a[0])
		if err != nil {
			return nil, err
		}
		return f(d), nil
	}}
}

// Dict.map and Dict.filter rebuild through value.DictFromList, which inserts
// one pair at a time (a copy per insert): fine for the dict sizes Sky
// programs hold in memory.

func dictMap(a []value.Value) (value.Value, error) {
	d, err := dictArg("Dict.map", a[1])
	if err != nil {
		return nil, err
	}
	pairs := make([]value.Value, d.Size())
	for i := range pairs {
		k, v := d.Entry(i)
		nv, err := value.Apply(a[0], k, v)
		if err != nil {
			return nil, err
		}
		pairs[i] = value.Tuple{k, nv}
	}
	return value.DictFromList(value.FromSlice(pairs))
}

func dictFold(fn string, a []value.Value, fromRight bool) (value.Value, error) {
	d, err := dictArg(fn, a[2])
	if err != nil {
		return nil, err
	}
	acc := a[1]
	n := d.Size()
	for i := 0; i < n; i++ {
		j := i
		if fromRight {
			j = n - 1 - i
		}
		k, v := d.Entry(j)
		if acc, err = value.Apply(a[0], k, v, acc); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func dictFilter(a []value.Value) (value.Value, error) {
	d, err := dictArg("Dict.filter", a[1])
	if err != nil {
		return nil, err
	}
	var kept []value.Value
	for i := 0; i < d.Size(); i++ {
		k, v := d.Entry(i)
		keep, err := callBool("Dict.filter", a[0], k, v)
		if err != nil {
			return nil, err
		}
		if keep {
			kept = append(kept, value.Tuple{k, v})
		}
	}
	return value.DictFromList(value.FromSlice(kept))
}

// dictUnion keeps the first dict's value on a shared key, as Elm does.
func dictUnion(a []value.Value) (value.Value, error) {
	x, err := dictArg("Dict.union", a[0])
	if err != nil {
		return nil, err
	}
	out, err := dictArg("Dict.union", a[1])
	if err != nil {
		return nil, err
	}
	for i := 0; i < x.Size(); i++ {
		k, v := x.Entry(i)
		if out, err = out.Insert(k, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}
