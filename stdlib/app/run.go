package app

import (
	"context"
	"fmt"
	"io"
	"os"

	rapp "skydurable/runtime/app"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
	skycodec "skydurable/stdlib/codec"
	skydb "skydurable/stdlib/db"
	skydurable "skydurable/stdlib/durable"
)

// Kind is the value.Opaque kind of a Sky App.
const Kind = "App"

// Spec is what an App value holds: the program's functions and its options.
// Specs are immutable; each with* kernel returns a changed copy.
type Spec struct {
	Init, Update, View, Subscriptions value.Value
	// Input is the stdin line handler (withInput), or nil.
	Input value.Value
	// Durable is set by withDurable / withDurableId.
	Durable *DurableSpec
}

// DurableSpec is where and how App.withDurable keeps the model.
type DurableSpec struct {
	ID    string
	DB    *db.DB
	Codec skycodec.Codec
}

func specOf(fn string, v value.Value) (*Spec, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == Kind {
		if s, ok := o.V.(*Spec); ok {
			return s, nil
		}
	}
	return nil, value.BadArg(fn, "an App (from App.cli)", v)
}

func (s *Spec) value() value.Value { return value.Opaque{Kind: Kind, V: s} }

func appKernels(env Env) []value.Kernel {
	stores := durable.NewSnapshotStores()
	withDurable := func(fn string, id value.Value, a []value.Value) (value.Value, error) {
		sid, ok := id.(string)
		if !ok || sid == "" {
			return nil, value.BadArg(fn, "a non-empty String snapshot id", id)
		}
		d, err := skydb.FromValue(a[0])
		if err != nil {
			return nil, value.BadArg(fn, "a Db (from Db.open or Db.connect)", a[0])
		}
		cd, err := skycodec.FromValue(a[1])
		if err != nil {
			return nil, value.BadArg(fn, "a Codec of the model", a[1])
		}
		s, err := specOf(fn, a[2])
		if err != nil {
			return nil, err
		}
		c := *s
		c.Durable = &DurableSpec{ID: sid, DB: d, Codec: cd}
		return c.value(), nil
	}
	return []value.Kernel{
		{Name: "App_cli", Arity: 1, Fn: cli},
		{Name: "App_withInput", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			if _, ok := a[0].(value.Func); !ok {
				return nil, value.BadArg("App.withInput", "a function from String to msg", a[0])
			}
			s, err := specOf("App.withInput", a[1])
			if err != nil {
				return nil, err
			}
			c := *s
			c.Input = a[0]
			return c.value(), nil
		}},
		{Name: "App_withDurable", Arity: 3, Fn: func(a []value.Value) (value.Value, error) {
			return withDurable("App.withDurable", DefaultSnapshotID, a)
		}},
		{Name: "App_withDurableId", Arity: 4, Fn: func(a []value.Value) (value.Value, error) {
			return withDurable("App.withDurableId", a[0], a[1:])
		}},
		{Name: "App_run", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, err := specOf("App.run", a[0])
			if err != nil {
				return nil, err
			}
			prog := s.program(stores)
			opts := rapp.Options{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, NewTicker: env.NewTicker, StopSignals: env.StopSignals}
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
				if env.Getenv != nil {
					hints, err := durable.HintSettingsFromEnv(env.Getenv)
					if err != nil {
						return nil, err
					}
					stderr := io.Writer(os.Stderr)
					if env.Stderr != nil {
						stderr = env.Stderr
					}
					hints.Report = func(s string) { fmt.Fprintln(stderr, s) }
					ctx = skydurable.WithHintSettings(ctx, hints)
				}
				if err := rapp.Run(ctx, prog, opts); err != nil {
					return nil, err
				}
				return value.Unit{}, nil
			})}, nil
		}},
	}
}

// cli is App.cli: the record's four functions.
func cli(a []value.Value) (value.Value, error) {
	r, ok := a[0].(*value.Record)
	if !ok {
		return nil, value.BadArg("App.cli", "a record { init, update, view, subscriptions }", a[0])
	}
	s := &Spec{}
	for _, f := range []struct {
		name string
		into *value.Value
	}{{"init", &s.Init}, {"update", &s.Update}, {"view", &s.View}, {"subscriptions", &s.Subscriptions}} {
		v, ok := r.Get(f.name)
		if !ok {
			return nil, value.BadArg("App.cli", "a record with the field "+f.name, a[0])
		}
		if _, ok := v.(value.Func); !ok {
			return nil, value.BadArg("App.cli", "a function in the field "+f.name, v)
		}
		*f.into = v
	}
	return s.value(), nil
}

// program is the runtime/app form of s.
func (s *Spec) program(stores *durable.SnapshotStores) rapp.Program {
	p := rapp.Program{Init: s.Init, Update: s.Update, View: s.View, Subscriptions: s.Subscriptions, Input: s.Input}
	if ds := s.Durable; ds != nil {
		store := stores.For(ds.DB)
		p.Snapshots = &rapp.Snapshots{
			ID: ds.ID,
			Load: func(ctx context.Context) (int64, string, bool, error) {
				return store.Load(ctx, ds.ID)
			},
			Save: func(ctx context.Context, seq int64, data string) (bool, error) {
				return store.Save(ctx, ds.ID, seq, data)
			},
			Encode: ds.Codec.Encode,
			Decode: ds.Codec.Decode,
		}
	}
	return p
}
