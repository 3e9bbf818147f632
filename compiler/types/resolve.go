package types

import (
	"sort"
	"strings"

	"skydurable/compiler/syntax"
)

// Name resolution for expressions and patterns: which local, top-level
// value or constructor a name means, and the "did you mean" when none.

// inferVar resolves a variable and instantiates its scheme.
func (c *checker) inferVar(x *syntax.Var, e *env) Type {
	if x.Module == "" {
		if s, ok := e.lookup(x.Name); ok {
			c.info.Refs[x] = Ref{Kind: RefLocal, Name: x.Name}
			return c.u.instantiate(s)
		}
		if vi := c.mod.values[x.Name]; vi != nil {
			return c.useValue(x, vi)
		}
		cands := c.sc.values[x.Name]
		if len(cands) > 1 {
			var mods []string
			for _, v := range cands {
				mods = append(mods, v.Module+"."+v.Name)
			}
			c.errorf(x, "AMBIGUOUS NAME", "This `"+x.Name+"` could refer to several imported values:\n\n"+
				indent(strings.Join(mods, "\n")), "",
				"Qualify it (e.g. `"+mods[0]+"`) or remove it from one of the exposing lists.")
			return c.u.fresh()
		}
		if len(cands) == 1 {
			return c.useValue(x, cands[0])
		}
		if vi := c.sc.pvalues[x.Name]; vi != nil {
			return c.useValue(x, vi)
		}
		c.unknownValue(x, e)
		return c.u.fresh()
	}
	mods := c.sc.quals[x.Module]
	if len(mods) == 0 {
		if x.Module == "Ffi" && x.Name == "kernel" {
			c.errorf(x, "BAD KERNEL", "`Ffi.kernel` may only be the whole body of an annotated top-level binding:",
				"", "Write `name : Type` then `name = Ffi.kernel \"Module_name\"`.")
			return c.u.fresh()
		}
		c.unknownQualifier(x, x.Module)
		return c.u.fresh()
	}
	for _, dm := range mods {
		if vi := dm.expValues[x.Name]; vi != nil {
			return c.useValue(x, vi)
		}
	}
	c.unknownValue(x, e)
	return c.u.fresh()
}

func (c *checker) useValue(x syntax.Node, vi *ValueInfo) Type {
	c.info.Refs[x] = Ref{Kind: RefTopLevel, Module: vi.Module, Name: vi.Name}
	if !vi.known {
		return c.u.fresh()
	}
	t := c.u.instantiate(vi.Scheme)
	c.notePersisted(x, vi, t)
	return t
}

func (c *checker) unknownValue(x *syntax.Var, e *env) {
	var local, explicit, defaults []string
	full := x.Name
	if x.Module != "" {
		full = x.Module + "." + x.Name
	} else {
		for s := e; s != nil; s = s.parent {
			for n := range s.names {
				local = append(local, n)
			}
		}
		local = append(local, c.mod.order...)
		for n := range c.sc.values {
			local = append(local, n)
		}
		for n := range c.sc.pvalues {
			local = append(local, n)
		}
	}
	for _, q := range c.sc.sortedQuals() {
		for _, dm := range c.sc.quals[q] {
			for n := range dm.expValues {
				if c.sc.defaultQual[q] {
					defaults = append(defaults, q+"."+n)
				} else {
					explicit = append(explicit, q+"."+n)
				}
			}
		}
	}
	cands := [][]string{local, explicit, defaults}
	msg := "I cannot find a `" + full + "` variable:"
	if x.Module != "" {
		msg = "The `" + x.Module + "` module does not expose `" + x.Name + "`:"
	}
	hint := didYouMean(full, cands...)
	if hint != "" {
		hint = strings.Replace(hint, "Did you mean `", "Did you mean ", 1)
		hint = strings.TrimSuffix(hint, "`?") + "?"
	}
	if hint == "" && x.Module != "" {
		if mods := c.sc.quals[x.Module]; len(mods) > 0 {
			hint = exposeHint(mods[0], x.Name, false)
		}
	}
	if (x.Module != "" && c.sc.missing[x.Module]) || (x.Module == "" && c.sc.fromMissing(x.Name, false)) {
		return // the import itself was reported
	}
	c.errorf(x, "NAMING ERROR", msg, "", hint)
}

