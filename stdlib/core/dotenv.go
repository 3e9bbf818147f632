package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// loadEnvKernel is real Sky's `System.loadEnv : () -> Task Error ()`: it
// reads `.env` in the working directory and sets each variable that is not
// already set (the process environment wins, as with godotenv). A missing
// file is not an error: the same program runs where the variables come
// from the environment instead.
func loadEnvKernel(p Process) value.Kernel {
	return value.Kernel{Name: "System_loadEnv", Arity: 1, Fn: func([]value.Value) (value.Value, error) {
		return value.Task{T: task.From(func(context.Context) (value.Value, error) {
			dir, err := p.Getwd()
			if err != nil {
				return nil, task.Errorf(task.Io, "System.loadEnv: %w", err)
			}
			path := filepath.Join(dir, ".env")
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				return value.Unit{}, nil
			}
			if err != nil {
				return nil, task.Errorf(task.Io, "System.loadEnv: %w", err)
			}
			vars, err := parseDotenv(path, string(data))
			if err != nil {
				return nil, err
			}
			for _, kv := range vars {
				if _, set := p.LookupEnv(kv[0]); set {
					continue
				}
				if err := p.Setenv(kv[0], kv[1]); err != nil {
					return nil, task.Errorf(task.InvalidInput, "System.loadEnv: %s: %q: %w", path, kv[0], err)
				}
			}
			return value.Unit{}, nil
		})}, nil
	}}
}

// parseDotenv reads `KEY=value` lines: blank lines and `#` comments are
// skipped, `export ` before a key is allowed, a value may be in double
// quotes (Go escapes) or single quotes (literal), and a comment may follow
// it; an unquoted value ends at ` #`. A line without `=` is an InvalidInput error naming its number.
func parseDotenv(path, text string) ([][2]string, error) {
	var out [][2]string
	var err error
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, task.Errorf(task.InvalidInput, "System.loadEnv: %s:%d: %q is not KEY=value; hint: one variable a line, e.g. PORT=8080", path, i+1, line)
		}
		val = strings.TrimSpace(val)
		if q := strings.LastIndexByte(val, firstByte(val)); (firstByte(val) == '"' || firstByte(val) == '\'') && q > 0 {
			rest := strings.TrimSpace(val[q+1:])
			quoted := val[:q+1]
			if rest != "" && !strings.HasPrefix(rest, "#") {
				return nil, task.Errorf(task.InvalidInput, "System.loadEnv: %s:%d: text after the quoted value of %s: %s", path, i+1, key, rest)
			}
			if quoted[0] == '\'' {
				val = quoted[1 : len(quoted)-1]
			} else if val, err = strconv.Unquote(quoted); err != nil {
				return nil, task.Errorf(task.InvalidInput, "System.loadEnv: %s:%d: the value of %s is not a valid quoted string: %s", path, i+1, key, quoted)
			}
		} else if j := strings.Index(val, " #"); j >= 0 {
			val = strings.TrimSpace(val[:j])
		}
		out = append(out, [2]string{key, val})
	}
	return out, nil
}

func firstByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}
