package eval

import (
	"skydurable/compiler/syntax"
	"skydurable/runtime/value"
)

// Values returns the value of every top-level declaration of the program's
// own modules (not the stdlib's), module by module in load order and in
// declaration order within a module. Tools that look for values of a kind
// (`sky durable replay` finds the program's workflows) use it; loading the
// program already computed them, so this runs no code.
func (p *Program) Values() []value.Value {
	var out []value.Value
	for _, m := range p.modules {
		if m.stdlib {
			continue
		}
		for _, d := range m.File.Decls {
			vd, ok := d.(*syntax.ValueDecl)
			if !ok {
				continue
			}
			if g := m.values[vd.Name.Name]; g != nil && g.state == stateReady {
				out = append(out, g.v)
			}
		}
	}
	return out
}
