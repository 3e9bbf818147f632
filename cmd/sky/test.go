package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

func init() {
	register(func() *cobra.Command {
		var o loadOptions
		cmd := &cobra.Command{
			Use:   "test [--unchecked] FILE",
			Short: "run the `tests : List Test` of a Sky.Test module",
			Long: `Run the tests of a Sky.Test module: its top-level tests : List Test. It prints a line per test
and a summary, and exits 0 when all pass, 1 when one fails, 2 when the module does not parse,
check or load.`,
			Example:           `  sky test tests/OrderTest.sky`,
			Args:              cobra.ArbitraryArgs,
			ValidArgsFunction: skyFiles,
		}
		addLoadFlags(cmd, &o)
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return exitWith(runTests(cmd.Context(), o, splitProgramArgs(cmd, args, &o), streamsOf(cmd)))
		}
		return cmd
	})
}

// runTests prints one line per test and a summary; exit 0 when all pass, 1
// when one fails (or the module calls System.exit while loading), 2 when
// it does not parse, check or load.
func runTests(ctx context.Context, o loadOptions, args []string, s streams) int {
	if len(args) != 1 {
		fmt.Fprintln(s.stderr, "usage: sky test [--unchecked] FILE")
		return exitNoBuild
	}
	_, proj, err := findProgram(args)
	if err == nil {
		err = noProgram(args[0], testHint)
	}
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
