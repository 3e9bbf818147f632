package value

import "sort"

// Dict is an immutable map ordered by key (value.Compare); (*Dict)(nil) is
// the empty dict. Every update returns a new Dict and leaves the old one
// intact. It is a sorted array: lookups are O(log n), updates O(n), which
// suits the small dicts Sky programs build (rows, headers, options).
type Dict struct {
	keys []Value
	vals []Value
}

// Size is the number of entries.
func (d *Dict) Size() int {
	if d == nil {
		return 0
	}
	return len(d.keys)
}

// find returns the index where k is or would be, and whether it is there.
func (d *Dict) find(k Value) (int, bool, error) {
	if d == nil {
		return 0, false, nil
	}
	var cerr error
	i := sort.Search(len(d.keys), func(i int) bool {
		c, err := Compare(d.keys[i], k)
		if err != nil && cerr == nil {
			cerr = err
		}
		return c >= 0
	})
	if cerr != nil {
		return 0, false, cerr
	}
	if i < len(d.keys) {
		c, err := Compare(d.keys[i], k)
		if err != nil {
			return 0, false, err
		}
		return i, c == 0, nil
	}
	return i, false, nil
}

// Get returns the value stored under k; the error says k is not comparable
// with the keys.
func (d *Dict) Get(k Value) (Value, bool, error) {
	i, ok, err := d.find(k)
	if err != nil || !ok {
		return nil, false, err
	}
	return d.vals[i], true, nil
}

// Insert returns d with k bound to v (replacing an existing binding).
func (d *Dict) Insert(k, v Value) (*Dict, error) {
	i, ok, err := d.find(k)
	if err != nil {
		return d, err
	}
	n := d.Size()
	if ok {
		vals := make([]Value, n)
		copy(vals, d.vals)
		vals[i] = v
		return &Dict{keys: d.keys, vals: vals}, nil
	}
	keys := make([]Value, 0, n+1)
	vals := make([]Value, 0, n+1)
	if d != nil {
		keys = append(append(append(keys, d.keys[:i]...), k), d.keys[i:]...)
		vals = append(append(append(vals, d.vals[:i]...), v), d.vals[i:]...)
	} else {
		keys, vals = append(keys, k), append(vals, v)
	}
	return &Dict{keys: keys, vals: vals}, nil
}

// Remove returns d without k (d itself when k is absent).
func (d *Dict) Remove(k Value) (*Dict, error) {
	i, ok, err := d.find(k)
	if err != nil || !ok {
		return d, err
	}
	if len(d.keys) == 1 {
		return nil, nil
	}
	keys := append(append(make([]Value, 0, len(d.keys)-1), d.keys[:i]...), d.keys[i+1:]...)
	vals := append(append(make([]Value, 0, len(d.vals)-1), d.vals[:i]...), d.vals[i+1:]...)
	return &Dict{keys: keys, vals: vals}, nil
}

// Keys lists the keys in ascending order.
func (d *Dict) Keys() *List {
	if d == nil {
		return nil
	}
	return FromSlice(d.keys)
}

// Values lists the values in key order.
func (d *Dict) Values() *List {
	if d == nil {
		return nil
	}
	return FromSlice(d.vals)
}

// ToList lists the entries as `( key, value )` tuples in key order.
func (d *Dict) ToList() *List {
	var l *List
	for i := d.Size() - 1; i >= 0; i-- {
		l = &List{Head: Tuple{d.keys[i], d.vals[i]}, Tail: l}
	}
	return l
}

// Entry returns the i-th entry in key order (0 <= i < Size).
func (d *Dict) Entry(i int) (key, val Value) { return d.keys[i], d.vals[i] }

// DictFromList builds a Dict from a list of `( key, value )` tuples; a later
// duplicate key wins, as in Elm. It sorts once (O(n log n)) rather than
// inserting one by one.
func DictFromList(l *List) (*Dict, error) {
	var keys, vals []Value
	for ; l != nil; l = l.Tail {
		t, ok := l.Head.(Tuple)
		if !ok || len(t) != 2 {
			return nil, BadArg("Dict.fromList", "a list of ( key, value ) pairs", l.Head)
		}
		keys, vals = append(keys, t[0]), append(vals, t[1])
	}
	if len(keys) == 0 {
		return nil, nil
	}
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	var cerr error
	sort.SliceStable(idx, func(a, b int) bool {
		c, err := Compare(keys[idx[a]], keys[idx[b]])
		if err != nil && cerr == nil {
			cerr = err
		}
		return c < 0
	})
	if cerr != nil {
		return nil, cerr
	}
	d := &Dict{keys: make([]Value, 0, len(idx)), vals: make([]Value, 0, len(idx))}
	for _, i := range idx {
		if n := len(d.keys); n > 0 {
			if c, _ := Compare(d.keys[n-1], keys[i]); c == 0 {
				d.vals[n-1] = vals[i] // stable sort: the later duplicate wins
				continue
			}
		}
		d.keys, d.vals = append(d.keys, keys[i]), append(d.vals, vals[i])
	}
	return d, nil
}
