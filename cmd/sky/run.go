package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"skydurable/compiler/diag"
	"skydurable/compiler/eval"
	"skydurable/runtime/value"
)

func init() {
	register(&command{
		name:    "run",
		usage:   "sky run [--unchecked] [FILE] [-- ARG...]",
		summary: "run a program's main (default: sky.toml's entry, else src/Main.sky)",
		run:     runMain,
	})
}

// runMain checks and loads the program and forces `main`. A failing main
// prints `Error: <Label>: <message>` and exits 1; a runtime error, or a
// program that does not parse, check or load, prints its diagnostics and
// exits 1.
func runMain(ctx context.Context, args []string, s streams) int {
	o, args, err := parseLoadFlags(args)
	if err != nil || len(args) > 1 {
		fmt.Fprintln(s.stderr, "usage: sky run [--unchecked] [FILE] [-- ARG...]")
		return exitNoBuild
	}
	file, proj, err := findProgram(args)
	if err != nil {
		report(s, err)
		return exitFailure
	}
	tel, err := telemetryFromEnv(ctx, os.Getenv, proj.File.Name, s.stdout)
	if err != nil {
		fmt.Fprintln(s.stderr, "sky:", err)
		return exitFailure
	}
	if tel != nil {
		o.telemetry = tel
		defer func() {
			if err := tel.shutdown(); err != nil {
				fmt.Fprintln(s.stderr, "sky: exporting telemetry:", err)
			}
		}()
	}
	prog, status, _ := loadProgram(file, proj, o, s)
	if prog == nil {
		return status
	}
	if err := prog.RunMain(ctx); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(s.stderr, "sky: interrupted")
			return exitInterrupted
		}
		return failureStatus(s, err)
	}
	return exitOK
}

// failureStatus reports why a program stopped and gives sky run's exit
// status: the code of a System.exit (which prints nothing), else 1.
func failureStatus(s streams, err error) int {
	var exit *value.Exit
	if errors.As(err, &exit) {
		return exit.Code
	}
	report(s, err)
	return exitFailure
}

// report prints err to stderr: the diagnostics of a program that does not
// parse, check or load, or that went wrong at run time, rendered by
// compiler/diag; any other error (a Task's failure) as `Error: <Label>:
// <message>`. It returns how many diagnostics it printed.
func report(s streams, err error) int {
	if d, ok := projectDiagnostic(err); ok {
		err = d
	}
	ds, ok := eval.Diagnostics(err)
	if !ok {
		fmt.Fprintln(s.stderr, "Error: "+eval.FailureText(err))
		return 0
	}
	fmt.Fprint(s.stderr, diag.Render(ds))
	return len(ds)
}
