// Package core is the Sky.Core stdlib: the .sky sources of Sky.Core.Prelude,
// Basics, Task, Error, Result, Maybe, List, String, Dict, Time and Uuid (the
// documented surface), System (real Sky's process module), Math, Crypto, Secret, Encoding and Bytes (real Sky's) plus Char, Tuple and Debug (Elm's, for programs that
// use them), Std.Env (a Maybe face on System's getenv and args), and the Go kernels they bind with `Ffi.kernel "Module_fn"`.
//
// Sky.Core.Prelude imports nothing and declares the types every other module
// builds on (Maybe, Result, Order, Error, ErrorKind, ErrorInfo,
// ErrorDetails); the evaluator imports it implicitly into every other module.
// Sky.Core.Maybe, Result and Error expose those types again for programs that
// import them by name.
//
// Kernels take exactly their declared number of arguments. An error a kernel
// returns is a runtime error (a wrong argument kind, a division by zero);
// Sky failures travel inside Task values. Effects read the clock, the random
// source and the sleeper from an Env, so tests control time.
//
// It may import runtime/task, runtime/value and the standard library; never
// compiler/ or cmd/.
package core

import (
	"context"
	"crypto/rand"
	"embed"
	"io"
	"os"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed *.sky
var sources embed.FS

// moduleFiles maps each Sky module name to its embedded file.
var moduleFiles = map[string]string{
	"Sky.Core.Prelude":  "Prelude.sky",
	"Sky.Core.Basics":   "Basics.sky",
	"Sky.Core.Task":     "Task.sky",
	"Sky.Core.Error":    "Error.sky",
	"Sky.Core.Result":   "Result.sky",
	"Sky.Core.Maybe":    "Maybe.sky",
	"Sky.Core.List":     "List.sky",
	"Sky.Core.String":   "String.sky",
	"Sky.Core.Dict":     "Dict.sky",
	"Sky.Core.Time":     "Time.sky",
	"Sky.Core.Uuid":     "Uuid.sky",
	"Sky.Core.Char":     "Char.sky",
	"Sky.Core.Tuple":    "Tuple.sky",
	"Sky.Core.Debug":    "Debug.sky",
	"Sky.Core.System":   "System.sky",
	"Std.Env":           "Env.sky",
	"Sky.Core.Set":      "Set.sky",
	"Sky.Core.Math":     "Math.sky",
	"Sky.Core.Crypto":   "Crypto.sky",
	"Sky.Core.Secret":   "Secret.sky",
	"Sky.Core.Encoding": "Encoding.sky",
	"Sky.Core.Bytes":    "Bytes.sky",
}

// Modules returns the Sky source of every Sky.Core module, by module name.
func Modules() map[string]string {
	out := make(map[string]string, len(moduleFiles))
	for name, file := range moduleFiles {
		src, err := sources.ReadFile(file)
		if err != nil {
			panic("stdlib/core: embedded file missing: " + file) // a build bug, caught by the tests
		}
		out[name] = string(src)
	}
	return out
}

// Env is what the effectful kernels (Time, Uuid) read instead of globals.
type Env struct {
	// Now is the wall clock (Time.now, Uuid.v7).
	Now func() time.Time
	// Sleep waits d or until ctx ends (Time.sleep).
	Sleep func(ctx context.Context, d time.Duration) error
	// Random is the source of UUID randomness.
	Random io.Reader
	// Stderr receives Debug.log lines (nil drops them).
	Stderr io.Writer
	// Process is what Sky.Core.System reads and changes.
	Process Process
}

// DefaultEnv is the real clock, a timer-based sleep, crypto/rand and the
// real process environment without arguments.
func DefaultEnv() Env {
	return Env{Now: time.Now, Sleep: sleepContext, Random: rand.Reader, Stderr: os.Stderr, Process: OSProcess(nil)}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return task.As(ctx.Err())
	}
}

// KernelsWith returns every Sky.Core kernel, the effectful ones reading env.
func KernelsWith(env Env) map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, group := range [][]value.Kernel{
		basicsKernels(), errorKernels(), taskKernels(), maybeKernels(),
		listKernels(), stringKernels(), stringParityKernels(), stringTextKernels(), stringBytesKernels(), dictKernels(),
		timeKernels(env), uuidKernels(env), charKernels(), debugKernels(env),
		systemKernels(env.Process), mathKernels(), cryptoKernels(env), secretKernels(env), encodingKernels(), bytesKernels(),
	} {
		for _, k := range group {
			if _, dup := out[k.Name]; dup {
				panic("stdlib/core: kernel defined twice: " + k.Name)
			}
			out[k.Name] = k
		}
	}
	return out
}
