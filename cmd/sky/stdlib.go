package main

import (
	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
)

// standardLibrary is the stdlib the CLI loads programs against: the one
// table in compiler/ffi (module sources and Go kernels), on the real
// process environment with programArgs as System.args, and Db.connect
// reading the sky.toml of the project root.
func standardLibrary(programArgs []string, root string) eval.Stdlib {
	env := ffi.DefaultEnv()
	env.Core.Process.Args = programArgs
	env.Db.Dir = root
	return eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.KernelsWith(env)}
}
