package main

import (
	"context"
	"fmt"

	"skydurable/runtime/project"
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
// when one fails, 2 when the module does not parse, check or load.
func runTests(ctx context.Context, args []string, s streams) int {
	o, args, err := parseLoadFlags(args)
	if err != nil || len(args) != 1 {
		fmt.Fprintln(s.stderr, "usage: sky test [--unchecked] FILE")
		return exitNoBuild
	}
	cfg, err := project.Load(".")
	if err != nil {
		report(s, err)
		return exitNoBuild
	}
	prog, _ := loadProgram(args[0], cfg, o, s)
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
