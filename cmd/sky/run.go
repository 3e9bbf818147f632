package main

import (
	"context"
	"errors"
	"fmt"

	"skydurable/compiler/eval"
	"skydurable/runtime/project"
	"skydurable/runtime/value"
)

func init() {
	register(&command{
		name:    "run",
		usage:   "sky run [--unchecked] [FILE]",
		summary: "run a program's main (default: sky.toml's entry, else src/Main.sky)",
		run:     runMain,
	})
}

// runMain checks and loads the program and forces `main`. A failing main
// prints `Error: <Label>: <message>` and exits 1; so does a program that does
// not parse, check or load (after printing its errors).
func runMain(ctx context.Context, args []string, s streams) int {
	cfg, err := project.Load(".")
	if err != nil {
		fmt.Fprintln(s.stderr, "sky:", err)
		return exitFailure
	}
	o, args, err := parseLoadFlags(args)
	if err != nil || len(args) > 1 {
		fmt.Fprintln(s.stderr, "usage: sky run [--unchecked] [FILE]")
		return exitNoBuild
	}
	file := "src/Main.sky"
	if cfg.Entry != "" {
		file = cfg.Entry
	}
	if len(args) == 1 {
		file = args[0]
	}
	prog := loadProgram(file, cfg, o, s)
	if prog == nil {
		return exitFailure
	}
	if err := prog.RunMain(ctx); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(s.stderr, "sky: interrupted")
			return exitInterrupted
		}
		reportFailure(s, err)
		return exitFailure
	}
	return exitOK
}

// reportFailure prints why a program stopped: a runtime error with its
// source position, or the Task failure as `Error: <Label>: <message>`.
func reportFailure(s streams, err error) {
	var re *value.RuntimeError
	switch {
	case errors.As(err, &re):
		fmt.Fprintln(s.stderr, "Runtime error: "+re.Error())
	case eval.IsLoadError(err):
		fmt.Fprintln(s.stderr, err)
	default:
		fmt.Fprintln(s.stderr, "Error: "+eval.FailureText(err))
	}
}
