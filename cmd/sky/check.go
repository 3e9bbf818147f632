package main

import (
	"context"
	"fmt"

	"skydurable/compiler/ffi"
	"skydurable/compiler/types"
	"skydurable/runtime/project"
)

func init() {
	register(&command{
		name:    "check",
		usage:   "sky check [FILE]",
		summary: "type-check a program without running it (default: sky.toml's entry, else src/Main.sky)",
		run:     runCheck,
	})
}

// runCheck loads the program and its modules, type-checks them and prints
// "No errors found" (exit 0), or every error, Elm-style, on stderr (exit 1).
func runCheck(_ context.Context, args []string, s streams) int {
	if len(args) > 1 {
		fmt.Fprintln(s.stderr, "usage: sky check [FILE]")
		return exitNoBuild
	}
	cfg, err := project.Load(".")
	if err != nil {
		fmt.Fprintln(s.stderr, "sky:", err)
		return exitFailure
	}
	file := "src/Main.sky"
	if cfg.Entry != "" {
		file = cfg.Entry
	}
	if len(args) == 1 {
		file = args[0]
	}
	prog, err := types.LoadProgram(file, cfg.SourceRoot, ffi.Modules())
	if err != nil {
		fmt.Fprintln(s.stderr, err)
		return exitFailure
	}
	if _, errs := types.Check(prog); len(errs) > 0 {
		fmt.Fprintln(s.stderr, types.RenderAll(errs))
		if len(errs) == 1 {
			fmt.Fprintln(s.stderr, "Found 1 error.")
		} else {
			fmt.Fprintf(s.stderr, "Found %d errors.\n", len(errs))
		}
		return exitFailure
	}
	fmt.Fprintln(s.stdout, "No errors found")
	return exitOK
}
