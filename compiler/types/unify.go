package types

import "sort"

// mismatch explains why two types failed to unify: the innermost pair of
// types that differ and, when it helps the hint, a more specific reason.
type mismatch struct {
	expected, found Type
	// missing lists record fields the found type lacks (or, with extra,
	// has but the expected closed record does not allow).
	missing, extra []string
	// fieldsOf is the record whose fields should be listed in the hint.
	fieldsOf *Record
	infinite bool
	rigid    *Var       // a rigid variable that was asked to be something else
	escape   bool       // rigid is an annotation's variable leaking to an outer scope
	kind     Constraint // a constraint the found type does not satisfy
}

// unifier owns variable creation and unification state for one Check.
type unifier struct {
	nextID int
	level  int
	// escaped is set by occurs when it meets a rigid variable younger than
	// the variable being bound (an annotation's variable leaking out).
	escaped *Var
}

func (u *unifier) fresh() *Var {
	u.nextID++
	return &Var{id: u.nextID, level: u.level}
}

func (u *unifier) freshKind(k Constraint) *Var {
	v := u.fresh()
	v.Kind = k
	return v
}

// unify makes expected and found equal, or reports the first difference.
func (u *unifier) unify(expected, found Type) *mismatch {
	a, b := Prune(expected), Prune(found)
	if a == b {
		return nil
	}
	if va, ok := a.(*Var); ok {
		if vb, ok := b.(*Var); ok {
			return u.unifyVars(va, vb)
		}
		if !va.Rigid {
			return u.bind(va, b, expected, found)
		}
	}
	if vb, ok := b.(*Var); ok && !vb.Rigid {
		return u.bind(vb, a, expected, found)
	}
	// Aliases are transparent to unification.
	if al, ok := a.(*Alias); ok {
		if bl, ok := b.(*Alias); ok && al.Module == bl.Module && al.Name == bl.Name && len(al.Args) == len(bl.Args) {
			ok := true
			for i := range al.Args {
				if u.unify(al.Args[i], bl.Args[i]) != nil {
					ok = false
				}
			}
			if ok {
				return nil
			}
		}
		return u.wrap(u.unify(al.Real, b), expected, found)
	}
	if bl, ok := b.(*Alias); ok {
		return u.wrap(u.unify(a, bl.Real), expected, found)
	}
	if v, ok := a.(*Var); ok && v.Rigid {
		return &mismatch{expected: expected, found: found, rigid: v}
	}
	if v, ok := b.(*Var); ok && v.Rigid {
		return &mismatch{expected: expected, found: found, rigid: v}
	}
	switch x := a.(type) {
	case *Con:
		y, ok := b.(*Con)
		if !ok || x.Module != y.Module || x.Name != y.Name || len(x.Args) != len(y.Args) {
			return &mismatch{expected: expected, found: found}
		}
		for i := range x.Args {
			if m := u.unify(x.Args[i], y.Args[i]); m != nil {
				return m
			}
		}
		return nil
	case *Fun:
		y, ok := b.(*Fun)
		if !ok {
			return &mismatch{expected: expected, found: found}
		}
		if m := u.unify(x.Arg, y.Arg); m != nil {
			return m
		}
		return u.unify(x.Res, y.Res)
	case *Tuple:
		y, ok := b.(*Tuple)
		if !ok || len(x.Elems) != len(y.Elems) {
			return &mismatch{expected: expected, found: found}
		}
		for i := range x.Elems {
			if m := u.unify(x.Elems[i], y.Elems[i]); m != nil {
				return m
			}
		}
		return nil
	case *Record:
		y, ok := b.(*Record)
		if !ok {
			return &mismatch{expected: expected, found: found}
		}
		return u.unifyRecords(x, y, expected, found)
	}
	return &mismatch{expected: expected, found: found}
}

// wrap keeps the outer types of a mismatch found behind an alias when the
// inner difference is the whole alias (so messages print the alias name).
func (u *unifier) wrap(m *mismatch, expected, found Type) *mismatch {
	if m == nil {
		return nil
	}
	if unalias(m.expected) == unalias(expected) && unalias(m.found) == unalias(found) {
		m.expected, m.found = expected, found
	}
	return m
}

