package eval

import (
	"context"
	"strings"

	"skydurable/compiler/syntax"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// letNode is one let binding during compilation.
type letNode struct {
	name     string
	pos      syntax.Pos
	isFn     bool
	wildcard bool // `_ = expr`: a Task value runs (the let-task rule)
	deps     []int
	lam      *lambda // isFn
	slot     int     // isFn: where the closure goes
	body     code    // !isFn
	match    matcher // !isFn && !wildcard
}

// let compiles `let bindings in body`. Bindings may refer to each other in
// any order: functions are created first (so they may be mutually
// recursive), then values are computed in dependency order; a cycle through
// a value is a compile error.
//
// The let-task rule: a binding `_ = t` whose value is a Task runs t. If the
// let's body is itself a Task, the let's value is a Task that first runs
// each such t in order, then the body; the first failure is that Task's
// failure. Otherwise each t runs at once (under the driver's context) and a
// failure is a runtime error naming the failure.
func (c *compiler) let(e *syntax.Let, sc *scope, tail bool) code {
	ls := sc.child()
	nodes := make([]*letNode, len(e.Bindings))
	owner := map[*binding]int{}
	hasWildcard := false
	for i, b := range e.Bindings {
		n := &letNode{pos: b.Range().Start}
		nodes[i] = n
		switch b := b.(type) {
		case *syntax.ValueDecl:
			n.name = b.Name.Name
			bnd := ls.bind(n.name)
			owner[bnd], n.slot = i, bnd.slot
			_, isLambda := b.Body.(*syntax.Lambda)
			n.isFn = len(b.Params) > 0 || isLambda
			if !n.isFn {
				slot := bnd.slot
				n.match = func(v value.Value, fr *frame) bool { fr.slots[slot] = v; return true }
			}
		case *syntax.Destructure:
			if _, ok := b.Pattern.(*syntax.WildcardPat); ok {
				n.name, n.wildcard, hasWildcard = "_", true, true
				continue
			}
			before := map[*binding]bool{}
			for _, x := range ls.vars {
				before[x] = true
			}
			n.match = c.pattern(b.Pattern, ls)
			var names []string
			for name, x := range ls.vars {
				if !before[x] {
					owner[x] = i
					names = append(names, name)
				}
			}
			n.name = strings.Join(names, ", ")
		}
	}
	cur := 0
	ls.track = func(b *binding) {
		if j, ok := owner[b]; ok {
			nodes[cur].deps = append(nodes[cur].deps, j)
		}
	}
	for i, b := range e.Bindings {
		cur = i
		n := nodes[i]
		switch b := b.(type) {
		case *syntax.ValueDecl:
			switch {
			case len(b.Params) > 0:
				n.lam = c.lambda(n.name, b.Params, b.Body, &fnScope{selfBinding: ls.vars[n.name]}, ls)
			case n.isFn:
				lam := b.Body.(*syntax.Lambda)
				n.lam = c.lambda(n.name, lam.Params, lam.Body, &fnScope{selfBinding: ls.vars[n.name]}, ls)
			default:
				n.body = c.expr(b.Body, ls, false)
			}
		case *syntax.Destructure:
			n.body = c.expr(b.Body, ls, false)
		}
	}
	ls.track = nil
	order := c.letOrder(nodes)
	body := c.expr(e.Body, ls, tail && !hasWildcard)
	var fns []*letNode
	for _, n := range nodes {
		if n.isFn {
			fns = append(fns, n)
		}
	}
	src, prog := c.src, c.prog
	return func(fr *frame) (value.Value, error) {
		for _, n := range fns {
			fr.slots[n.slot] = &closure{lam: n.lam, env: fr}
		}
		var pending []value.Task
		var pendingPos []syntax.Pos
		for _, n := range order {
			v, err := n.body(fr)
			if err != nil {
				return nil, err
			}
			if n.wildcard {
				if t, ok := v.(value.Task); ok {
					pending = append(pending, t)
					pendingPos = append(pendingPos, n.pos)
				}
				continue
			}
			if !n.match(v, fr) {
				return nil, src.errorAt(n.pos, "this pattern does not match "+value.Show(v)+"; hint: use `case` when a value may have another shape")
			}
		}
		out, err := body(fr)
		if err != nil || len(pending) == 0 {
			return out, err
		}
		if t, ok := out.(value.Task); ok {
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				for _, p := range pending {
					if _, err := task.Run(ctx, p.T); err != nil {
						return nil, err
					}
				}
				return task.Run(ctx, t.T)
			})}, nil
		}
		for i, p := range pending {
			if _, err := task.Run(prog.ctx, p.T); err != nil {
				if value.IsRuntimeError(err) {
					return nil, err
				}
				return nil, src.errorAt(pendingPos[i], "the task of this `let _ =` failed with "+value.Show(value.FromError(err)))
			}
		}
		return out, nil
	}
}

// letOrder orders the value bindings so each comes after what it uses
// (directly or through a let function), keeping source order otherwise.
func (c *compiler) letOrder(nodes []*letNode) []*letNode {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make([]int, len(nodes))
	var stack []int
	var order []*letNode
	var visit func(i int)
	visit = func(i int) {
		state[i] = visiting
		stack = append(stack, i)
		for _, d := range nodes[i].deps {
			switch state[d] {
			case unvisited:
				visit(d)
			case visiting:
				c.reportLetCycle(nodes, stack, d)
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
		if !nodes[i].isFn {
			order = append(order, nodes[i])
		}
	}
	for i := range nodes {
		if state[i] == unvisited {
			visit(i)
		}
	}
	return order
}

// reportLetCycle reports a dependency cycle unless it runs only through
// functions (mutual recursion, which is fine).
func (c *compiler) reportLetCycle(nodes []*letNode, stack []int, from int) {
	start := len(stack) - 1
	for stack[start] != from {
		start--
	}
	var names []string
	allFns := true
	for _, i := range stack[start:] {
		names = append(names, "`"+nodes[i].name+"`")
		allFns = allFns && nodes[i].isFn
	}
	if allFns {
		return
	}
	names = append(names, "`"+nodes[from].name+"`")
	c.errorf(nodes[from].pos, "these let bindings depend on each other in a cycle: %s; hint: a value cannot be defined in terms of itself (make it a function, or break the cycle)", strings.Join(names, " -> "))
}
