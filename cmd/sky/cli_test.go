package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The command line itself: help, completion, exit codes and the Go-style
// flags sky took before cobra. What each command does is in testscripts/,
// with the completion scripts (cli_completion.txtar).

// runSky runs `sky args...` in-process and returns its exit code, stdout
// and stderr.
func runSky(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := execute(context.Background(), args, streams{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut})
	return code, out.String(), errOut.String()
}

func TestExitCodesOfHelpAndUnknownCommands(t *testing.T) {
	for _, c := range []struct {
		args   []string
		code   int
		stdout string // a line the help printed on stdout, or ""
		stderr string
	}{
		{nil, exitNoBuild, "sky run [--unchecked] [FILE] [-- ARG...]", ""},
		{[]string{"help"}, exitOK, "sky durable COMMAND", ""},
		{[]string{"--help"}, exitOK, "Exit codes: 0 ok;", ""},
		{[]string{"-h"}, exitOK, "sky completion bash|zsh|fish|powershell", ""},
		{[]string{"frobnicate"}, exitNoBuild, "", `sky: unknown command "frobnicate"`},
		{[]string{"--frobnicate"}, exitNoBuild, "", "flag provided but not defined: -frobnicate"},
		{[]string{"durable"}, exitNoBuild, "sky durable compact --older-than DURATION", ""},
		{[]string{"durable", "help"}, exitOK, "sky durable show ID [--json]", ""},
		{[]string{"durable", "--help"}, exitOK, "sky durable show ID [--json]", ""},
		{[]string{"durable", "frobnicate"}, exitNoBuild, "", `sky durable: unknown subcommand "frobnicate"`},
		{[]string{"durable", "lss"}, exitNoBuild, "", `sky durable: unknown subcommand "lss"; hint: did you mean ls?`},
		{[]string{"durabel", "ls"}, exitNoBuild, "", `sky: unknown command "durabel"; hint: did you mean durable?`},
		{[]string{"help", "durable", "lss"}, exitNoBuild, "", `sky help: unknown command "durable lss"; hint: did you mean ls?`},
		{[]string{"help", "frobnicate"}, exitNoBuild, "", `sky help: unknown command "frobnicate"`},
		{[]string{"durable", "help", "frobnicate"}, exitNoBuild, "", `sky durable help: unknown subcommand "frobnicate"`},
		{[]string{"durable", "ls", "--frobnicate"}, exitNoBuild, "", "flag provided but not defined: -frobnicate"},
		{[]string{"durable", "ls", "--limit"}, exitNoBuild, "", "flag needs an argument: -limit"},
		{[]string{"durable", "ls", "--limit", "many"}, exitNoBuild, "", `invalid value "many" for flag -limit`},
		{[]string{"durable", "export", "--status", "sleeping"}, exitNoBuild, "", `invalid value "sleeping" for flag -status: unknown status "sleeping"`},
		{[]string{"durable", "show"}, exitNoBuild, "", "expected 1 argument(s) (ID), got 0"},
		{[]string{"run", "a.sky", "b.sky"}, exitNoBuild, "", "usage: sky run [--unchecked] [FILE] [-- ARG...]"},
		{[]string{"run", "--bogus"}, exitNoBuild, "", "usage: sky run [--unchecked] [FILE] [-- ARG...]"},
		{[]string{"test"}, exitNoBuild, "", "usage: sky test [--unchecked] FILE"},
		{[]string{"check", "a.sky", "b.sky"}, exitNoBuild, "", "usage: sky check [FILE]"},
		{[]string{"--version"}, exitOK, "sky 0.", ""},
		{[]string{"version"}, exitOK, "sky 0.", ""},
		{[]string{"version", "extra"}, exitNoBuild, "", `sky version: unexpected argument "extra"; hint: sky version takes no arguments`},
	} {
		code, stdout, stderr := runSky(c.args...)
		if code != c.code || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
			t.Errorf("sky %s: exit %d, want %d with %q on stdout and %q on stderr; got:\n%s\n--- stderr:\n%s",
				strings.Join(c.args, " "), code, c.code, c.stdout, c.stderr, stdout, stderr)
		}
	}
}

