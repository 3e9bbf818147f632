// Package ffi is the one table binding Sky's stdlib to Go: every stdlib
// module's source by module name, and every Go kernel by the name a .sky file
// gives it in `name = Ffi.kernel "Module_fn"`.
//
// The table is composed from each stdlib package's own Modules() and
// Kernels(); a test parses every module and fails if a kernel named in a
// .sky file is missing, if its arity differs from the number of arrows at
// the top of its annotation, or if a table entry is never used.
package ffi

import (
	"fmt"

	"skydurable/runtime/value"
	"skydurable/stdlib/codec"
	"skydurable/stdlib/core"
	skydb "skydurable/stdlib/db"
	"skydurable/stdlib/durable"
	"skydurable/stdlib/log"
	skytest "skydurable/stdlib/test"
)

// part is one stdlib package's contribution to the table.
type part struct {
	pkg     string
	modules func() map[string]string
	kernels func() map[string]value.Kernel
}

func parts() []part {
	return []part{
		{"stdlib/core", core.Modules, core.Kernels},
		{"stdlib/codec", codec.Modules, codec.Kernels},
		{"stdlib/db", skydb.Modules, skydb.Kernels},
		{"stdlib/durable", durable.Modules, durable.Kernels},
		{"stdlib/log", log.Modules, log.Kernels},
		{"stdlib/test", skytest.Modules, skytest.Kernels},
	}
}

// Modules returns the Sky source of every stdlib module, by module name
// ("Sky.Core.List", "Std.Codec", ...).
func Modules() map[string]string {
	out := map[string]string{}
	for _, p := range parts() {
		for name, src := range p.modules() {
			if _, dup := out[name]; dup {
				panic(fmt.Sprintf("ffi: module %s is provided twice (again by %s)", name, p.pkg))
			}
			out[name] = src
		}
	}
	return out
}

// Kernels returns every stdlib kernel, by kernel name ("List_map").
func Kernels() map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, p := range parts() {
		for name, k := range p.kernels() {
			if _, dup := out[name]; dup {
				panic(fmt.Sprintf("ffi: kernel %s is provided twice (again by %s)", name, p.pkg))
			}
			out[name] = k
		}
	}
	return out
}
