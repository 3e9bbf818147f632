package main

import (
	"skydurable/compiler/eval"
	"skydurable/runtime/value"
	"skydurable/stdlib/core"
	"skydurable/stdlib/log"
	skytest "skydurable/stdlib/test"
)

// standardLibrary assembles the stdlib modules and kernels the CLI loads
// programs against. It composes the stdlib packages directly until the one
// table in compiler/ffi exists; then it becomes ffi.Modules/ffi.Kernels.
func standardLibrary(cfg config) eval.Stdlib {
	lib := eval.Stdlib{Modules: map[string]string{}, Kernels: map[string]value.Kernel{}}
	add := func(mods map[string]string, kernels map[string]value.Kernel) {
		for k, v := range mods {
			lib.Modules[k] = v
		}
		for k, v := range kernels {
			lib.Kernels[k] = v
		}
	}
	add(core.Modules(), core.Kernels())
	add(log.Modules(), log.Kernels())
	add(skytest.Modules(), skytest.Kernels())
	return lib
}
