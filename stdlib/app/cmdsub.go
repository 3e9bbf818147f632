package app

import (
	rapp "skydurable/runtime/app"
	"skydurable/runtime/value"
)

func cmdKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Cmd_none", Arity: 0, Fn: func([]value.Value) (value.Value, error) {
			return rapp.CmdValue(rapp.Cmd{}), nil
		}},
		{Name: "Cmd_batch", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, ok := a[0].(*value.List)
			if !ok && a[0] != nil {
				return nil, value.BadArg("Cmd.batch", "a List of Cmd", a[0])
			}
			var cmds []rapp.Cmd
			for ; l != nil; l = l.Tail {
				c, err := rapp.CmdOf("Cmd.batch", l.Head)
				if err != nil {
					return nil, err
				}
				cmds = append(cmds, c)
			}
			return rapp.CmdValue(rapp.Batch(cmds...)), nil
		}},
		{Name: "Cmd_perform", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			t, ok := a[0].(value.Task)
			if !ok {
				return nil, value.BadArg("Cmd.perform", "a Task", a[0])
			}
			if _, ok := a[1].(value.Func); !ok {
				return nil, value.BadArg("Cmd.perform", "a function from Result to msg", a[1])
			}
			return rapp.CmdValue(rapp.PerformCmd(t, a[1])), nil
		}},
	}
}

func subKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Sub_none", Arity: 0, Fn: func([]value.Value) (value.Value, error) {
			return rapp.SubValue(rapp.Sub{}), nil
		}},
		{Name: "Sub_batch", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			l, ok := a[0].(*value.List)
			if !ok && a[0] != nil {
				return nil, value.BadArg("Sub.batch", "a List of Sub", a[0])
			}
			var subs []rapp.Sub
			for ; l != nil; l = l.Tail {
				s, err := rapp.SubOf("Sub.batch", l.Head)
				if err != nil {
					return nil, err
				}
				subs = append(subs, s)
			}
			return rapp.SubValue(rapp.BatchSub(subs...)), nil
		}},
		{Name: "Sub_every", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			ms, ok := a[0].(int64)
			if !ok {
				return nil, value.BadArg("Sub.every", "an Int interval in milliseconds", a[0])
			}
			s, err := rapp.EverySub(ms, a[1])
			if err != nil {
				return nil, err
			}
			return rapp.SubValue(s), nil
		}},
		{Name: "Sub_everyWithTime", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			ms, ok := a[0].(int64)
			if !ok {
				return nil, value.BadArg("Sub.everyWithTime", "an Int interval in milliseconds", a[0])
			}
			if _, ok := a[1].(value.Func); !ok {
				return nil, value.BadArg("Sub.everyWithTime", "a function from Int to msg", a[1])
			}
			s, err := rapp.EveryWithTimeSub(ms, a[1])
			if err != nil {
				return nil, err
			}
			return rapp.SubValue(s), nil
		}},
	}
}
