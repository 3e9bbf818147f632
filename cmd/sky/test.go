package main

import (
	"context"
	"fmt"
)

func init() {
	register(&command{
		name:    "test",
		usage:   "sky test [--unchecked] FILE",
		summary: "run the `tests : List Test` of a Sky.Test module",
		run:     runTests,
	})
}

// runTests prints one line per test and a summary; exit 0 when all pass, 1
// when one fails (or the module calls System.exit while loading), 2 when
// it does not parse, check or load.
func runTests(ctx context.Context, args []string, s streams) int {
	o, args, err := parseLoadFlags(args)
	if err != nil || len(args) != 1 {
		fmt.Fprintln(s.stderr, "usage: sky test [--unchecked] FILE")
		return exitNoBuild
	}
	_, proj, err := findProgram(args)
	if err != nil {
		report(s, err)
		return exitNoBuild
	}
	prog, status, exited := loadProgram(args[0], proj, o, s)
	if exited {
		// Not a build error: a top-level value of the module stopped it.
		fmt.Fprintf(s.stderr, "sky test: %s called System.exit %d while loading, before any test ran; "+
			"hint: a test module's top-level values must not exit (a test fails with Sky.Test.fail or a failing Task)\n", args[0], status)
		return exitFailure
	}
	if prog == nil {
		return exitNoBuild
	}
	rep, err := prog.RunTests(ctx, s.stdout)
	if err != nil {
		report(s, err)
		return exitNoBuild
	}
	if rep.Failed > 0 {
		return exitFailure
	}
	return exitOK
}
