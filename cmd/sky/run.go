package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"skydurable/compiler/diag"
	"skydurable/compiler/eval"
	"skydurable/runtime/value"
)

func init() {
	register(func() *cobra.Command {
		var o loadOptions
		cmd := &cobra.Command{
			Use:   "run [--unchecked] [FILE] [-- ARG...]",
			Short: "run a program's main (default: sky.toml's entry, else src/Main.sky)",
			Long: `Run a program: check it, load it and run its main. FILE is the program (default: the entry of
the nearest sky.toml above the working directory, else src/Main.sky); the ARGs after -- are
the program's System.args. A failing main prints "Error: <Label>: <message>" and exits 1, as
does a program that does not parse, check or load; System.exit N exits N. SIGINT or SIGTERM
exits 130, but an App (App.run), Server.listen or a Durable.worker that is main's last task
stops cleanly on them and exits 0.`,
			Example: `  sky run
  sky run app/src/Main.sky
  sky run -- serve --port 8080      # System.args is ["serve", "--port", "8080"]`,
			Args:              cobra.ArbitraryArgs,
			ValidArgsFunction: skyFiles,
		}
		addLoadFlags(cmd, &o)
		cmd.RunE = func(cmd *cobra.Command, args []string) error {
			return exitWith(runMain(cmd.Context(), o, splitProgramArgs(cmd, args, &o), streamsOf(cmd)))
		}
		return cmd
	})
}

// skyFiles completes a FILE argument with the .sky files (and the
// directories) of the shell's directory.
func skyFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"sky"}, cobra.ShellCompDirectiveFilterFileExt
}

// runMain checks and loads the program and forces `main`. A failing main
// prints `Error: <Label>: <message>` and exits 1; a runtime error, or a
// program that does not parse, check or load, prints its diagnostics and
// exits 1.
func runMain(ctx context.Context, o loadOptions, args []string, s streams) int {
	if len(args) > 1 {
		return badProgramArgs(s, "run", "sky run [--unchecked] [FILE] [-- ARG...]", args)
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
