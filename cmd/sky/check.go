package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"skydurable/compiler/diag"
	"skydurable/compiler/ffi"
	"skydurable/compiler/types"
)

func init() {
	register(func() *cobra.Command {
		return &cobra.Command{
			Use:   "check [FILE]",
			Short: "type-check a program without running it (default: sky.toml's entry, else src/Main.sky)",
			Long: `Type-check a program and its modules without running it. It prints "No errors found" (exit 0,
after any warnings on stderr), or every syntax, load and type error and how many there are (exit 1).`,
			Example: `  sky check
  sky check src/Main.sky`,
			Args:              cobra.ArbitraryArgs,
			ValidArgsFunction: skyFiles,
			RunE: func(cmd *cobra.Command, args []string) error {
				return exitWith(runCheck(args, streamsOf(cmd)))
			},
		}
	})
}

// runCheck loads the program and its modules, type-checks them and prints
// "No errors found" (exit 0, after any warnings on stderr), or every syntax,
// load and type error on stderr and how many there are (exit 1).
func runCheck(args []string, s streams) int {
	if len(args) > 1 {
		return badProgramArgs(s, "check", "sky check [FILE]", args)
	}
	file, proj, err := findProgram(args)
	if err != nil {
		report(s, err)
		return exitFailure
	}
	err = noProgram(file, checkHint)
	var prog *types.Program
	if err == nil {
		prog, err = types.LoadProgram(file, proj.File.SourceRoot, ffi.Modules())
	}
	if err == nil {
		info, errs := types.Check(prog)
		if len(errs) > 0 {
			err = errs
		} else if importsSkyTest(file, prog) {
			// A test module: its tests must be what sky test runs.
			err = checkTestsType(file, prog, info)
		}
		if err == nil && len(info.Warnings) > 0 {
			fmt.Fprint(s.stderr, diag.Render(info.Warnings))
			fmt.Fprintln(s.stderr)
		}
	}
	if err != nil {
		if n := report(s, err); n == 1 {
			fmt.Fprintln(s.stderr, "\nFound 1 error.")
		} else if n > 1 {
			fmt.Fprintf(s.stderr, "\nFound %d errors.\n", n)
		}
		return exitFailure
	}
	fmt.Fprintln(s.stdout, "No errors found")
	return exitOK
}
