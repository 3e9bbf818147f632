package core

import (
	"fmt"
	"sort"

	"skydurable/runtime/value"
)

func listKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "List_repeat", Arity: 2, Fn: listRepeat},
		{Name: "List_range", Arity: 2, Fn: listRange},
		{Name: "List_length", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("List.length", a[0])
			return int64(l.Len()), err
		}},
		{Name: "List_reverse", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("List.reverse", a[0])
			var out *value.List
			for ; l != nil; l = l.Tail {
				out = value.Cons(l.Head, out)
			}
			return out, err
		}},
		{Name: "List_member", Arity: 2, Fn: listMember},
		{Name: "List_last", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("List.last", a[0])
			if err != nil || l == nil {
				return value.Nothing, err
			}
			for l.Tail != nil {
				l = l.Tail
			}
			return value.Just(l.Head), nil
		}},
		{Name: "List_map", Arity: 2, Fn: listMap},
		{Name: "List_indexedMap", Arity: 2, Fn: listIndexedMap},
		{Name: "List_filter", Arity: 2, Fn: listFilter},
		{Name: "List_filterMap", Arity: 2, Fn: listFilterMap},
		{Name: "List_foldl", Arity: 3, Fn: listFoldl},
		{Name: "List_foldr", Arity: 3, Fn: listFoldr},
		{Name: "List_any", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return listAnyAll("List.any", a, true) }},
		{Name: "List_all", Arity: 2, Fn: func(a []value.Value) (value.Value, error) { return listAnyAll("List.all", a, false) }},
		{Name: "List_find", Arity: 2, Fn: listFind},
		{Name: "List_append", Arity: 2, Fn: listAppend},
		{Name: "List_concat", Arity: 1, Fn: listConcat},
		{Name: "List_concatMap", Arity: 2, Fn: listConcatMap},
		{Name: "List_intersperse", Arity: 2, Fn: listIntersperse},
		{Name: "List_take", Arity: 2, Fn: listTake},
		{Name: "List_drop", Arity: 2, Fn: listDrop},
		{Name: "List_partition", Arity: 2, Fn: listPartition},
		{Name: "List_map2", Arity: 3, Fn: listMap2},
		{Name: "List_zip", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			return listMap2([]value.Value{value.NewFunc("zip", 2, func(p []value.Value) (value.Value, error) {
				return value.Tuple{p[0], p[1]}, nil
			}), a[0], a[1]})
		}},
		{Name: "List_unzip", Arity: 1, Fn: listUnzip},
		{Name: "List_sum", Arity: 1, Fn: func(a []value.Value) (value.Value, error) { return listArith("List.sum", a[0], 0) }},
		{Name: "List_product", Arity: 1, Fn: func(a []value.Value) (value.Value, error) { return listArith("List.product", a[0], 1) }},
		{Name: "List_maximum", Arity: 1, Fn: func(a []value.Value) (value.Value, error) { return listExtreme("List.maximum", a[0], 1) }},
		{Name: "List_minimum", Arity: 1, Fn: func(a []value.Value) (value.Value, error) { return listExtreme("List.minimum", a[0], -1) }},
		{Name: "List_sort", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("List.sort", a[0])
			if err != nil {
				return nil, err
			}
			return sortList(l.Slice(), value.Compare)
		}},
		{Name: "List_sortBy", Arity: 2, Fn: listSortBy},
		{Name: "List_sortWith", Arity: 2, Fn: listSortWith},
	}
}

// maxListLength bounds List.repeat and List.range so a typo cannot exhaust memory.
const maxListLength = 1 << 26

func listRepeat(a []value.Value) (value.Value, error) {
	n, err := intArg("List.repeat", a[0])
	if err != nil {
		return nil, err
	}
	if n > maxListLength {
		return nil, fmt.Errorf("List.repeat %d: too many elements (the limit is %d)", n, maxListLength)
	}
	var out *value.List
	for i := int64(0); i < n; i++ {
		out = value.Cons(a[1], out)
	}
	return out, nil
}

func listRange(a []value.Value) (value.Value, error) {
	lo, hi, err := intPair("List.range", a)
	if err != nil {
		return nil, err
	}
	if hi >= lo && uint64(hi-lo) >= maxListLength {
		return nil, fmt.Errorf("List.range %d %d: too many elements (the limit is %d)", lo, hi, maxListLength)
	}
	var out *value.List
	for i := hi; i >= lo; i-- {
		out = value.Cons(i, out)
		if i == lo { // lo may be the smallest Int: stop before i-- wraps
			break
		}
	}
	return out, nil
}

func listMember(a []value.Value) (value.Value, error) {
	l, err := listArg("List.member", a[1])
	if err != nil {
		return nil, err
	}
	for ; l != nil; l = l.Tail {
		eq, err := value.Equal(a[0], l.Head)
		if err != nil || eq {
			return eq, err
		}
	}
	return false, nil
}

