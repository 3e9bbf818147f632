// Package app is Std.App, Std.Cmd and Std.Sub: their .sky sources and the Go
// kernels that build Cmd, Sub and App values and run an App on the TEA loop
// of runtime/app.
//
// Representations: a Sky `Cmd msg` is value.Opaque{Kind: "Cmd", V:
// runtime/app.Cmd}, a `Sub msg` is value.Opaque{Kind: "Sub", V:
// runtime/app.Sub}, and an `App model msg` is value.Opaque{Kind: "App", V:
// *Spec}. `App.run` stops cleanly on SIGINT and SIGTERM (and when the
// program's context ends).
//
// App.withDurable keeps the model in the database's _sky_durable_snapshot
// table through stdlib/durable's SnapshotStore; its default snapshot id is
// "default", as in real Sky. Use App.withDurableId when two programs share a
// database.
//
// It may import runtime/ packages and the stdlib packages it composes
// (stdlib/codec, stdlib/db, stdlib/durable); never compiler/ or cmd/.
package app

import (
	"embed"
	"io"
	"os"
	"syscall"
	"time"

	rapp "skydurable/runtime/app"
	"skydurable/runtime/value"
)

//go:embed *.sky
var sources embed.FS

var moduleFiles = map[string]string{
	"Std.App": "App.sky",
	"Std.Cmd": "Cmd.sky",
	"Std.Sub": "Sub.sky",
}

// Modules returns the Sky source of Std.App, Std.Cmd and Std.Sub.
func Modules() map[string]string {
	out := make(map[string]string, len(moduleFiles))
	for name, file := range moduleFiles {
		src, err := sources.ReadFile(file)
		if err != nil {
			panic("stdlib/app: embedded file missing: " + file) // a build bug, caught by the tests
		}
		out[name] = string(src)
	}
	return out
}

// Env is what App.run reads instead of globals.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// NewTicker starts Sub.every tickers; nil means real tickers.
	NewTicker func(d time.Duration) rapp.Ticker
	// StopSignals end an App cleanly.
	StopSignals []os.Signal
	// Getenv reads the NOTIFY hint settings (durable.HintSettingsFromEnv);
	// nil means no hints.
	Getenv func(string) string
}

// DefaultEnv is the process's stdin, stdout, stderr, real tickers, SIGINT
// and SIGTERM and os.Getenv.
func DefaultEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		StopSignals: []os.Signal{os.Interrupt, syscall.SIGTERM}, Getenv: os.Getenv}
}

// DefaultSnapshotID is App.withDurable's snapshot id, as in real Sky.
const DefaultSnapshotID = "default"

// Kernels returns the Std.App, Std.Cmd and Std.Sub kernels with DefaultEnv.
func Kernels() map[string]value.Kernel { return KernelsWith(DefaultEnv()) }

// KernelsWith returns the kernels, App.run reading env.
func KernelsWith(env Env) map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, group := range [][]value.Kernel{cmdKernels(), subKernels(), appKernels(env)} {
		for _, k := range group {
			if _, dup := out[k.Name]; dup {
				panic("stdlib/app: kernel defined twice: " + k.Name)
			}
			out[k.Name] = k
		}
	}
	return out
}
