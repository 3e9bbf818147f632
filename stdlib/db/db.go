// Package db is Std.Db and Std.Db.Store: the .sky sources and the kernels
// over runtime/db.
//
// A Sky `Db` is value.Opaque{Kind: "Db", V: *db.DB}. Every kernel that
// touches the database returns a Task and runs with the context the Task is
// run under, so an ambient transaction (db.WithLazyTx, set by the durable
// engine around a step) reaches the statements a Sky step makes. Errors are
// runtime/db's *task.Error values (Conflict for a unique violation,
// Unavailable for a lost connection, ...) and reach Sky as Error values.
//
// `Db.connect ()` resolution is documented on Config.
//
// It may import runtime/db, runtime/codec, runtime/project, runtime/task,
// runtime/value, stdlib/codec (a codec's record shape) and the standard
// library; never compiler/ or cmd/.
package db

import (
	"context"
	_ "embed"
	"sync"

	sqldb "skydurable/runtime/db"
	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Db.sky
var dbSource string

//go:embed Store.sky
var storeSource string

//go:embed Decode.sky
var decodeSource string

// Modules returns the Sky sources of Std.Db, Std.Db.Store and Std.Db.Decode
// (real Sky's row decoders, in Sky).
func Modules() map[string]string {
	return map[string]string{"Std.Db": dbSource, "Std.Db.Store": storeSource, "Std.Db.Decode": decodeSource}
}

// Kind is the value.Opaque kind of a Sky Db.
const Kind = "Db"

// ToValue wraps a database handle as a Sky Db value.
func ToValue(d *sqldb.DB) value.Value { return value.Opaque{Kind: Kind, V: d} }

// FromValue unwraps a Sky Db value; anything else is an error naming it.
func FromValue(v value.Value) (*sqldb.DB, error) {
	if o, ok := v.(value.Opaque); ok && o.Kind == Kind {
		if d, ok := o.V.(*sqldb.DB); ok {
			return d, nil
		}
	}
	return nil, value.BadArg("Std.Db", "a Db", v)
}

// Kernels returns the Std.Db and Std.Db.Store kernels with the process
// environment (DefaultEnv) for Db.connect.
func Kernels() map[string]value.Kernel { return KernelsWith(DefaultEnv()) }

// KernelsWith returns the kernels, Db.connect reading its settings from env.
func KernelsWith(env Env) map[string]value.Kernel {
	c := &connector{env: env, pools: map[Config]*sqldb.DB{}}
	out := map[string]value.Kernel{}
	for _, k := range append([]value.Kernel{
		{Name: "Db_open", Arity: 2, Fn: c.open},
		{Name: "Db_connect", Arity: 1, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(c.connect)}, nil
		}},
		{Name: "Db_exec", Arity: 3, Fn: dbExec},
		{Name: "Db_execRaw", Arity: 2, Fn: dbExecRaw},
		{Name: "Db_query", Arity: 3, Fn: dbQuery},
		{Name: "Db_withTransaction", Arity: 2, Fn: dbWithTransaction},
		{Name: "Store_selectRaw", Arity: 4, Fn: storeSelectRaw},
		{Name: "Db_close", Arity: 1, Fn: c.close},
	}, append(parityKernels(), storeSchemaKernels()...)...) {
		out[k.Name] = k
	}
	return out
}

// open is Db.open: the pool driver and dsn name, behind the pooler
// SKY_DB_POOLER names (as for Db.connect).
func (c *connector) open(a []value.Value) (value.Value, error) {
	driver, ok := a[0].(string)
	if !ok {
		return nil, value.BadArg("Db.open", "a driver name (String)", a[0])
	}
	dsn, ok := a[1].(string)
	if !ok {
		return nil, value.BadArg("Db.open", "a path or URL (String)", a[1])
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		pooler, err := sqldb.ParsePooler(c.env.Getenv(sqldb.EnvPooler))
		if err != nil {
			return nil, err
		}
		d, err := sqldb.OpenWith(ctx, driver, dsn, sqldb.Options{Pooler: pooler})
		if err != nil {
			return nil, err
		}
		return ToValue(d), nil
	})}, nil
}

// connector opens the pool Db.connect names, once per distinct Config.
type connector struct {
	env   Env
	mu    sync.Mutex
	pools map[Config]*sqldb.DB
}

func (c *connector) connect(ctx context.Context) (value.Value, error) {
	cfg, err := Resolve(c.env)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d, ok := c.pools[cfg]; ok {
		return ToValue(d), nil
	}
	d, err := sqldb.OpenWith(ctx, cfg.Driver, cfg.DSN, sqldb.Options{Pooler: cfg.Pooler})
	if err != nil {
		return nil, err
	}
	c.pools[cfg] = d
	return ToValue(d), nil
}

// statement reads the common `db sql params` arguments.
func statement(fn string, a []value.Value) (*sqldb.DB, string, []any, error) {
	d, err := FromValue(a[0])
	if err != nil {
		return nil, "", nil, value.BadArg(fn, "a Db", a[0])
	}
	sql, ok := a[1].(string)
	if !ok {
		return nil, "", nil, value.BadArg(fn, "SQL text (String)", a[1])
	}
	var params []any
	if len(a) > 2 {
		if params, err = args(fn, a[2]); err != nil {
			return nil, "", nil, err
		}
	}
	return d, sql, params, nil
}

func dbExec(a []value.Value) (value.Value, error) {
	d, sql, params, err := statement("Db.exec", a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		n, err := d.Exec(ctx, sql, params...)
		if err != nil {
			return nil, err
		}
		return n, nil
	})}, nil
}

func dbExecRaw(a []value.Value) (value.Value, error) {
	d, sql, _, err := statement("Db.execRaw", a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		n, err := d.ExecRaw(ctx, sql)
		if err != nil {
			return nil, err
		}
		return n, nil
	})}, nil
}

func dbQuery(a []value.Value) (value.Value, error) {
	d, sql, params, err := statement("Db.query", a)
	if err != nil {
		return nil, err
	}
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		rows, err := d.QueryMaps(ctx, sql, params...)
		if err != nil {
			return nil, err
		}
		out := make([]value.Value, len(rows))
		for i, r := range rows {
			pairs := make([]value.Value, 0, len(r))
			for k, v := range r {
				pairs = append(pairs, value.Tuple{k, v})
			}
			dict, err := value.DictFromList(value.FromSlice(pairs))
			if err != nil {
				return nil, err
			}
			out[i] = dict
		}
		return value.FromSlice(out), nil
	})}, nil
}

// dbWithTransaction runs the Task the Sky function builds from a
// transaction-bound Db inside one transaction: commit on success, rollback
// on failure (a Sky failure or a runtime error alike).
func dbWithTransaction(a []value.Value) (value.Value, error) {
	d, err := FromValue(a[0])
	if err != nil {
		return nil, value.BadArg("Db.withTransaction", "a Db", a[0])
	}
	f := a[1]
	return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) {
		var result value.Value
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *sqldb.DB) error {
			r, err := value.Apply(f, ToValue(tx))
			if err != nil {
				return runtimeError(err)
			}
			t, ok := r.(value.Task)
			if !ok {
				return runtimeError(value.BadArg("Db.withTransaction", "a function returning a Task", r))
			}
			result, err = task.Run(ctx, t.T)
			return err
		})
		if err != nil {
			return nil, err
		}
		return result, nil
	})}, nil
}

func runtimeError(err error) error {
	if value.IsRuntimeError(err) {
		return err
	}
	return &value.RuntimeError{Message: err.Error()}
}
