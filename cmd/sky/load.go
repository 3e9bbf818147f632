package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"skydurable/compiler/diag"
	"skydurable/compiler/eval"
	"skydurable/compiler/syntax"
	"skydurable/compiler/types"
	"skydurable/runtime/project"
	"skydurable/runtime/value"
)

// loadOptions are the flags run and test share.
type loadOptions struct {
	// unchecked skips the type checker (`--unchecked`): the program runs
	// and type errors surface as runtime errors. For debugging the
	// evaluator and the checker, not for programs.
	unchecked bool
	// programArgs are what System.args gives the program (after `--`).
	programArgs []string
	// telemetry, when set, is where the program's durable engines report
	// (sky run with SKY_OTEL_EXPORTER).
	telemetry *telemetry
	// checkEntry, when set, checks what the command needs of the entry
	// module once it type-checks (sky test: its `tests : List Test`),
	// returning an error that stops the load as a type error does.
	checkEntry func(file string, prog *types.Program, info *types.Info) error
	// missingHint is the hint for a FILE that is not there, in the words
	// of the command it was passed to; "" is sky run's (runHint).
	missingHint string
}

// addLoadFlags defines the flags run and test share on cmd, stored in o.
// They come before the program (`sky run --unchecked app.sky`): what
// follows it is not parsed, so a program's own arguments after `--` stay
// its own.
func addLoadFlags(cmd *cobra.Command, o *loadOptions) {
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&o.unchecked, "unchecked", false, "skip the type checker (for debugging the evaluator and the checker, not for programs)")
}

// splitProgramArgs takes what follows `--` off args (cobra's arguments of
// cmd) as the program's arguments, System.args.
func splitProgramArgs(cmd *cobra.Command, args []string, o *loadOptions) []string {
	i := cmd.ArgsLenAtDash()
	if i < 0 {
		i = slices.Index(args, "--")
		if i < 0 {
			return args
		}
		o.programArgs = args[i+1:]
		return args[:i]
	}
	o.programArgs = args[i:]
	return args[:i]
}

// badProgramArgs says why the arguments of sky run, check or test name no
// one program (none given to test, or more than one: an argument or a flag
// after the program), with the fix, then prints the use line; it returns
// the usage exit code.
func badProgramArgs(s streams, command, use string, args []string) int {
	what := "program"
	if command == "test" {
		what = "test module"
	}
	if len(args) == 0 {
		fmt.Fprintf(s.stderr, "sky %s: no %s given; hint: sky %s tests/OrderTest.sky\n", command, what, command)
	} else {
		extra := args[1]
		hint := fmt.Sprintf("sky %s takes one %s", command, what)
		switch {
		case strings.HasPrefix(extra, "-"):
			hint = fmt.Sprintf("sky %s's flags go before the program: sky %s %s %s", command, command, extra, args[0])
			if command == "run" {
				hint += " (the program's own arguments go after --)"
			}
		case command == "run":
			hint = fmt.Sprintf("the program's own arguments go after --: sky run %s -- %s", args[0], strings.Join(args[1:], " "))
		}
		fmt.Fprintf(s.stderr, "sky %s: unexpected argument %q after the %s %s; hint: %s\n", command, extra, what, args[0], hint)
	}
	fmt.Fprintln(s.stderr, "usage: "+use)
	return exitNoBuild
}

// findProgram finds the program a command runs and its project: the FILE
// in args when there is one, its project the nearest sky.toml above it;
// else the project of the working directory (the nearest sky.toml above
// it) and that project's entry.
func findProgram(args []string) (string, project.Project, error) {
	start := ""
	if len(args) > 0 {
		start = args[0]
	}
	proj, err := project.Find(start)
	if err != nil {
		return "", project.Project{}, err
	}
	if start == "" {
		return proj.Entry(), proj, nil
	}
	return start, proj, nil
}

// The hints of the error for a FILE that is not there, in the words of the
// command it was passed to.
const (
	runHint    = "pass the file, e.g. `sky run app.sky`, or set `entry` in sky.toml"
	checkHint  = "pass the file, e.g. `sky check src/Main.sky`, or set `entry` in sky.toml"
	testHint   = "pass the test module's path from the current directory, e.g. `sky test tests/OrderTest.sky`"
	workerHint = "pass the program whose modules define the workflows, e.g. `sky durable worker src/Main.sky`"
	replayHint = "pass the new code's program, whose modules define the workflows, e.g. `sky durable replay src/Main.sky`"
)

// noProgram is the LOAD ERROR for a file that cannot be read, with hint;
// nil when it can be.
func noProgram(file, hint string) error {
	if _, err := os.Stat(file); err != nil {
		return diag.Diagnostic{Title: "LOAD ERROR", File: file, Message: fmt.Sprintf("There is no program at %s (%v).", file, errors.Unwrap(err)), Hint: hint}
	}
	return nil
}

// loadProgram type-checks the program at file, then loads it; on a syntax,
// type, load or compile error it prints the errors to stderr and returns
// nil and sky run's exit status (a System.exit at load gives its code, and
// exited is true). A program that does not check never runs.
func loadProgram(file string, proj project.Project, o loadOptions, s streams) (prog *eval.Program, status int, exited bool) {
	cfg := proj.File
	hint := o.missingHint
	if hint == "" {
		hint = runHint
	}
	if err := noProgram(file, hint); err != nil {
		report(s, err)
		return nil, exitFailure, false
	}
	lib := standardLibrary(o, proj)
	opts := eval.Options{Root: cfg.SourceRoot, Stdlib: lib}
	if !o.unchecked {
		checked, err := types.LoadProgram(file, cfg.SourceRoot, lib.Modules)
		if err != nil {
			report(s, err)
			return nil, exitFailure, false
		}
		info, errs := types.Check(checked)
		if len(errs) > 0 {
			report(s, errs)
			return nil, exitFailure, false
		}
		if o.checkEntry != nil {
			if err := o.checkEntry(file, checked, info); err != nil {
				report(s, err)
				return nil, exitFailure, false
			}
		}
		opts.Parse = reuseParsed(checked)
	}
	prog, err := eval.Load(file, opts)
	if err != nil {
		// A top-level constant is computed at load, so a runtime error
		// can surface here; it is reported like one from main.
		var exit *value.Exit
		return nil, failureStatus(s, err), errors.As(err, &exit)
	}
	return prog, exitOK, false
}

// reuseParsed lets the evaluator reuse the syntax trees the checker parsed
// (the AST is immutable), parsing only a file it has not seen or whose text
// changed in between.
func reuseParsed(checked *types.Program) eval.ParseFunc {
	byFile := map[string]*syntax.File{}
	for _, f := range checked.Modules {
		byFile[f.Name] = f
	}
	return func(filename string, src []byte) (*syntax.File, error) {
		if f, ok := byFile[filename]; ok && checked.Sources[filename] == string(src) {
			return f, nil
		}
		return syntax.ParseFile(filename, src)
	}
}