// lookupCtor resolves a constructor name: a custom-type constructor, a
// record alias used as a constructor, or True/False.
func (c *checker) lookupCtor(n syntax.Node, module, name string) (*CtorInfo, *TypeInfo, bool) {
	if module == "" {
		if ct := c.mod.ctors[name]; ct != nil {
			return ct, nil, true
		}
		if ti := c.mod.types[name]; ti != nil && ti.RecordCtor != nil {
			return nil, ti, true
		}
		if cands := c.sc.ctors[name]; len(cands) > 0 {
			if len(cands) > 1 {
				c.errorf(n, "AMBIGUOUS NAME", "The constructor `"+name+"` is exposed by several imports:", "",
					"Qualify it with its module alias.")
			}
			return cands[0], nil, true
		}
		for _, ti := range c.sc.types[name] {
			if ti.RecordCtor != nil {
				return nil, ti, true
			}
		}
		if ct := c.sc.pctors[name]; ct != nil {
			return ct, nil, true
		}
		if ti := c.sc.ptypes[name]; ti != nil && ti.RecordCtor != nil {
			return nil, ti, true
		}
		if ct := builtinCtors[name]; ct != nil {
			return ct, nil, true
		}
	} else {
		mods := c.sc.quals[module]
		if len(mods) == 0 {
			c.unknownQualifier(n, module)
			return nil, nil, false
		}
		for _, dm := range mods {
			if ct := dm.expCtors[name]; ct != nil {
				return ct, nil, true
			}
			if ti := dm.expTypes[name]; ti != nil && ti.RecordCtor != nil {
				return nil, ti, true
			}
		}
	}
	var cands []string
	for k := range c.mod.ctors {
		cands = append(cands, k)
	}
	for k := range c.sc.ctors {
		cands = append(cands, k)
	}
	for k := range c.sc.pctors {
		cands = append(cands, k)
	}
	for q, ms := range c.sc.quals {
		for _, dm := range ms {
			for k := range dm.expCtors {
				cands = append(cands, q+"."+k)
			}
		}
	}
	cands = append(cands, "True", "False")
	if module == "" && c.sc.fromMissing(name, true) {
		return nil, nil, false // the import itself was reported
	}
	full := name
	if module != "" {
		full = module + "." + name
	}
	hint := didYouMean(full, cands)
	if hint == "" {
		hint = c.ctorHint(name)
	}
	c.errorf(n, "NAMING ERROR", "I cannot find a `"+full+"` constructor:", "", hint)
	return nil, nil, false
}

func recordCtorScheme(ti *TypeInfo) Scheme {
	var args []Type
	rec, ok := unalias(ti.Body).(*Record)
	if !ok {
		return Scheme{Type: &Var{level: genericLevel}} // its definition was reported
	}
	for _, f := range ti.RecordCtor {
		args = append(args, rec.Fields[f])
	}
	var params []Type
	for _, v := range ti.ParamVars {
		params = append(params, v)
	}
	self := &Alias{Module: ti.Module, Name: ti.Name, Args: params, Real: ti.Body}
	return Scheme{Type: fn(append(args, self)...)}
}

func (c *checker) inferCtor(x *syntax.Ctor) Type {
	ct, ti, ok := c.lookupCtor(x, x.Module, x.Name)
	if !ok {
		return c.u.fresh()
	}
	if ti != nil {
		c.info.Refs[x] = Ref{Kind: RefRecordCtor, Module: ti.Module, Name: ti.Name}
		return c.u.instantiate(recordCtorScheme(ti))
	}
	c.info.Refs[x] = Ref{Kind: RefCtor, Module: ct.Module, Name: ct.Name}
	return c.u.instantiate(ct.Scheme)
}

// ctorHint explains why a constructor defined in some module is not in
// scope: its type is opaque, or it was not imported.
func (c *checker) ctorHint(name string) string {
	var mods []string
	for n := range c.modules {
		mods = append(mods, n)
	}
	sort.Strings(mods)
	for _, n := range mods {
		dm := c.modules[n]
		ct := dm.ctors[name]
		if ct == nil || dm == c.mod {
			continue
		}
		if dm.expCtors[name] == nil {
			return "`" + name + "` is a constructor of the type `" + ct.Type.Name + "` in `" + dm.name +
				"`, which keeps it private (it exposes `" + ct.Type.Name + "` without `(..)`): use the functions " +
				"that module exposes to make one."
		}
		return "`" + name + "` is defined in `" + dm.name + "`: import it with `import " + dm.name +
			" exposing (" + ct.Type.Name + "(..))`."
	}
	return "If it is defined in another module, import its type with `exposing (Type(..))`."
}

// inferArg infers an argument whose expected type is known: a lambda is
// checked against it (its parameters take the expected argument types
// before its body is checked, so a mistake in the body is reported where it
// is); any other expression is inferred on its own.
func (c *checker) inferArg(x syntax.Expr, expected Type, e *env) Type {
	if l, ok := x.(*syntax.Lambda); ok {
		t := c.inferLambda(l, expected, e)
		c.info.Types[x] = t
		return t
	}
	return c.infer(x, e)
}

// inferLambda infers `\p1 … pn -> body`; when expected is a function type,
// each parameter pattern is first unified with its argument type (a
// mismatch there is left for the caller's check of the whole lambda).
func (c *checker) inferLambda(x *syntax.Lambda, expected Type, e *env) Type {
	names := map[string]Scheme{}
	var params []Type
	cur := expected
	for _, p := range x.Params {
		pt := c.inferPattern(p, names)
		if cur != nil {
			if f, ok := unalias(cur).(*Fun); ok {
				if probe := c.u.unify(f.Arg, pt); probe == nil {
					cur = f.Res
				} else {
					cur = nil
				}
			} else {
				cur = nil
			}
		}
		params = append(params, pt)
		c.checkIrrefutable(p, "lambda parameter")
	}
	body := c.infer(x.Body, e.child(names))
	return fn(append(params, body)...)
}
