// Package houserules owns no code, only tests: the house rules of
// DESIGN.md and STYLE.md checked on every `make test` instead of by memory.
//
//   - layers_test.go: the dependency direction (cmd → compiler → stdlib →
//     runtime; inside runtime, durable → store → db) read from `go list`,
//     with today's known exceptions in an allow-list that can only shrink.
//   - files_test.go: no tracked executable (bar the allow-listed scripts)
//     and no tracked file over 1 MB, read from `git ls-files`.
//   - docs_test.go: every package has a doc comment saying what it owns
//     and what it may import.
//   - comments_test.go: a comment names only files and Go declarations
//     that exist, and a doc comment begins with the name it documents.
//   - testmain_test.go: a package whose tests open PostgreSQL starts a
//     private server when none answers (dbtest.Main), and `make run` says
//     what it builds before its first, slow build.
//
// It may import only the standard library: it reads the repository through
// `go list`, `git` and go/parser, never by importing the packages it checks.
package houserules