func (u *unifier) unifyVars(a, b *Var) *mismatch {
	switch {
	case a.Rigid && b.Rigid:
		return &mismatch{expected: a, found: b, rigid: a}
	case a.Rigid:
		if !kindImplies(a.Kind, b.Kind) {
			return &mismatch{expected: a, found: b, rigid: a}
		}
		if b.level < a.level {
			return &mismatch{expected: a, found: b, rigid: a, escape: true}
		}
		b.Link = a
		return nil
	case b.Rigid:
		if !kindImplies(b.Kind, a.Kind) {
			return &mismatch{expected: a, found: b, rigid: b}
		}
		if a.level < b.level {
			return &mismatch{expected: a, found: b, rigid: b, escape: true}
		}
		a.Link = b
		return nil
	}
	k, ok := combineKinds(a.Kind, b.Kind)
	if !ok {
		return &mismatch{expected: a, found: b, kind: a.Kind}
	}
	if b.level < a.level {
		a.level = b.level
	}
	a.Kind = k
	if a.Name == "" {
		a.Name = b.Name
	}
	b.Link = a
	return nil
}

func (u *unifier) lower(v *Var, level int) {
	if level < v.level {
		v.level = level
	}
}

// bind links flexible variable v to the non-variable type t after the occurs
// check, level adjustment and the variable's constraint check.
func (u *unifier) bind(v *Var, t Type, expected, found Type) *mismatch {
	u.escaped = nil
	if u.occurs(v, t, v.level) {
		return &mismatch{expected: expected, found: found, infinite: true}
	}
	if r := u.escaped; r != nil {
		u.escaped = nil
		return &mismatch{expected: expected, found: found, rigid: r, escape: true}
	}
	if v.Kind != NoConstraint && !u.satisfies(v.Kind, t) {
		return &mismatch{expected: expected, found: found, kind: v.Kind}
	}
	v.Link = t
	return nil
}

// occurs reports whether v appears in t, lowering the levels of t's free
// variables to level on the way (so generalisation stays correct).
func (u *unifier) occurs(v *Var, t Type, level int) bool {
	switch x := Prune(t).(type) {
	case *Var:
		if x == v {
			return true
		}
		if x.Rigid {
			if x.level > level && u.escaped == nil {
				u.escaped = x
			}
			return false
		}
		u.lower(x, level)
	case *Con:
		for _, a := range x.Args {
			if u.occurs(v, a, level) {
				return true
			}
		}
	case *Fun:
		return u.occurs(v, x.Arg, level) || u.occurs(v, x.Res, level)
	case *Tuple:
		for _, a := range x.Elems {
			if u.occurs(v, a, level) {
				return true
			}
		}
	case *Record:
		for _, f := range x.Fields {
			if u.occurs(v, f, level) {
				return true
			}
		}
		if x.Ext != nil {
			return u.occurs(v, x.Ext, level)
		}
	case *Alias:
		for _, a := range x.Args {
			if u.occurs(v, a, level) {
				return true
			}
		}
		return u.occurs(v, x.Real, level)
	}
	return false
}

// combineKinds merges the constraints of two unified flexible variables.
func combineKinds(a, b Constraint) (Constraint, bool) {
	if a == b || b == NoConstraint {
		return a, true
	}
	if a == NoConstraint {
		return b, true
	}
	if a > b {
		a, b = b, a
	}
	switch {
	case a == Number && b == Comparable:
		return Number, true
	case a == Comparable && (b == Appendable || b == CompAppend):
		return CompAppend, true
	case a == Appendable && b == CompAppend:
		return CompAppend, true
	}
	return NoConstraint, false
}

// kindImplies reports whether every type of class have is in class want.
func kindImplies(have, want Constraint) bool {
	switch want {
	case NoConstraint:
		return true
	case Number:
		return have == Number
	case Comparable:
		return have == Number || have == Comparable || have == CompAppend
	case Appendable:
		return have == Appendable || have == CompAppend
	case CompAppend:
		return have == CompAppend
	}
	return false
}

// satisfies reports whether t is in class k, strengthening the constraints
// of flexible variables inside t where that is what it takes.
func (u *unifier) satisfies(k Constraint, t Type) bool {
	t = unalias(t)
	if v, ok := t.(*Var); ok {
		if v.Rigid {
			return kindImplies(v.Kind, k)
		}
		nk, ok := combineKinds(v.Kind, k)
		if ok {
			v.Kind = nk
		}
		return ok
	}
	switch k {
	case Number:
		return isCon(t, "Int") || isCon(t, "Float")
	case Comparable:
		if isCon(t, "Int") || isCon(t, "Float") || isCon(t, "Char") || isCon(t, "String") || isCon(t, "Bool") {
			return true
		}
		if isCon(t, "List") {
			return u.satisfies(Comparable, t.(*Con).Args[0])
		}
		if tup, ok := t.(*Tuple); ok && len(tup.Elems) > 0 {
			for _, e := range tup.Elems {
				if !u.satisfies(Comparable, e) {
					return false
				}
			}
			return true
		}
		return u.orderable(t)
	case Appendable:
		return isCon(t, "String") || isCon(t, "List")
	case CompAppend:
		if isCon(t, "String") {
			return true
		}
		if isCon(t, "List") {
			return u.satisfies(Comparable, t.(*Con).Args[0])
		}
	}
	return false
}

