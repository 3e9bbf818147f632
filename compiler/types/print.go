package types

import (
	"sort"
	"strconv"
	"strings"
)

// Printer renders types the way a user writes them. One Printer names the
// variables of every type it prints consistently, so an error message that
// shows an expected and a found type uses the same `a` for the same
// variable. Qualify, when set, decides how a module's type is spelled from
// the place of the error (e.g. "Durable.Ctx" or "Ctx").
type Printer struct {
	Qualify func(module, name string) string
	names   map[*Var]string
	used    map[string]bool
	letter  int
}

// TypeString renders t with a fresh printer and unqualified names.
func TypeString(t Type) string {
	var p Printer
	return p.String(t)
}

// String renders t.
func (p *Printer) String(t Type) string {
	var b strings.Builder
	p.write(&b, t, 0)
	return b.String()
}

// Precedence contexts: 0 top, 1 function argument, 2 type-application argument.
func (p *Printer) write(b *strings.Builder, t Type, ctx int) {
	switch x := Prune(t).(type) {
	case *Var:
		b.WriteString(p.varName(x))
	case *Con:
		p.app(b, p.qual(x.Module, x.Name), x.Args, ctx)
	case *Alias:
		p.app(b, p.qual(x.Module, x.Name), x.Args, ctx)
	case *Fun:
		if ctx > 0 {
			b.WriteString("(")
		}
		p.write(b, x.Arg, 1)
		b.WriteString(" -> ")
		p.write(b, x.Res, 0)
		if ctx > 0 {
			b.WriteString(")")
		}
	case *Tuple:
		if len(x.Elems) == 0 {
			b.WriteString("()")
			return
		}
		b.WriteString("( ")
		for i, e := range x.Elems {
			if i > 0 {
				b.WriteString(", ")
			}
			p.write(b, e, 0)
		}
		b.WriteString(" )")
	case *Record:
		fields, tail := flatten(x)
		if len(fields) == 0 && tail == nil {
			b.WriteString("{}")
			return
		}
		b.WriteString("{ ")
		if tail != nil {
			p.write(b, tail, 0)
			b.WriteString(" | ")
		}
		names := make([]string, 0, len(fields))
		for n := range fields {
			names = append(names, n)
		}
		sort.Strings(names)
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
			b.WriteString(" : ")
			p.write(b, fields[n], 0)
		}
		b.WriteString(" }")
	}
}

func (p *Printer) app(b *strings.Builder, name string, args []Type, ctx int) {
	if len(args) == 0 {
		b.WriteString(name)
		return
	}
	if ctx == 2 {
		b.WriteString("(")
	}
	b.WriteString(name)
	for _, a := range args {
		b.WriteString(" ")
		p.write(b, a, 2)
	}
	if ctx == 2 {
		b.WriteString(")")
	}
}

func (p *Printer) qual(module, name string) string {
	if p.Qualify == nil || module == "" {
		return name
	}
	return p.Qualify(module, name)
}

func (p *Printer) varName(v *Var) string {
	if n, ok := p.names[v]; ok {
		return n
	}
	if p.names == nil {
		p.names = map[*Var]string{}
		p.used = map[string]bool{}
	}
	var n string
	switch {
	case v.Name != "" && (v.Rigid || !p.used[v.Name]) && (v.Kind == NoConstraint || constraintOf(v.Name) == v.Kind):
		n = v.Name
		if p.used[n] {
			n = p.unique(n)
		}
	case v.Kind != NoConstraint:
		n = p.unique(v.Kind.String())
	default:
		for {
			n = letterName(p.letter)
			p.letter++
			if !p.used[n] {
				break
			}
		}
	}
	p.used[n] = true
	p.names[v] = n
	return n
}

func (p *Printer) unique(base string) string {
	if !p.used[base] {
		return base
	}
	for i := 1; ; i++ {
		n := base + strconv.Itoa(i)
		if !p.used[n] {
			return n
		}
	}
}

func letterName(i int) string {
	s := string(rune('a' + i%26))
	if i >= 26 {
		s += strconv.Itoa(i / 26)
	}
	return s
}
