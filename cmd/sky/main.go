// Command sky runs, tests and inspects Sky programs: `sky run [FILE]`,
// `sky test FILE`, `sky version`, and the subcommands other files register
// (see cli.go).
//
// It sits at the top of the dependency order (cmd → compiler → stdlib →
// runtime) and may import any package of the module, the OpenTelemetry SDK
// and its exporters; nothing imports it.
package main

import "os"

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