// orderable reports whether t is comparable the way real Sky widens Elm's
// class: a custom type whose type arguments are comparable (its values order
// by constructor declaration order, then payload) or a closed record whose
// fields are (ordered field by field, by name). Dict, Set, functions and
// runtime handles are not.
func (u *unifier) orderable(t Type) bool {
	switch t := t.(type) {
	case *Con:
		if t.Module == "" && (t.Name == "Dict" || t.Name == "Set") || isRuntimeHandle(t) {
			return false
		}
		for _, a := range t.Args {
			if !u.satisfies(Comparable, a) {
				return false
			}
		}
		return true
	case *Record:
		fields, tail := flatten(t)
		if tail != nil {
			return false
		}
		for _, ft := range fields {
			if !u.satisfies(Comparable, ft) {
				return false
			}
		}
		return true
	}
	return false
}

// flatten collects a record's fields along its extension chain and returns
// them with the final tail (nil when closed, else an unbound variable).
func flatten(r *Record) (map[string]Type, Type) {
	fields := map[string]Type{}
	var tail Type
	for {
		for n, t := range r.Fields {
			if _, dup := fields[n]; !dup {
				fields[n] = t
			}
		}
		if r.Ext == nil {
			return fields, nil
		}
		switch e := unalias(r.Ext).(type) {
		case *Record:
			r = e
			continue
		default:
			tail = e
		}
		return fields, tail
	}
}

func (u *unifier) unifyRecords(x, y *Record, expected, found Type) *mismatch {
	fx, tx := flatten(x)
	fy, ty := flatten(y)
	var onlyX, onlyY []string
	for n, t := range fx {
		if t2, ok := fy[n]; ok {
			if m := u.unify(t, t2); m != nil {
				return m
			}
		} else {
			onlyX = append(onlyX, n)
		}
	}
	for n := range fy {
		if _, ok := fx[n]; !ok {
			onlyY = append(onlyY, n)
		}
	}
	sort.Strings(onlyX)
	sort.Strings(onlyY)
	sub := func(names []string, from map[string]Type, ext Type) *Record {
		r := &Record{Fields: map[string]Type{}, Ext: ext}
		for _, n := range names {
			r.Fields[n] = from[n]
		}
		return r
	}
	// The expected side's extra fields must be absorbed by the found side's
	// row, and vice versa.
	fail := func() *mismatch {
		m := &mismatch{expected: expected, found: found}
		if len(onlyX) > 0 && !canExtend(ty) {
			m.missing = onlyX
			m.fieldsOf = &Record{Fields: fy}
		} else if len(onlyY) > 0 {
			m.extra = onlyY
			m.fieldsOf = &Record{Fields: fx}
		}
		return m
	}
	switch {
	case len(onlyX) == 0 && len(onlyY) == 0:
		return u.unifyTails(tx, ty, fail)
	case len(onlyX) == 0:
		if !canExtend(tx) {
			return fail()
		}
		if m := u.unify(tx, sub(onlyY, fy, ty)); m != nil {
			return fail()
		}
		return nil
	case len(onlyY) == 0:
		if !canExtend(ty) {
			return fail()
		}
		if m := u.unify(ty, sub(onlyX, fx, tx)); m != nil {
			return fail()
		}
		return nil
	}
	if !canExtend(tx) || !canExtend(ty) {
		return fail()
	}
	r := u.fresh()
	if m := u.unify(tx, sub(onlyY, fy, r)); m != nil {
		return fail()
	}
	if m := u.unify(ty, sub(onlyX, fx, r)); m != nil {
		return fail()
	}
	return nil
}

func canExtend(tail Type) bool {
	v, ok := tail.(*Var)
	return ok && !v.Rigid
}

func (u *unifier) unifyTails(a, b Type, fail func() *mismatch) *mismatch {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		if canExtend(b) {
			b.(*Var).Link = &Record{Fields: map[string]Type{}}
			return nil
		}
		return fail()
	case b == nil:
		if canExtend(a) {
			a.(*Var).Link = &Record{Fields: map[string]Type{}}
			return nil
		}
		return fail()
	}
	if m := u.unify(a, b); m != nil {
		return fail()
	}
	return nil
}
