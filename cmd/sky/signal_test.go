package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestInterruptCancelsMain runs sky as a process of its own on a program
// that sleeps, sends SIGINT once it has started, and expects the sleep to be
// cancelled and sky to exit 130 with "sky: interrupted". The process is this
// test binary as the `sky` command TestMain puts on $PATH (testscript.Main),
// which runs runCLI as main does; a go build of the binary took seconds.
func TestInterruptCancelsMain(t *testing.T) {
	dir := t.TempDir()
	bin, err := exec.LookPath("sky")
	if err != nil {
		t.Fatalf("no sky command on $PATH (TestMain puts it there): %v", err)
	}
	prog := filepath.Join(dir, "Main.sky")
	src := `module Main exposing (main)

import Sky.Core.Task as Task
import Sky.Core.Time as Time
import Std.Log exposing (println)


main : Task Error ()
main =
    println "sleeping"
        |> Task.andThen (\_ -> Time.sleep 600000)
        |> Task.andThen (\_ -> println "woke")
`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", prog)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "sleeping" {
		cmd.Process.Kill()
		t.Fatalf("first line = %q, want sleeping (stderr: %s)", lines.Text(), stderr.String())
	}
	// The first line is printed from inside main, after the signal handler
	// is installed, so the interrupt reaches sky rather than killing it.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
		if lines.Text() == "woke" {
			t.Error("the sleep was not cancelled")
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("exit = %v, want code %d (stderr: %s)", err, exitInterrupted, stderr.String())
	}
	if got := strings.TrimSpace(stderr.String()); got != "sky: interrupted" {
		t.Errorf("stderr = %q, want sky: interrupted", got)
	}
}
