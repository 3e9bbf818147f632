// Package eval loads and runs Sky programs: it finds and parses a program's
// modules, compiles each declaration to Go closures, and drives `main` and
// `tests`.
//
// # Loading
//
// Load takes the entry file; module `A.B` is `<root>/A/B.sky`, where the root
// is Options.Root (sky.toml's `[source] root`) or else the entry's directory
// and a `src` directory beside it. Stdlib modules come from Options.Stdlib
// (compiler/ffi's table) and win over files. Every module but the Prelude
// imports `Sky.Core.Prelude` implicitly (all it exposes, unqualified); user
// modules may also name Basics, List, Maybe, Result, String, Char and Tuple
// by that last segment without importing them, as Elm's default imports. A
// bare `import Lib.User` makes both `Lib.User.x` and `User.x` work. An import
// cycle is an error naming the whole cycle. A declaration whose body is
// `Ffi.kernel "Name"` binds the Go kernel of that name.
//
// # Evaluation
//
// Names are resolved once, at compile time, to a frame slot (locals) or a
// global (top-level values); evaluation never looks a name up in a map.
// Each call allocates one frame holding the parameters and every local of
// the function body. A call of a function by its own name in tail position
// loops instead of recursing, so a loop of a million iterations runs in
// constant Go stack; other recursion is bounded (a runtime error, not a Go
// crash). Top-level constants are computed when the program is linked, in
// whatever order their uses require.
//
// Values are those of runtime/value. Int and Float mix (an Int meets a Float
// as a Float) because, until the type checker annotates literals, `1` where
// a Float is expected arrives as an Int; `/` always divides as Floats and
// `//` as Ints (`x // 0 == 0`, as in Elm).
//
// # The let-task rule
//
// A let binding `_ = t` whose value is a Task runs t. If the let's body is a
// Task, the let evaluates to a Task that runs each such t in order, then the
// body; the first failure becomes that Task's failure and the body does not
// run. If the body is not a Task, each t runs at once (under the driver's
// context) and a failure is a runtime error naming it.
//
// # Errors
//
// Load and compile errors come back as a diag.List sorted by position.
// Failures of the program itself — a type error the checker would have
// caught, a `case` with no matching branch, a kernel refusing its argument —
// are *value.RuntimeError values naming the offending value and carrying
// file:line:col and the source line; Diagnostics turns either into what
// the CLI renders (compiler/diag). Sky failures (a Task failing with an
// Error) are not runtime errors: they travel inside Tasks.
//
// It may import the front end's earlier phases (compiler/syntax,
// compiler/types, compiler/diag), stdlib/app (a main that is an App),
// runtime/task and runtime/value; never cmd/.
package eval
