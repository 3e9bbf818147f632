// Package ffi is the one table binding Sky's stdlib to Go: every stdlib
// module's source by module name, and every Go kernel by the name a .sky file
// gives it in `name = Ffi.kernel "Module_fn"`.
//
// The table is composed from each stdlib package's own Modules() and
// Kernels(); a test parses every module and fails if a kernel named in a
// .sky file is missing, if its arity differs from the number of arrows at
// the top of its annotation, or if a table entry is never used.
//
// It may import every stdlib package, runtime/durable, runtime/value and the
// standard library; never cmd/.
package ffi

import (
	"fmt"
	"os"

	"skydurable/runtime/durable"
	"skydurable/runtime/value"
	skyapp "skydurable/stdlib/app"
	"skydurable/stdlib/codec"
	"skydurable/stdlib/core"
	skydb "skydurable/stdlib/db"
	skydurable "skydurable/stdlib/durable"
	"skydurable/stdlib/host"
	"skydurable/stdlib/httpserver"
	skyjson "skydurable/stdlib/json"
	"skydurable/stdlib/log"
	skytest "skydurable/stdlib/test"
)

// Env is everything the effectful kernels read instead of globals: the
// clock, randomness and sleeper (core), the output streams (log), the
// standard streams Io uses (host), the
// environment Db.connect resolves against (db), and the durable engines'
// options.
type Env struct {
	Core    core.Env
	Log     log.Env
	Db      skydb.Env
	Durable durable.Options
	App     skyapp.Env
	Http    httpserver.Env
	Host    host.Env
}

// DefaultEnv is the real process environment.
func DefaultEnv() Env {
	return Env{
		Core:    core.DefaultEnv(),
		Log:     log.DefaultEnv(),
		Db:      skydb.DefaultEnv(),
		Durable: skydurable.OptionsFromEnv(os.Getenv),
		App:     skyapp.DefaultEnv(),
		Http:    httpserver.DefaultEnv(),
		Host:    host.DefaultEnv(),
	}
}

// part is one stdlib package's contribution to the table.
type part struct {
	pkg     string
	modules func() map[string]string
	kernels func() map[string]value.Kernel
}

func parts(env Env) []part {
	return []part{
		{"stdlib/core", core.Modules, func() map[string]value.Kernel { return core.KernelsWith(env.Core) }},
		{"stdlib/codec", codec.Modules, codec.Kernels},
		{"stdlib/json", skyjson.Modules, skyjson.Kernels},
		{"stdlib/db", skydb.Modules, func() map[string]value.Kernel { return skydb.KernelsWith(env.Db) }},
		{"stdlib/durable", skydurable.Modules, func() map[string]value.Kernel { return skydurable.KernelsWith(env.Durable) }},
		{"stdlib/log", log.Modules, func() map[string]value.Kernel { return log.KernelsWith(env.Log) }},
		{"stdlib/test", skytest.Modules, skytest.Kernels},
		{"stdlib/app", skyapp.Modules, func() map[string]value.Kernel { return skyapp.KernelsWith(env.App) }},
		{"stdlib/host", host.Modules, func() map[string]value.Kernel { return host.KernelsWith(env.Host) }},
		{"stdlib/httpserver", httpserver.Modules, func() map[string]value.Kernel { return httpserver.KernelsWith(env.Http) }},
	}
}

// Modules returns the Sky source of every stdlib module, by module name
// ("Sky.Core.List", "Std.Codec", ...).
func Modules() map[string]string {
	out := map[string]string{}
	for _, p := range parts(Env{}) {
		for name, src := range p.modules() {
			if _, dup := out[name]; dup {
				panic(fmt.Sprintf("ffi: module %s is provided twice (again by %s)", name, p.pkg))
			}
			out[name] = src
		}
	}
	return out
}

// Kernels returns every stdlib kernel, by kernel name ("List_map"), reading
// the real process environment.
func Kernels() map[string]value.Kernel { return KernelsWith(DefaultEnv()) }

// KernelsWith returns every stdlib kernel, the effectful ones reading env
// (tests inject a virtual clock or capture output this way).
func KernelsWith(env Env) map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, p := range parts(env) {
		for name, k := range p.kernels() {
			if _, dup := out[name]; dup {
				panic(fmt.Sprintf("ffi: kernel %s is provided twice (again by %s)", name, p.pkg))
			}
			out[name] = k
		}
	}
	return out
}
