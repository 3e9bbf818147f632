// Package test is Sky.Test: the .sky source of the module user test files
// import, and the kernels behind its assertions.
//
// The representation the `sky test` driver walks is two plain custom types
// declared in Test.sky, so they arrive in Go as value.Ctor:
//
//	type Test = Test String (() -> TestResult) | Suite String (List Test)
//	type TestResult = Pass | Fail String
//
// A test module exposes `tests : List Test`. The driver calls the body of
// each `Test name body` with () (value.Apply(body, value.Unit{})) and reads
// `Pass` or `Fail message`; a `Suite name tests` groups tests under a name.
// A body that returns a runtime error is a failure carrying that error.
//
// Messages: `equal expected actual` fails with
// "Expected <expected>, but got <actual>" (values rendered by value.Show, a
// Sky Error rendered as "<Label>: <message>"); the others say what they
// expected in the same style.
//
// It may import runtime/task, runtime/value and the standard library; never
// compiler/ or cmd/.
package test
