package types

import (
	"strconv"
	"strings"

	"skydurable/compiler/syntax"
)

// Exhaustiveness and redundancy follow the usefulness algorithm of
// Maranget ("Warnings for pattern matching"): patterns are simplified to
// constructors applied to sub-patterns, and a row of a pattern matrix is
// useful when some value matches it and no earlier row.

// spat is a simplified pattern: a wildcard (ctor == nil and lit == "") or a
// constructor (possibly a literal) applied to sub-patterns.
type spat struct {
	ctor *sctor
	args []*spat
}

// sctor is a constructor together with its siblings; literals have an
// open (infinite) set of siblings.
type sctor struct {
	name  string
	arity int
	// all lists every constructor of the type, nil for literals.
	all []*sctor
}

var wild = &spat{}

// ctor sets are shared per type so that constructors compare by pointer.
type ctorSets struct {
	custom map[*TypeInfo][]*sctor
	tuples map[int]*sctor
	lits   map[string]*sctor
	list   []*sctor
	unit   *sctor
}

func newCtorSets() *ctorSets {
	nilC := &sctor{name: "[]"}
	consC := &sctor{name: "::", arity: 2}
	list := []*sctor{nilC, consC}
	nilC.all, consC.all = list, list
	unit := &sctor{name: "()"}
	unit.all = []*sctor{unit}
	return &ctorSets{custom: map[*TypeInfo][]*sctor{}, tuples: map[int]*sctor{}, lits: map[string]*sctor{}, list: list, unit: unit}
}

func (cs *ctorSets) forType(ti *TypeInfo) []*sctor {
	if s, ok := cs.custom[ti]; ok {
		return s
	}
	s := make([]*sctor, len(ti.Ctors))
	for i, ct := range ti.Ctors {
		s[i] = &sctor{name: ct.Name, arity: ct.Arity}
	}
	for _, x := range s {
		x.all = s
	}
	cs.custom[ti] = s
	return s
}

func (cs *ctorSets) tuple(n int) *sctor {
	if t, ok := cs.tuples[n]; ok {
		return t
	}
	t := &sctor{name: "(" + strconv.Itoa(n) + ")", arity: n}
	t.all = []*sctor{t}
	cs.tuples[n] = t
	return t
}

func (cs *ctorSets) lit(s string) *sctor {
	if t, ok := cs.lits[s]; ok {
		return t
	}
	t := &sctor{name: s}
	cs.lits[s] = t
	return t
}

// simplify converts an AST pattern, using the checker's constructor
// resolutions. Unresolved constructors count as wildcards (already
// reported as naming errors).
func (c *checker) simplify(p syntax.Pattern, cs *ctorSets) *spat {
	switch p := p.(type) {
	case *syntax.AliasPat:
		return c.simplify(p.Pattern, cs)
	case *syntax.UnitPat:
		return &spat{ctor: cs.unit}
	case *syntax.TuplePat:
		s := &spat{ctor: cs.tuple(len(p.Elems))}
		for _, e := range p.Elems {
			s.args = append(s.args, c.simplify(e, cs))
		}
		return s
	case *syntax.ListPat:
		out := &spat{ctor: cs.list[0]}
		for i := len(p.Elems) - 1; i >= 0; i-- {
			out = &spat{ctor: cs.list[1], args: []*spat{c.simplify(p.Elems[i], cs), out}}
		}
		return out
	case *syntax.ConsPat:
		return &spat{ctor: cs.list[1], args: []*spat{c.simplify(p.Head, cs), c.simplify(p.Tail, cs)}}
	case *syntax.CtorPat:
		ct := c.patCtors[p]
		if ct == nil || len(p.Args) != ct.Arity {
			return wild
		}
		set := cs.forType(ct.Type)
		var sc *sctor
		for i, x := range ct.Type.Ctors {
			if x == ct {
				sc = set[i]
			}
		}
		if sc == nil {
			return wild
		}
		s := &spat{ctor: sc}
		for _, a := range p.Args {
			s.args = append(s.args, c.simplify(a, cs))
		}
		return s
	case *syntax.IntPat:
		return &spat{ctor: cs.lit(strconv.FormatInt(p.Value, 10))}
	case *syntax.FloatPat:
		return &spat{ctor: cs.lit(strconv.FormatFloat(p.Value, 'g', -1, 64))}
	case *syntax.StringPat:
		return &spat{ctor: cs.lit(strconv.Quote(p.Value))}
	case *syntax.CharPat:
		return &spat{ctor: cs.lit("'" + string(p.Value) + "'")}
	}
	return wild
}

