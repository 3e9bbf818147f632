package host

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// fileInfoKernels are File's metadata and link functions: stat and lstat
// (a record File.sky turns into FileInfo), realPath, readLink, chmod and
// resolveWithin.
func fileInfoKernels() []value.Kernel {
	path1 := func(name string, run func(fn, path string) (value.Value, error)) value.Kernel {
		fn := "File." + name
		return value.Kernel{Name: "File_" + name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			p, err := stringArg(fn, a[0])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return run(fn, p) })}, nil
		}}
	}
	return []value.Kernel{
		path1("stat", func(fn, p string) (value.Value, error) { return statRecord(fn, p, os.Stat) }),
		path1("lstat", func(fn, p string) (value.Value, error) { return statRecord(fn, p, os.Lstat) }),
		path1("realPath", func(fn, p string) (value.Value, error) {
			real, err := realPath(p)
			if err != nil {
				return nil, osError(fn, p, err)
			}
			return real, nil
		}),
		path1("readLink", func(fn, p string) (value.Value, error) {
			target, err := os.Readlink(p)
			if st, lerr := os.Lstat(p); err != nil && lerr == nil && st.Mode()&fs.ModeSymlink == 0 {
				return nil, task.Errorf(task.InvalidInput, "%s %q: the path is not a symbolic link", fn, p)
			}
			if err != nil {
				return nil, osError(fn, p, err)
			}
			return target, nil
		}),
		{Name: "File_chmod", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			mode, ok := a[0].(int64)
			if !ok {
				return nil, value.BadArg("File.chmod", "an Int mode", a[0])
			}
			p, err := stringArg("File.chmod", a[1])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) {
				if mode < 0 || mode > 0o7777 {
					return nil, task.Errorf(task.InvalidInput, "File.chmod %d %q: a mode is from 0 to 4095 (octal 7777); hint: File.permissions 6 4 4 is 420", mode, p)
				}
				if err := os.Chmod(p, unixMode(mode)); err != nil {
					return nil, osError("File.chmod", p, err)
				}
				return value.Unit{}, nil
			})}, nil
		}},
		{Name: "File_resolveWithin", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			root, err := stringArg("File.resolveWithin", a[0])
			if err != nil {
				return nil, err
			}
			p, err := stringArg("File.resolveWithin", a[1])
			if err != nil {
				return nil, err
			}
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return resolveWithin(root, p) })}, nil
		}},
	}
}

// statRecord is { kind, size, modified, mode } of the path: kind 0 a file,
// 1 a directory, 2 a symbolic link (lstat only), 3 anything else.
func statRecord(fn, p string, stat func(string) (fs.FileInfo, error)) (value.Value, error) {
	st, err := stat(p)
	if err != nil {
		return nil, osError(fn, p, err)
	}
	kind := int64(3)
	switch {
	case st.Mode().IsRegular():
		kind = 0
	case st.IsDir():
		kind = 1
	case st.Mode()&fs.ModeSymlink != 0:
		kind = 2
	}
	mode := int64(st.Mode().Perm())
	for bit, unix := range map[fs.FileMode]int64{fs.ModeSetuid: 0o4000, fs.ModeSetgid: 0o2000, fs.ModeSticky: 0o1000} {
		if st.Mode()&bit != 0 {
			mode |= unix
		}
	}
	return value.NewRecord(map[string]value.Value{
		"kind": kind, "size": st.Size(), "modified": st.ModTime().UnixMilli(), "mode": mode,
	}), nil
}

// unixMode is a Unix mode number (setuid, setgid and sticky in their octal
// places) as Go's FileMode.
func unixMode(m int64) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	for unix, bit := range map[int64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if m&unix != 0 {
			mode |= bit
		}
	}
	return mode
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// resolveWithin resolves p against root (which must exist) following every
// symbolic link and `..`; the result must be root or inside it, else it is
// PermissionDenied. Missing last elements are allowed (a file about to be
// written).
func resolveWithin(root, p string) (value.Value, error) {
	const fn = "File.resolveWithin"
	realRoot, err := realPath(root)
	if err != nil {
		return nil, osError(fn, root, err)
	}
	target := p
	if !filepath.IsAbs(target) {
		target = filepath.Join(realRoot, target)
	}
	resolved, err := resolveLinks(target)
	if err != nil {
		return nil, osError(fn, p, err)
	}
	rel, err := filepath.Rel(realRoot, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, task.Errorf(task.PermissionDenied, "%s %q %q: the path leads outside %q; hint: a path from a request must stay inside its root", fn, root, p, root)
	}
	return resolved, nil
}

// resolveLinks resolves the absolute path abs one element at a time: `..`
// goes up, a symbolic link is replaced by its target (even a dangling one),
// and the first missing element ends the walk (the rest is joined as
// written). More than 40 links is an error, as a loop would be.
func resolveLinks(abs string) (string, error) {
	rest := strings.Split(filepath.ToSlash(filepath.Clean(abs)), "/")[1:]
	cur := string(filepath.Separator)
	for hops := 0; len(rest) > 0; {
		elem := rest[0]
		rest = rest[1:]
		switch elem {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, elem)
		st, err := os.Lstat(next)
		if err != nil {
			if os.IsNotExist(err) {
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", &fs.PathError{Op: "resolve", Path: abs, Err: fs.ErrInvalid}
		}
		link, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(link) {
			cur = string(filepath.Separator)
		}
		rest = append(strings.Split(filepath.ToSlash(link), "/"), rest...)
	}
	return cur, nil
}
