// Command sky runs, tests and inspects Sky programs: `sky run [FILE]`,
// `sky test FILE`, `sky version`, and the subcommands other files register
// (see cli.go).
package main

import "os"

func main() {
	os.Exit(runCLI(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
