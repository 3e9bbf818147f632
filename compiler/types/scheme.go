package types

// Type schemes: generalisation at let boundaries (variables deeper than
// the current level become generic) and instantiation at each use.

// instantiate copies a scheme's generic variables afresh at the current level.
func (u *unifier) instantiate(s Scheme) Type {
	m := map[*Var]Type{}
	return u.inst(s.Type, m)
}

func (u *unifier) inst(t Type, m map[*Var]Type) Type {
	switch x := Prune(t).(type) {
	case *Var:
		if x.level != genericLevel {
			return x
		}
		if n, ok := m[x]; ok {
			return n
		}
		n := u.fresh()
		n.Kind, n.Name = x.Kind, x.Name
		m[x] = n
		return n
	case *Con:
		if len(x.Args) == 0 {
			return x
		}
		args := make([]Type, len(x.Args))
		for i, a := range x.Args {
			args[i] = u.inst(a, m)
		}
		return &Con{Module: x.Module, Name: x.Name, Args: args}
	case *Fun:
		return &Fun{Arg: u.inst(x.Arg, m), Res: u.inst(x.Res, m)}
	case *Tuple:
		if len(x.Elems) == 0 {
			return x
		}
		el := make([]Type, len(x.Elems))
		for i, a := range x.Elems {
			el[i] = u.inst(a, m)
		}
		return &Tuple{Elems: el}
	case *Record:
		r := &Record{Fields: make(map[string]Type, len(x.Fields))}
		for n, f := range x.Fields {
			r.Fields[n] = u.inst(f, m)
		}
		if x.Ext != nil {
			r.Ext = u.inst(x.Ext, m)
		}
		return r
	case *Alias:
		args := make([]Type, len(x.Args))
		for i, a := range x.Args {
			args[i] = u.inst(a, m)
		}
		return &Alias{Module: x.Module, Name: x.Name, Args: args, Real: u.inst(x.Real, m)}
	}
	return t
}

// generalize quantifies the variables of t created at a deeper level than
// the current one (let-polymorphism) and returns the scheme.
func (u *unifier) generalize(t Type) Scheme {
	u.gen(t)
	return Scheme{Type: t}
}

func (u *unifier) gen(t Type) {
	switch x := Prune(t).(type) {
	case *Var:
		if x.level > u.level && x.level != genericLevel {
			x.level = genericLevel
		}
	case *Con:
		for _, a := range x.Args {
			u.gen(a)
		}
	case *Fun:
		u.gen(x.Arg)
		u.gen(x.Res)
	case *Tuple:
		for _, a := range x.Elems {
			u.gen(a)
		}
	case *Record:
		for _, f := range x.Fields {
			u.gen(f)
		}
		if x.Ext != nil {
			u.gen(x.Ext)
		}
	case *Alias:
		for _, a := range x.Args {
			u.gen(a)
		}
		u.gen(x.Real)
	}
}
