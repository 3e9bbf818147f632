// Package durable is Std.Durable and Std.Durable.Test: their .sky sources
// and the thin binding from Sky values to the engine's Go API
// (runtime/durable). Sky workflows are Def[value.Value, value.Value] with
// Sky codecs; the binding also runs the worker on the TEA loop (Std.App),
// saves and loads model snapshots, and gives the test kit its kernels over
// runtime/durable/durabletest.
//
// It may import runtime/ packages (the engine, runtime/app, runtime/value,
// runtime/db) and the stdlib packages it builds on (stdlib/codec,
// stdlib/db); never compiler/ or cmd/. The engine never imports it: Sky
// values stop here.
package durable