func listMap(a []value.Value) (value.Value, error) {
	l, err := listArg("List.map", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for ; l != nil; l = l.Tail {
		v, err := value.Apply(a[0], l.Head)
		if err != nil {
			return nil, err
		}
		out.add(v)
	}
	return out.done(), nil
}

func listIndexedMap(a []value.Value) (value.Value, error) {
	l, err := listArg("List.indexedMap", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for i := int64(0); l != nil; l, i = l.Tail, i+1 {
		v, err := value.Apply(a[0], i, l.Head)
		if err != nil {
			return nil, err
		}
		out.add(v)
	}
	return out.done(), nil
}

func listFilter(a []value.Value) (value.Value, error) {
	l, err := listArg("List.filter", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for ; l != nil; l = l.Tail {
		keep, err := callBool("List.filter", a[0], l.Head)
		if err != nil {
			return nil, err
		}
		if keep {
			out.add(l.Head)
		}
	}
	return out.done(), nil
}

func listFilterMap(a []value.Value) (value.Value, error) {
	l, err := listArg("List.filterMap", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for ; l != nil; l = l.Tail {
		r, err := value.Apply(a[0], l.Head)
		if err != nil {
			return nil, err
		}
		c, ok := r.(value.Ctor)
		if !ok || (c.Name != "Just" && c.Name != "Nothing") {
			return nil, value.BadArg("List.filterMap", "a function returning a Maybe", r)
		}
		if c.Name == "Just" {
			out.add(c.Args[0])
		}
	}
	return out.done(), nil
}

func listFoldl(a []value.Value) (value.Value, error) {
	l, err := listArg("List.foldl", a[2])
	if err != nil {
		return nil, err
	}
	acc := a[1]
	for ; l != nil; l = l.Tail {
		if acc, err = value.Apply(a[0], l.Head, acc); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func listFoldr(a []value.Value) (value.Value, error) {
	l, err := listArg("List.foldr", a[2])
	if err != nil {
		return nil, err
	}
	items := l.Slice()
	acc := a[1]
	for i := len(items) - 1; i >= 0; i-- {
		if acc, err = value.Apply(a[0], items[i], acc); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// listAnyAll stops at the first element whose test equals stopOn.
func listAnyAll(fn string, a []value.Value, stopOn bool) (value.Value, error) {
	l, err := listArg(fn, a[1])
	if err != nil {
		return nil, err
	}
	for ; l != nil; l = l.Tail {
		b, err := callBool(fn, a[0], l.Head)
		if err != nil {
			return nil, err
		}
		if b == stopOn {
			return stopOn, nil
		}
	}
	return !stopOn, nil
}

func listFind(a []value.Value) (value.Value, error) {
	l, err := listArg("List.find", a[1])
	if err != nil {
		return nil, err
	}
	for ; l != nil; l = l.Tail {
		b, err := callBool("List.find", a[0], l.Head)
		if err != nil {
			return nil, err
		}
		if b {
			return value.Just(l.Head), nil
		}
	}
	return value.Nothing, nil
}

// appendLists copies every list but the last, which is shared.
func appendLists(lists []*value.List) *value.List {
	if len(lists) == 0 {
		return nil
	}
	var out listBuilder
	for _, l := range lists[:len(lists)-1] {
		for ; l != nil; l = l.Tail {
			out.add(l.Head)
		}
	}
	if out.last == nil {
		return lists[len(lists)-1]
	}
	out.last.Tail = lists[len(lists)-1]
	return out.head
}

func listAppend(a []value.Value) (value.Value, error) {
	x, err := listArg("List.append", a[0])
	if err != nil {
		return nil, err
	}
	y, err := listArg("List.append", a[1])
	if err != nil {
		return nil, err
	}
	return appendLists([]*value.List{x, y}), nil
}

func listConcat(a []value.Value) (value.Value, error) {
	l, err := listArg("List.concat", a[0])
	if err != nil {
		return nil, err
	}
	var lists []*value.List
	for ; l != nil; l = l.Tail {
		inner, err := listArg("List.concat", l.Head)
		if err != nil {
			return nil, err
		}
		lists = append(lists, inner)
	}
	return appendLists(lists), nil
}

func listConcatMap(a []value.Value) (value.Value, error) {
	mapped, err := listMap(a)
	if err != nil {
		return nil, err
	}
	return listConcat([]value.Value{mapped})
}

func listIntersperse(a []value.Value) (value.Value, error) {
	l, err := listArg("List.intersperse", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for first := true; l != nil; l, first = l.Tail, false {
		if !first {
			out.add(a[0])
		}
		out.add(l.Head)
	}
	return out.done(), nil
}

func listTake(a []value.Value) (value.Value, error) {
	n, err := intArg("List.take", a[0])
	if err != nil {
		return nil, err
	}
	l, err := listArg("List.take", a[1])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for ; l != nil && n > 0; l, n = l.Tail, n-1 {
		out.add(l.Head)
	}
	return out.done(), nil
}

func listDrop(a []value.Value) (value.Value, error) {
	n, err := intArg("List.drop", a[0])
	if err != nil {
		return nil, err
	}
	l, err := listArg("List.drop", a[1])
	for ; l != nil && n > 0; l, n = l.Tail, n-1 {
	}
	return l, err
}

func listPartition(a []value.Value) (value.Value, error) {
	l, err := listArg("List.partition", a[1])
	if err != nil {
		return nil, err
	}
	var yes, no listBuilder
	for ; l != nil; l = l.Tail {
		b, err := callBool("List.partition", a[0], l.Head)
		if err != nil {
			return nil, err
		}
		if b {
			yes.add(l.Head)
		} else {
			no.add(l.Head)
		}
	}
	return value.Tuple{yes.done(), no.done()}, nil
}

func listMap2(a []value.Value) (value.Value, error) {
	x, err := listArg("List.map2", a[1])
	if err != nil {
		return nil, err
	}
	y, err := listArg("List.map2", a[2])
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for ; x != nil && y != nil; x, y = x.Tail, y.Tail {
		v, err := value.Apply(a[0], x.Head, y.Head)
		if err != nil {
			return nil, err
		}
		out.add(v)
	}
	return out.done(), nil
}

func listUnzip(a []value.Value) (value.Value, error) {
	l, err := listArg("List.unzip", a[0])
	if err != nil {
		return nil, err
	}
	var xs, ys listBuilder
	for ; l != nil; l = l.Tail {
		t, ok := l.Head.(value.Tuple)
		if !ok || len(t) != 2 {
			return nil, value.BadArg("List.unzip", "a list of pairs", l.Head)
		}
		xs.add(t[0])
		ys.add(t[1])
	}
	return value.Tuple{xs.done(), ys.done()}, nil
}

// listArith sums or multiplies; the result is an Int unless a Float appears.
func listArith(fn string, v value.Value, unit int64) (value.Value, error) {
	l, err := listArg(fn, v)
	if err != nil {
		return nil, err
	}
	product := unit == 1
	i, f, isFloat := unit, float64(unit), false
	for ; l != nil; l = l.Tail {
		switch x := l.Head.(type) {
		case int64:
			if product {
				i, f = i*x, f*float64(x)
			} else {
				i, f = i+x, f+float64(x)
			}
		case float64:
			isFloat = true
			if product {
				f *= x
			} else {
				f += x
			}
		default:
			return nil, value.BadArg(fn, "a list of numbers", l.Head)
		}
	}
	if isFloat {
		return f, nil
	}
	return i, nil
}

func listExtreme(fn string, v value.Value, want int) (value.Value, error) {
	l, err := listArg(fn, v)
	if err != nil || l == nil {
		return value.Nothing, err
	}
	best := l.Head
	for l = l.Tail; l != nil; l = l.Tail {
		c, err := value.Compare(l.Head, best)
		if err != nil {
			return nil, err
		}
		if c == want {
			best = l.Head
		}
	}
	return value.Just(best), nil
}

// sortList sorts stably with cmp, returning the first comparison error.
func sortList(items []value.Value, cmp func(a, b value.Value) (int, error)) (value.Value, error) {
	var cmpErr error
	sort.SliceStable(items, func(i, j int) bool {
		if cmpErr != nil {
			return false
		}
		c, err := cmp(items[i], items[j])
		if err != nil {
			cmpErr = err
		}
		return c < 0
	})
	if cmpErr != nil {
		return nil, cmpErr
	}
	return value.FromSlice(items), nil
}

func listSortBy(a []value.Value) (value.Value, error) {
	l, err := listArg("List.sortBy", a[1])
	if err != nil {
		return nil, err
	}
	type keyed struct{ key, item value.Value }
	items := l.Slice()
	pairs := make([]value.Value, len(items))
	for i, it := range items {
		k, err := value.Apply(a[0], it)
		if err != nil {
			return nil, err
		}
		pairs[i] = keyed{k, it}
	}
	sorted, err := sortList(pairs, func(x, y value.Value) (int, error) {
		return value.Compare(x.(keyed).key, y.(keyed).key)
	})
	if err != nil {
		return nil, err
	}
	var out listBuilder
	for l := sorted.(*value.List); l != nil; l = l.Tail {
		out.add(l.Head.(keyed).item)
	}
	return out.done(), nil
}

func listSortWith(a []value.Value) (value.Value, error) {
	l, err := listArg("List.sortWith", a[1])
	if err != nil {
		return nil, err
	}
	return sortList(l.Slice(), func(x, y value.Value) (int, error) {
		r, err := value.Apply(a[0], x, y)
		if err != nil {
			return 0, err
		}
		c, ok := r.(value.Ctor)
		if ok {
			switch c.Name {
			case "LT":
				return -1, nil
			case "EQ":
				return 0, nil
			case "GT":
				return 1, nil
			}
		}
		return 0, value.BadArg("List.sortWith", "a function returning an Order (LT, EQ or GT)", r)
	})
}
