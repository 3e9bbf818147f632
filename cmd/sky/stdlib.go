package main

import (
	"os"

	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
	"skydurable/runtime/project"
	skydurable "skydurable/stdlib/durable"
)

// standardLibrary is the stdlib the CLI loads programs against: the one
// table in compiler/ffi (module sources and Go kernels), on the real
// process environment with o's program arguments as System.args, Db.connect
// reading the sky.toml of the project root, the durable engines taking its
// [durable] settings (retention, orphan_signal_ttl) and, like the HTTP
// server's requests, reporting to o's telemetry when there is one.
func standardLibrary(o loadOptions, proj project.Project) eval.Stdlib {
	env := ffi.DefaultEnv()
	env.Core.Process.Args = o.programArgs
	env.Db.Dir = proj.Root
	env.Durable = skydurable.WithProject(env.Durable, proj.File, os.Getenv, os.Stderr)
	if o.telemetry != nil {
		env.Durable.TracerProvider = o.telemetry.tp
		env.Durable.MeterProvider = o.telemetry.mp
		env.Http.TracerProvider = o.telemetry.tp
	}
	return eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.KernelsWith(env)}
}
