package main

import (
	"skydurable/compiler/eval"
	"skydurable/compiler/ffi"
)

// standardLibrary is the stdlib the CLI loads programs against: the one
// table in compiler/ffi (module sources and Go kernels).
func standardLibrary() eval.Stdlib {
	return eval.Stdlib{Modules: ffi.Modules(), Kernels: ffi.Kernels()}
}
