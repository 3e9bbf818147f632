// Package log is Std.Log: println to standard output and levelled log lines
// to standard error.
//
// `Log.println s` writes s and a newline to stdout. `Log.info`, `warn`,
// `error` and `debug` write one line to stderr prefixed with `[INFO] `,
// `[WARN] `, `[ERROR] ` or `[DEBUG] `; debug lines are dropped unless the
// environment variable SKY_LOG_DEBUG is non-empty; a line break in their
// message is written \n (or \r), so a call is one line. Each call writes its line
// with one Write under a lock, so lines from parallel Tasks never interleave.
// The `*With` variants (real Sky's) add key=value attributes to the line.
//
// It may import runtime/task, runtime/value and the standard library; never
// compiler/ or cmd/.
package log

import (
	"context"
	_ "embed"
	"io"
	"os"
	"strings"
	"sync"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

//go:embed Log.sky
var source string

// Modules returns the Sky source of Std.Log.
func Modules() map[string]string { return map[string]string{"Std.Log": source} }

// Env is where the log kernels write.
type Env struct {
	Stdout, Stderr io.Writer
	// Debug enables Log.debug lines.
	Debug bool
}

// DefaultEnv writes to the process's stdout and stderr; Debug follows
// SKY_LOG_DEBUG.
func DefaultEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Debug: os.Getenv("SKY_LOG_DEBUG") != ""}
}

// Kernels returns the Std.Log kernels with DefaultEnv.
func Kernels() map[string]value.Kernel { return KernelsWith(DefaultEnv()) }

// KernelsWith returns the Std.Log kernels writing to env.
func KernelsWith(env Env) map[string]value.Kernel {
	var mu sync.Mutex
	write := func(w io.Writer, text string) (value.Value, error) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(w, text); err != nil {
			return nil, task.Errorf(task.Io, "writing a log line: %w", err)
		}
		return value.Unit{}, nil
	}
	line := func(name string, w io.Writer, prefix string, enabled bool) value.Kernel {
		return value.Kernel{Name: name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, ok := a[0].(string)
			if !ok {
				return nil, value.BadArg("Log."+name[len("Log_"):], "a String", a[0])
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if !enabled {
					return value.Unit{}, nil
				}
				if prefix != "" {
					s = oneLine(s)
				}
				return write(w, prefix+s+"\n")
			})}, nil
		}}
	}
	out := map[string]value.Kernel{}
	for _, k := range []value.Kernel{
		line("Log_println", env.Stdout, "", true),
		line("Log_info", env.Stderr, "[INFO] ", true),
		line("Log_warn", env.Stderr, "[WARN] ", true),
		line("Log_error", env.Stderr, "[ERROR] ", true),
		line("Log_debug", env.Stderr, "[DEBUG] ", env.Debug),
		withAttrs("Log_infoWith", env.Stderr, "[INFO] ", true, write),
		withDict(env.Stderr, write),
		withAttrs("Log_warnWith", env.Stderr, "[WARN] ", true, write),
		withAttrs("Log_errorWith", env.Stderr, "[ERROR] ", true, write),
		withAttrs("Log_debugWith", env.Stderr, "[DEBUG] ", env.Debug, write),
	} {
		out[k.Name] = k
	}
	return out
}

// oneLine writes a levelled line's line breaks as \n and \r, so one call
// is one line of the log, whatever the message holds (a payload, an error
// from a service): a reader of the log, or a tool, cannot be handed a line
// the program did not log.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(s)
}
