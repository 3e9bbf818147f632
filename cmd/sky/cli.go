package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The command line is a tree of cobra commands (docs/cli.md says why
// cobra): each top-level command is built in its own file, which calls
// register from its init function, and each `sky durable` subcommand is
// one durableCommand (durable.go). Cobra gives every command its --help
// with examples, `sky help COMMAND` and the completion scripts (`sky
// completion bash|zsh|fish|powershell`). What sky did before cobra and still does is
// done here: Go-style single-dash long flags (-json), Go's texts for flag
// errors, and the exit codes below.

// Exit codes shared by the commands; `sky help` prints exitCodesHelp.
const (
	exitOK      = 0
	exitFailure = 1 // the program or a test failed, or it does not parse/load (run)
	exitNoBuild = 2 // `sky test`: the program does not compile; also usage errors
	// exitInterrupted is the shell's code for a SIGINT: main was
	// cancelled by SIGINT or SIGTERM and stopped.
	exitInterrupted = 130
)

// exitCodesHelp explains the exit codes to users.
const exitCodesHelp = `Exit codes: 0 ok; 1 the program or a test failed, it does not load, or (sky durable) not found,
refused or the database failed; 2 usage (unknown command or flag, wrong arguments) or, for sky test,
a program that does not compile; 130 interrupted (SIGINT or SIGTERM; an App, Server.listen or a
Durable.worker that ends main stops cleanly on them and exits 0).`

// streams are a command's standard input, output and error.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// streamsOf are the streams cmd runs with (the root's, see newRoot).
func streamsOf(cmd *cobra.Command) streams {
	return streams{stdin: cmd.InOrStdin(), stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
}

// commands build the top-level commands, afresh for every invocation so
// that no flag keeps a value from an earlier one (the tests run many in
// one process).
var commands []func() *cobra.Command

// register adds a top-level command, built by build.
func register(build func() *cobra.Command) {
	commands = append(commands, build)
}

// exitCode is the error a command returns to end with that exit code
// (anything but 0), having printed why itself.
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

// exitWith turns a command's exit code into what its RunE returns.
func exitWith(code int) error {
	if code == exitOK {
		return nil
	}
	return exitCode(code)
}

// runCLI runs the command args name and returns the process exit code. The
// context it passes is cancelled on SIGINT or SIGTERM.
func runCLI(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return execute(ctx, args, streams{stdin: stdin, stdout: stdout, stderr: stderr})
}

// execute runs the command args name with ctx and s and returns its exit
// code: a command's own, or exitNoBuild for a usage error cobra found (an
// unknown flag, a flag without its value).
func execute(ctx context.Context, args []string, s streams) int {
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args = append([]string{"version"}, args[1:]...)
	}
	root := newRoot(s)
	root.SetArgs(goStyleFlags(root, args))
	err := root.ExecuteContext(ctx)
	var code exitCode
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &code):
		return int(code)
	}
	fmt.Fprintln(s.stderr, err)
	return exitNoBuild
}

// newRoot is the `sky` command with every registered command under it,
// reading and writing s.
func newRoot(s streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "sky",
		Short:         "run, test and inspect Sky programs",
		Args:          cobra.ArbitraryArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				rootHelp(cmd, s.stdout)
				return exitCode(exitNoBuild)
			}
			fmt.Fprintf(s.stderr, "sky: unknown command %q%s\n\n", args[0], didYouMean(cmd, args[0]))
			rootHelp(cmd, s.stderr)
			return exitCode(exitNoBuild)
		},
	}
	root.SetIn(s.stdin)
	root.SetOut(s.stdout)
	root.SetErr(s.stderr)
	root.SetFlagErrorFunc(flagError)
	for _, build := range commands {
		root.AddCommand(build())
	}
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Use, c.Short = "help [COMMAND [SUBCOMMAND]]", "print a command's help, with its flags and examples"
			c.RunE = helpTopic
		case "completion":
			c.Use, c.Short = "completion bash|zsh|fish|powershell", "print the shell completion script (see sky help completion bash)"
			c.Args, c.RunE = cobra.ArbitraryArgs, unknownShell
		}
	}
	disableFlagsInUseLine(root)
	defaultHelp := (&cobra.Command{}).HelpFunc()
	root.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == root {
			rootHelp(c, c.OutOrStdout())
			return
		}
		defaultHelp(c, args)
	})
	return root
}

// helpTopic is `sky help COMMAND...`: that command's help, or a usage
// error naming what is not a command.
func helpTopic(cmd *cobra.Command, args []string) error {
	target, rest, err := cmd.Root().Find(args)
	if err == nil && len(rest) == 0 {
		target.InitDefaultHelpFlag()
		return target.Help()
	}
	hint := ""
	if len(rest) > 0 {
		hint = didYouMean(target, rest[0])
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "sky help: unknown command %q%s\n", strings.Join(args, " "), hint)
	return exitCode(exitNoBuild)
}

