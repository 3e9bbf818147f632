// Package host is the stdlib's face on the machine a program runs on: real
// Sky's Sky.Core.File (the file system), Sky.Core.Path (path text),
// Sky.Core.Process (running other programs) and Sky.Core.Io (standard
// input and output), with their Go kernels.
//
// Every kernel that touches the machine returns a Task; Path is pure. A
// failure is a Sky Error whose kind says what went wrong (NotFound for a
// missing file or program, PermissionDenied, InvalidInput for a bad
// argument, Io otherwise) and whose message names the path or program. The
// mapping from Go's errors to kinds is osError, the one place it is made.
//
// It may import runtime/task, runtime/value, runtime/app (the Sub of
// Process.events) and the standard library.
package host

import (
	"bufio"
	"embed"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"sync"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed *.sky
var sources embed.FS

var moduleFiles = map[string]string{
	"Sky.Core.File":    "File.sky",
	"Sky.Core.Path":    "Path.sky",
	"Sky.Core.Process": "Process.sky",
	"Sky.Core.Io":      "Io.sky",
}

// Modules returns the Sky source of File, Path, Process and Io.
func Modules() map[string]string {
	out := make(map[string]string, len(moduleFiles))
	for name, file := range moduleFiles {
		src, err := sources.ReadFile(file)
		if err != nil {
			panic("stdlib/host: embedded file missing: " + file) // a build bug, caught by the tests
		}
		out[name] = string(src)
	}
	return out
}

// Env is the standard streams Io reads and writes.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// DefaultEnv is the process's standard streams.
func DefaultEnv() Env { return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr} }

// KernelsWith returns every kernel of the four modules, Io on env's streams.
func KernelsWith(env Env) map[string]value.Kernel {
	out := map[string]value.Kernel{}
	for _, group := range [][]value.Kernel{fileKernels(), fileInfoKernels(), pathKernels(), processKernels(), spawnKernels(), ioKernels(env)} {
		for _, k := range group {
			if _, dup := out[k.Name]; dup {
				panic("stdlib/host: kernel defined twice: " + k.Name)
			}
			out[k.Name] = k
		}
	}
	return out
}

// osError is a Go file-system or process error as a Sky Error: the kind from
// what failed, the message "<fn> <subject>: <Go's reason>".
func osError(fn, subject string, err error) *task.Error {
	kind := task.Io
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, exec.ErrNotFound):
		kind = task.NotFound
	case errors.Is(err, fs.ErrPermission):
		kind = task.PermissionDenied
	case errors.Is(err, fs.ErrExist):
		kind = task.Conflict
	}
	if pe, ok := err.(*fs.PathError); ok {
		err = pe.Err // the path is already in the message
	}
	return task.Errorf(kind, "%s %q: %w", fn, subject, err)
}

func stringArg(fn string, v value.Value) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	return "", value.BadArg(fn, "a String", v)
}

func stringList(fn string, v value.Value) ([]string, error) {
	l, ok := v.(*value.List)
	if !ok && v != nil {
		return nil, value.BadArg(fn, "a List String", v)
	}
	var out []string
	for _, x := range l.Slice() {
		s, err := stringArg(fn, x)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// lineReader shares one buffered reader of stdin between Io.readLine calls,
// so text read ahead for one line is there for the next.
type lineReader struct {
	mu sync.Mutex
	r  *bufio.Reader
}
