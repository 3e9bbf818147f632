package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"skydurable/compiler/diag"
	"skydurable/compiler/types"
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
		return badProgramArgs(s, "test", "sky test [--unchecked] FILE", args)
	}
	_, proj, err := findProgram(args)
	if err == nil {
		err = noProgram(args[0], testHint)
	}
	if err != nil {
		report(s, err)
		return exitNoBuild
	}
	o.checkEntry = checkTestsType
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

// checkTestsType is the type error of a test module whose top-level `tests`
// is not a List Test, at its declaration, before any test runs (the
// checker alone accepts any type: `tests` is a name like another). A
// module without `tests` is left to RunTests, which says what to define.
func checkTestsType(file string, prog *types.Program, info *types.Info) error {
	abs, _ := filepath.Abs(file)
	for name, f := range prog.Modules {
		if fabs, _ := filepath.Abs(f.Name); fabs != abs {
			continue
		}
		vi := info.Values[name]["tests"]
		if vi == nil || vi.Decl == nil {
			return nil
		}
		t := types.Prune(vi.Scheme.Type)
		if l, ok := t.(*types.Con); ok && l.Name == "List" && len(l.Args) == 1 {
			if c, ok := types.Prune(l.Args[0]).(*types.Con); ok && c.Module == "Sky.Test" && c.Name == "Test" {
				return nil
			}
		}
		at := vi.Decl.Name.Span
		if vi.Decl.Annotation != nil {
			at = vi.Decl.Annotation.Type.Range()
		}
		d := diag.Diagnostic{
			Title:    "TYPE MISMATCH",
			File:     f.Name,
			Start:    diag.Pos{Line: at.Start.Line, Col: at.Start.Col},
			End:      diag.Pos{Line: at.End.Line, Col: at.End.Col},
			Message:  "`tests` is what `sky test` runs, so it must be a list of Sky.Test tests, but it is a `" + types.TypeString(t) + "`.",
			Expected: "List Test",
			Found:    types.TypeString(t),
			Hint:     "build each test with Sky.Test's `test`, `testTask` or `suite`: `tests = [ test \"adds\" (\\_ -> equal 4 (2 + 2)) ]`",
		}
		d.SourceLine = diag.Line(prog.Sources[f.Name], at.Start.Line)
		return d
	}
	return nil
}

// importsSkyTest is true when the module at file imports Sky.Test: a test
// module, whose `tests` sky check checks as sky test would.
func importsSkyTest(file string, prog *types.Program) bool {
	abs, _ := filepath.Abs(file)
	for _, f := range prog.Modules {
		if fabs, _ := filepath.Abs(f.Name); fabs == abs {
			for _, im := range f.Imports {
				if im.Module.String() == "Sky.Test" {
					return true
				}
			}
		}
	}
	return false
}
