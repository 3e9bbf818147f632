package host

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// ioKernels are Sky.Core.Io's: a line from stdin, text to stdout or stderr
// (written as given, no newline added).
func ioKernels(env Env) []value.Kernel {
	lines := &lineReader{r: bufio.NewReader(env.Stdin)}
	write := func(name string, w io.Writer) value.Kernel {
		fn := "Io." + name
		return value.Kernel{Name: "Io_" + name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, err := stringArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if _, err := io.WriteString(w, s); err != nil {
					return nil, task.Errorf(task.Io, "%s: %w", fn, err)
				}
				return value.Unit{}, nil
			})}, nil
		}}
	}
	return []value.Kernel{
		{Name: "Io_readLine", Arity: 1, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return lines.next() })}, nil
		}},
		write("writeStdout", env.Stdout),
		write("writeStderr", env.Stderr),
	}
}

// next is the next line without its line ending. At the end of the input a
// last line without a newline is returned; after it, reading fails NotFound
// ("standard input is at its end"), which a loop reading lines stops on.
func (l *lineReader) next() (value.Value, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line, err := l.r.ReadString('\n')
	if errors.Is(err, io.EOF) && line == "" {
		return nil, task.New(task.NotFound, "Io.readLine: standard input is at its end")
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, task.Errorf(task.Io, "Io.readLine: %w", err)
	}
	return strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"), nil
}