// specialize keeps the rows whose head matches ctor k, replacing the head
// by its arguments.
func specialize(rows [][]*spat, k *sctor) [][]*spat {
	var out [][]*spat
	for _, r := range rows {
		if h := r[0]; h.ctor == nil {
			row := make([]*spat, 0, k.arity+len(r)-1)
			for i := 0; i < k.arity; i++ {
				row = append(row, wild)
			}
			out = append(out, append(row, r[1:]...))
		} else if h.ctor == k {
			row := append(append([]*spat{}, h.args...), r[1:]...)
			out = append(out, row)
		}
	}
	return out
}

// defaults keeps the rows whose head is a wildcard, dropping the head.
func defaults(rows [][]*spat) [][]*spat {
	var out [][]*spat
	for _, r := range rows {
		if r[0].ctor == nil {
			out = append(out, r[1:])
		}
	}
	return out
}

// headCtors returns the distinct constructors in the first column and
// whether they cover every constructor of their type.
func headCtors(rows [][]*spat) ([]*sctor, bool) {
	var seen []*sctor
	set := map[*sctor]bool{}
	for _, r := range rows {
		if k := r[0].ctor; k != nil && !set[k] {
			set[k] = true
			seen = append(seen, k)
		}
	}
	if len(seen) == 0 || seen[0].all == nil {
		return seen, false
	}
	for _, k := range seen[0].all {
		if !set[k] {
			return seen, false
		}
	}
	return seen, true
}

// useful reports whether row q matches some value no row of rows matches.
func useful(rows [][]*spat, q []*spat) bool {
	if len(rows) == 0 {
		return true
	}
	if len(q) == 0 {
		return false
	}
	if k := q[0].ctor; k != nil {
		return useful(specialize(rows, k), append(append([]*spat{}, q[0].args...), q[1:]...))
	}
	seen, complete := headCtors(rows)
	if complete {
		for _, k := range seen[0].all {
			row := make([]*spat, 0, k.arity+len(q)-1)
			for i := 0; i < k.arity; i++ {
				row = append(row, wild)
			}
			if useful(specialize(rows, k), append(row, q[1:]...)) {
				return true
			}
		}
		return false
	}
	return useful(defaults(rows), q[1:])
}

// missing returns example rows of n patterns that no row matches.
func missing(rows [][]*spat, n int) [][]*spat {
	if len(rows) == 0 {
		row := make([]*spat, n)
		for i := range row {
			row[i] = wild
		}
		return [][]*spat{row}
	}
	if n == 0 {
		return nil
	}
	seen, complete := headCtors(rows)
	if !complete {
		rest := missing(defaults(rows), n-1)
		if len(rest) == 0 {
			return nil
		}
		var heads []*spat
		if len(seen) == 0 || seen[0].all == nil {
			heads = []*spat{wild}
		} else {
			have := map[*sctor]bool{}
			for _, k := range seen {
				have[k] = true
			}
			for _, k := range seen[0].all {
				if !have[k] {
					h := &spat{ctor: k}
					for i := 0; i < k.arity; i++ {
						h.args = append(h.args, wild)
					}
					heads = append(heads, h)
				}
			}
		}
		var out [][]*spat
		for _, h := range heads {
			for _, r := range rest {
				out = append(out, append([]*spat{h}, r...))
			}
		}
		return out
	}
	var out [][]*spat
	for _, k := range seen[0].all {
		for _, r := range missing(specialize(rows, k), k.arity+n-1) {
			h := &spat{ctor: k, args: r[:k.arity]}
			out = append(out, append([]*spat{h}, r[k.arity:]...))
		}
	}
	return out
}