// didYouMean is the hint after an unknown command name: the commands
// under parent spelt like it, or "".
func didYouMean(parent *cobra.Command, name string) string {
	parent.SuggestionsMinimumDistance = 2
	if near := parent.SuggestionsFor(name); len(near) > 0 {
		return "; hint: did you mean " + strings.Join(near, " or ") + "?"
	}
	return ""
}

// unknownShell is `sky completion` without a shell it knows: a usage
// error.
func unknownShell(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "sky completion: which shell? hint: sky completion bash (or zsh, fish, powershell)")
	} else {
		fmt.Fprintf(cmd.ErrOrStderr(), "sky completion: unknown shell %q; hint: sky completion bash (or zsh, fish, powershell)\n", args[0])
	}
	return exitCode(exitNoBuild)
}

// disableFlagsInUseLine keeps cobra from adding "[flags]" to the use lines
// of c and its subcommands: each use line names its flags itself.
func disableFlagsInUseLine(c *cobra.Command) {
	c.DisableFlagsInUseLine = true
	for _, sub := range c.Commands() {
		disableFlagsInUseLine(sub)
	}
}

// rootHelp prints `sky help`: a line per command, the exit codes, and
// where each command's own help is.
func rootHelp(root *cobra.Command, w io.Writer) {
	fmt.Fprintln(w, "Sky: run, test and inspect Sky programs.\n\nUsage:")
	width := 0
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			width = max(width, len(c.Use))
		}
	}
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.Name() == "help" {
			fmt.Fprintf(w, "  sky %-*s  %s\n", width, c.Use, c.Short)
		}
	}
	fmt.Fprintf(w, "\n%s\n\n`sky help COMMAND` or `sky COMMAND --help` prints a command's flags and examples.\n", exitCodesHelp)
}

// flagError is every command's answer to a flag it cannot parse: Go's
// flag package's text, which sky printed before cobra (scripts match it),
// and the command's use line. execute exits 2 on it.
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	var noValue *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if notExist.GetSpecifiedShortnames() != "" {
			name = notExist.GetSpecifiedShortnames()
		}
		err = fmt.Errorf("flag provided but not defined: -%s", name)
		if _, numErr := strconv.ParseFloat("-"+name, 64); numErr == nil {
			// A negative number meant as an argument (a signal's JSON payload).
			err = fmt.Errorf("%w; hint: an argument that starts with a dash goes after --, e.g. -- -%s", err, name)
		}
	case errors.As(err, &noValue):
		err = fmt.Errorf("flag needs an argument: -%s", noValue.GetSpecifiedName())
	case errors.As(err, &invalid):
		err = fmt.Errorf("invalid value %q for flag -%s: %v%s", invalid.GetValue(), invalid.GetFlag().Name, errors.Unwrap(invalid), valueHint(invalid.GetFlag()))
	}
	return fmt.Errorf("%s: %w\nusage: %s\n(%s prints its flags and examples)", cmd.CommandPath(), err, cmd.UseLine(), helpCommand(cmd))
}

// valueHint is the hint after a value flag f cannot parse: what its values
// look like, and its default.
func valueHint(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "duration":
		return fmt.Sprintf("; hint: a duration such as 500ms, 1s or 2m (the default is %s)", f.DefValue)
	case "int":
		return fmt.Sprintf("; hint: a whole number (the default is %s)", f.DefValue)
	}
	return ""
}

// helpCommand is the command that prints cmd's help: `sky help durable ls`.
func helpCommand(cmd *cobra.Command) string {
	return "sky help" + strings.TrimPrefix(cmd.CommandPath(), "sky")
}

// goStyleFlags rewrites the single-dash long flags of args (-json, -db=x),
// which Go's flag package read and sky accepted before cobra, to the
// double-dash spelling pflag reads (pflag takes -json for -j -s -o -n). A
// one-letter flag (-h) stays; everything from `--` on is left as it is, as
// is the value after a flag that takes one (`--workflow -x`).
func goStyleFlags(root *cobra.Command, args []string) []string {
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.DisableFlagParsing {
		return args
	}
	out := strings.Fields(cmd.CommandPath())[1:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			return append(out, rest[i:]...)
		}
		if len(a) < 2 || a[0] != '-' {
			out = append(out, a)
			continue
		}
		if len(a) > 2 && a[1] != '-' {
			a = "-" + a
		}
		out = append(out, a)
		name, _, withValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if f := cmd.Flags().Lookup(name); f != nil && f.NoOptDefVal == "" && !withValue && i+1 < len(rest) {
			i++
			out = append(out, rest[i])
		}
	}
	return out
}
