package host

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// processKernels are Sky.Core.Process's: `run program args` runs a program
// to its end and gives its standard output.
func processKernels() []value.Kernel {
	return []value.Kernel{
		{Name: "Process_run", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			program, err := stringArg("Process.run", a[0])
			if err != nil {
				return nil, err
			}
			args, err := stringList("Process.run", a[1])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(ctx context.Context) (value.Value, error) { return run(ctx, program, args) })}, nil
		}},
	}
}

// run runs program (a path, or a name looked up on PATH) with args, no
// standard input, and waits for it. A program that cannot start is
// NotFound or PermissionDenied; one that exits non-zero is an Io error
// giving the exit code and the end of its standard error. Cancelling the
// program's context kills the child (Timeout).
func run(ctx context.Context, program string, args []string) (value.Value, error) {
	if program == "" {
		return nil, task.New(task.InvalidInput, "Process.run: the program name is empty")
	}
	cmd := exec.CommandContext(ctx, program, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), nil
	case ctx.Err() != nil:
		return nil, task.As(ctx.Err())
	case errors.As(err, &exit):
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = "..." + msg[len(msg)-2000:]
		}
		if msg != "" {
			msg = ": " + msg
		}
		return nil, task.Errorf(task.Io, "Process.run %q: exited with code %d%s", program, exit.ExitCode(), msg)
	}
	return nil, osError("Process.run", program, err)
}