// showPat renders a simplified pattern as Sky source.
func showPat(p *spat, nested bool) string {
	k := p.ctor
	if k == nil {
		return "_"
	}
	switch {
	case k.name == "()":
		return "()"
	case k.name == "[]":
		return "[]"
	case k.name == "::":
		s := showPat(p.args[0], true) + " :: " + showPat(p.args[1], false)
		if nested {
			return "(" + s + ")"
		}
		return s
	case strings.HasPrefix(k.name, "(") && k.all != nil:
		parts := make([]string, len(p.args))
		for i, a := range p.args {
			parts[i] = showPat(a, false)
		}
		return "( " + strings.Join(parts, ", ") + " )"
	}
	if len(p.args) == 0 {
		return k.name
	}
	parts := []string{k.name}
	for _, a := range p.args {
		parts = append(parts, showPat(a, true))
	}
	s := strings.Join(parts, " ")
	if nested {
		return "(" + s + ")"
	}
	return s
}

// unresolved reports whether p uses a constructor that did not resolve:
// that was reported already (or its import was), and treating it as a
// wildcard would report branches as redundant or missing that are not.
func (c *checker) unresolved(p syntax.Pattern) bool {
	return someCtorPat(p, func(cp *syntax.CtorPat) bool { _, ok := c.info.Refs[cp]; return !ok })
}

// checkCase reports missing and redundant branches of a case expression.
func (c *checker) checkCase(x *syntax.Case) {
	for _, br := range x.Branches {
		if c.unresolved(br.Pattern) {
			return
		}
	}
	cs := newCtorSets()
	var rows [][]*spat
	for i, br := range x.Branches {
		row := []*spat{c.simplify(br.Pattern, cs)}
		if !useful(rows, row) {
			if _, wild := br.Pattern.(*syntax.WildcardPat); wild && i == len(x.Branches)-1 {
				// Real Sky accepts a catch-all after complete branches.
				c.warnf(br.Pattern, "WARNING: UNREACHABLE BRANCH", "The final `_` branch of this `case` can never run:",
					"The branches above it already handle every possible value.",
					"Remove the `_` branch, so that a constructor added later is reported where it is not handled.")
				continue
			}
			c.errorf(br.Pattern, "REDUNDANT PATTERN", "The "+ordinal(i+1)+" pattern of this `case` is redundant:",
				"Any value with this shape is already handled by an earlier pattern, so this branch can never run.",
				"Remove this branch, or move it above the branch that already covers it.")
			continue
		}
		rows = append(rows, row)
	}
	miss := missing(rows, 1)
	if len(miss) == 0 {
		return
	}
	var shown []string
	var names []string
	for i, r := range miss {
		if i == 4 {
			break
		}
		s := showPat(r[0], false)
		shown = append(shown, s)
		names = append(names, "`"+s+"`")
	}
	subject := syntax.Span{Start: x.Start, End: x.Subject.Range().End}
	hint := "this `case` does not handle " + strings.Join(names, ", ") +
		"; add a branch for it, or a final `_ ->` branch for every other value."
	if len(shown) == 1 && shown[0] == "_" {
		hint = "this `case` matches specific values only (literals have no end of possible values): add a final " +
			"`_ ->` branch for every other value."
	}
	if len(miss) > 4 {
		hint = "this `case` does not handle " + strings.Join(names, ", ") + " and more" +
			"; add branches for them, or a final `_ ->` branch for every other value."
	}
	c.errorAt(c.mod, subject, "MISSING PATTERNS", "This `case` does not have branches for all possibilities:",
		"Missing possibilities include:\n\n"+indent(strings.Join(shown, "\n")), hint)
}

// checkIrrefutable reports a parameter or let pattern that can fail.
func (c *checker) checkIrrefutable(p syntax.Pattern, where string) {
	if c.unresolved(p) {
		return
	}
	cs := newCtorSets()
	miss := missing([][]*spat{{c.simplify(p, cs)}}, 1)
	if len(miss) == 0 {
		return
	}
	c.errorf(p, "UNSAFE PATTERN", "This "+where+" pattern does not cover all possible values:",
		"It does not match, for example:\n\n"+indent(showPat(miss[0][0], false)),
		"Only patterns that always match (variables, tuples, records, single-constructor types) are allowed here; "+
			"use a `case` expression to handle the other possibilities.")
}
