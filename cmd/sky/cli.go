package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"sort"
	"syscall"
)

// Exit codes shared by the subcommands.
const (
	exitOK      = 0
	exitFailure = 1 // the program or a test failed, or it does not parse/load (run)
	exitNoBuild = 2 // `sky test`: the program does not compile; also usage errors
	// exitInterrupted is the shell's code for a SIGINT: main was
	// cancelled by SIGINT or SIGTERM and stopped.
	exitInterrupted = 130
)

// streams are a subcommand's standard input, output and error.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// command is one subcommand. A file adds one by calling register from its
// init function, so `check` and `durable` live in their own files.
type command struct {
	name    string
	usage   string // e.g. "sky run [FILE]"
	summary string // one line for `sky help`
	run     func(ctx context.Context, args []string, io streams) int
}

var commands = map[string]*command{}

// register adds a subcommand; a duplicate name is a programming error.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("sky: subcommand registered twice: " + c.name)
	}
	commands[c.name] = c
}

// runCLI dispatches to a subcommand and returns the process exit code. The
// context it passes is cancelled on SIGINT or SIGTERM.
func runCLI(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	s := streams{stdin: stdin, stdout: stdout, stderr: stderr}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return exitNoBuild
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args[0] = "version"
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "sky: unknown command %q\n\n", args[0])
		usage(stderr)
		return exitNoBuild
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return c.run(ctx, args[1:], s)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Sky: run, test and inspect Sky programs.\n\nUsage:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	width := 0
	for _, n := range names {
		width = max(width, len(commands[n].usage))
	}
	for _, n := range names {
		fmt.Fprintf(w, "  %-*s  %s\n", width, commands[n].usage, commands[n].summary)
	}
}
