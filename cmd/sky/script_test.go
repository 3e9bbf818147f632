package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"skydurable/runtime/db/dbtest"
)

// TestMain lets the test binary act as the `sky` command inside scripts.
func TestMain(m *testing.M) {
	testscript.Main(withPostgres{m}, map[string]func(){
		"sky": func() { os.Exit(runCLI(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs every testscripts/*.txtar end to end with the real sky
// binary: each script holds a program, the commands, and the expected output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testscripts",
		RequireExplicitExec: true,
		Cmds:                allScriptCommands(t),
		Setup:               hermeticScript,
		Condition:           scriptCondition,
	})
}

// bashCompletion is the library of the bash-completion package, which the
// script of `sky completion bash` calls.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// scriptCondition answers the conditions of the scripts beyond
// testscript's own: [bash-completion] holds when the bash-completion
// package is installed.
func scriptCondition(cond string) (bool, error) {
	if cond == "bash-completion" {
		_, err := os.Stat(bashCompletion)
		return err == nil, nil
	}
	return false, fmt.Errorf("unknown condition %q; hint: testscript's own, or bash-completion", cond)
}

// hermeticScript keeps a script hermetic: no database, debug or keyring
// settings leak in from the environment.
func hermeticScript(env *testscript.Env) error {
	env.Setenv("DATABASE_URL", "")
	env.Setenv("SKY_LOG_DEBUG", "")
	env.Setenv("SKY_DURABLE_KEYS", "")
	return nil
}

// allScriptCommands are the custom commands every script may use.
func allScriptCommands(t *testing.T) map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := scriptCommands(t)
	for name, c := range httpCommands() {
		cmds[name] = c
	}
	return cmds
}

// withPostgres makes sure a PostgreSQL server answers for the scripts that
// use `pgdb` (starting a private one when none does; see dbtest.Main).
type withPostgres struct{ m *testing.M }

func (w withPostgres) Run() int { return dbtest.Run(w.m) }
