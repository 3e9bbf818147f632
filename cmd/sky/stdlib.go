package main

import (
	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
)

// standardLibrary is the stdlib the CLI loads programs against: the one
// table in compiler/ffi (module sources and Go kernels), on the real
// process environment with o's program arguments as System.args, Db.connect
// reading the sky.toml of the project root, and its durable engines
// reporting to o's telemetry when there is one.
func standardLibrary(o loadOptions, root string) eval.Stdlib {
	env := ffi.DefaultEnv()
	env.Core.Process.Args = o.programArgs
	env.Db.Dir = root
	if o.telemetry != nil {
		env.Durable.TracerProvider = o.telemetry.tp
		env.Durable.MeterProvider = o.telemetry.mp
	}
	return eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.KernelsWith(env)}
}