// TestCommandHelpHasExamples: each command's help, asked for any of three
// ways, is the same text, with its use line, examples and flags.
func TestCommandHelpHasExamples(t *testing.T) {
	for _, c := range []struct {
		name  string
		ways  [][]string
		wants []string
	}{
		{"durable ls", [][]string{{"help", "durable", "ls"}, {"durable", "ls", "--help"}, {"durable", "help", "ls"}, {"durable", "ls", "-h"}},
			[]string{"sky durable ls [--status S]", "Examples:\n  sky durable ls\n", "--status failed --workflow checkout", "--before string", "--db string", "Exit codes: 0 ok, 1 not found"}},
		{"durable retry", [][]string{{"help", "durable", "retry"}, {"durable", "retry", "--help"}},
			[]string{"sky durable retry ID | retry FILTERS...", "--created-before string", "--dry-run", "sky durable retry --status dead"}},
		{"run", [][]string{{"help", "run"}, {"run", "--help"}},
			[]string{"sky run [--unchecked] [FILE] [-- ARG...]", "Examples:", "--unchecked"}},
	} {
		var first string
		for i, args := range c.ways {
			code, stdout, stderr := runSky(args...)
			if code != exitOK || stderr != "" {
				t.Fatalf("sky %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr)
			}
			if i == 0 {
				first = stdout
				for _, want := range c.wants {
					if !strings.Contains(stdout, want) {
						t.Errorf("sky %s: the help lacks %q:\n%s", strings.Join(args, " "), want, stdout)
					}
				}
			} else if stdout != first {
				t.Errorf("sky %s printed another help than sky %s:\n%s", strings.Join(args, " "), strings.Join(c.ways[0], " "), stdout)
			}
		}
	}
}

// TestEveryDurableCommandHasHelpAndExamples keeps the help whole as
// subcommands are added: each says what it does and shows itself in use.
func TestEveryDurableCommandHasHelpAndExamples(t *testing.T) {
	for name, c := range durableCommands {
		if c.short == "" || !strings.HasPrefix(c.example, "  sky durable "+name) || c.run == nil {
			t.Errorf("sky durable %s: needs a short help, an example starting %q and a run function", name, "  sky durable "+name)
		}
	}
}

// TestCompletionOffersCommandsFlagsAndStatuses asks what the shells' scripts
// ask (`sky __complete ARGS... PARTIAL`); testscripts/cli_completion.txtar
// checks the scripts themselves.
func TestCompletionOffersCommandsFlagsAndStatuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
		// exact: the candidates are want and no other.
		exact bool
	}{
		{[]string{"dur"}, []string{"durable\t"}, false},
		{[]string{"durable", "s"}, []string{"show\t", "signal\t", "signals\t", "schedules\t", "stats\t"}, false},
		{[]string{"durable", "ls", "--st"}, []string{"--status\t"}, false},
		{[]string{"durable", "ls", "--status", ""}, []string{"running", "waiting", "done", "failed", "dead", "cancelled", "timed_out"}, true},
		{[]string{"durable", "cancel", "--status", "w"}, []string{"waiting"}, false},
		// A bulk action offers only the statuses it accepts.
		{[]string{"durable", "retry", "--status", ""}, []string{"failed", "dead"}, true},
		{[]string{"durable", "cancel", "--status", ""}, []string{"waiting", "running", "failed"}, true},
		{[]string{"durable", "release", "--status", ""}, []string{"running"}, true},
	} {
		code, out, _ := runSky(append([]string{"__complete"}, c.args...)...)
		if c.exact {
			// The candidates are the lines before cobra's ":directive".
			got, _, _ := strings.Cut(out, "\n:")
			if code != exitOK || got != strings.Join(c.want, "\n") {
				t.Errorf("sky __complete %s: exit %d, offers %q, want exactly %q", strings.Join(c.args, " "), code, got, c.want)
			}
			continue
		}
		for _, want := range c.want {
			if code != exitOK || !strings.Contains(out, want) {
				t.Errorf("sky __complete %s: exit %d, want %q among:\n%s", strings.Join(c.args, " "), code, want, out)
			}
		}
	}
}

// TestGoStyleFlagsStillWork: sky read its flags with Go's flag package,
// which takes -json as --json and flags after the arguments; scripts
// written then keep working, and a flag's value may start with a dash.
func TestGoStyleFlagsStillWork(t *testing.T) {
	dsn, _, _ := cliEngine(t, "sqlite", "go-style")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ls", "-json"}, exitOK, "[]"},
		{[]string{"ls", "-status=done", "-limit", "3", "-json"}, exitOK, "[]"},
		{[]string{"ls", "--workflow", "-json"}, exitOK, "no runs"},
		{[]string{"ls", "-frobnicate"}, exitNoBuild, "flag provided but not defined: -frobnicate"},
		{[]string{"show", "nope", "-json"}, exitFailure, `no run with id "nope"`},
		{[]string{"signal", "nope", "go", "-3"}, exitNoBuild, "flag provided but not defined: -3"},
	} {
		code, out := runDurableOn(dsn, "", c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("sky durable %s: exit %d, want %d and %q; got:\n%s", strings.Join(c.args, " "), code, c.code, c.want, out)
		}
	}
	// After --, a word that starts with a dash is an argument: here the payload -3.
	code, stdout, stderr := runSky("durable", "signal", "--db", dsn, "early", "adjust", "--", "-3")
	if code != exitOK || !strings.Contains(stdout, "early") {
		t.Errorf("sky durable signal early adjust -- -3: exit %d\n%s%s", code, stdout, stderr)
	}
}
