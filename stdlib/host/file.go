package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// readLimit is what File.readFile reads at most (real Sky's 100 MiB), so an
// unexpectedly huge file is an error instead of the whole memory.
const readLimit = 100 << 20

// fileKernels are Sky.Core.File's. Each returns a Task; a relative path is
// relative to the working directory of the program.
func fileKernels() []value.Kernel {
	// onPath is a kernel taking a path (and more Strings) whose work runs
	// when its Task runs.
	onPath := func(name string, arity int, run func(fn string, args []string) (value.Value, error)) value.Kernel {
		fn := "File." + name
		return value.Kernel{Name: "File_" + name, Arity: arity, Fn: func(a []value.Value) (value.Value, error) {
			args := make([]string, arity)
			for i := range a {
				s, err := stringArg(fn, a[i])
				if err != nil {
					return nil, err
				}
				args[i] = s
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return run(fn, args) })}, nil
		}}
	}
	unit := func(fn, path string, err error) (value.Value, error) {
		if err != nil {
			return nil, osError(fn, path, err)
		}
		return value.Unit{}, nil
	}
	return []value.Kernel{
		onPath("readFile", 1, func(fn string, a []string) (value.Value, error) {
			b, err := readAtMost(fn, a[0], readLimit, "File.readFileLimit")
			return string(b), err
		}),
		{Name: "File_readFileLimit", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			path, err := stringArg("File.readFileLimit", a[0])
			if err != nil {
				return nil, err
			}
			limit, ok := a[1].(int64)
			if !ok {
				return nil, value.BadArg("File.readFileLimit", "an Int byte limit", a[1])
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if limit <= 0 {
					return nil, task.Errorf(task.InvalidInput, "File.readFileLimit %q %d: the limit is a positive number of bytes", path, limit)
				}
				b, err := readAtMost("File.readFileLimit", path, limit, "")
				return string(b), err
			})}, nil
		}},
		onPath("readFileBytes", 1, func(fn string, a []string) (value.Value, error) {
			b, err := readAtMost(fn, a[0], readLimit, "")
			if err != nil {
				return nil, err
			}
			out := make([]value.Value, len(b))
			for i, c := range b {
				out[i] = int64(c)
			}
			return value.FromSlice(out), nil
		}),
		onPath("writeFile", 2, func(fn string, a []string) (value.Value, error) {
			return unit(fn, a[0], os.WriteFile(a[0], []byte(a[1]), 0o644))
		}),
		onPath("append", 2, func(fn string, a []string) (value.Value, error) {
			f, err := os.OpenFile(a[0], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			_, err = f.WriteString(a[1])
			return unit(fn, a[0], errors.Join(err, f.Close()))
		}),
		onPath("exists", 1, func(fn string, a []string) (value.Value, error) {
			_, err := os.Stat(a[0])
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			return true, nil
		}),
		onPath("isDir", 1, func(fn string, a []string) (value.Value, error) {
			st, err := os.Stat(a[0])
			if errors.Is(err, fs.ErrNotExist) {
				return false, nil
			}
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			return st.IsDir(), nil
		}),
		onPath("remove", 1, func(fn string, a []string) (value.Value, error) {
			if _, err := os.Lstat(a[0]); err != nil {
				return nil, osError(fn, a[0], err)
			}
			return unit(fn, a[0], os.RemoveAll(a[0]))
		}),
		onPath("mkdirAll", 1, func(fn string, a []string) (value.Value, error) {
			return unit(fn, a[0], os.MkdirAll(a[0], 0o755))
		}),
		onPath("readDir", 1, func(fn string, a []string) (value.Value, error) {
			entries, err := os.ReadDir(a[0])
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			out := make([]value.Value, len(entries))
			for i, e := range entries {
				out[i] = e.Name()
			}
			return value.FromSlice(out), nil
		}),
		onPath("tempFile", 1, func(fn string, a []string) (value.Value, error) {
			f, err := os.CreateTemp("", a[0]+"*")
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			return f.Name(), f.Close()
		}),
		onPath("tempDir", 1, func(fn string, a []string) (value.Value, error) {
			dir, err := os.MkdirTemp("", a[0]+"*")
			if err != nil {
				return nil, osError(fn, a[0], err)
			}
			return dir, nil
		}),
		onPath("copy", 2, func(fn string, a []string) (value.Value, error) {
			return unit(fn, a[0], copyFile(a[0], a[1]))
		}),
		onPath("rename", 2, func(fn string, a []string) (value.Value, error) {
			return unit(fn, a[0], os.Rename(a[0], a[1]))
		}),
	}
}

// readAtMost reads the file at path when it holds at most limit bytes; a
// bigger one is an InvalidInput error naming its size (and, when hint is
// set, the function that reads more).
func readAtMost(fn, path string, limit int64, hint string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, osError(fn, path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, osError(fn, path, err)
	}
	if int64(len(b)) > limit {
		msg := fmt.Sprintf("%s %q: the file is larger than %d bytes", fn, path, limit)
		if hint != "" {
			msg += "; hint: read it with " + hint
		}
		return nil, task.New(task.InvalidInput, msg)
	}
	return b, nil
}

// copyFile copies the regular file from into to (created or truncated),
// keeping from's permission bits.
func copyFile(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("is a directory; File.copy copies one file")
	}
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, st.Mode().Perm())
	if err != nil {
		return fmt.Errorf("the destination %q: %w", filepath.Clean(to), err)
	}
	_, err = io.Copy(dst, src)
	return errors.Join(err, dst.Close())
}
