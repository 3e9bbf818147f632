package core

import "skydurable/runtime/value"

func maybeKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Maybe_values", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, err := listArg("Maybe.values", a[0])
			if err != nil {
				return nil, err
			}
			var out listBuilder
			for ; l != nil; l = l.Tail {
				if c, ok := l.Head.(value.Ctor); ok && c.Name == "Just" && len(c.Args) == 1 {
					out.add(c.Args[0])
				}
			}
			return out.done(), nil
		}},
	}
}
