package host

import (
	"path/filepath"
	"strings"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// pathKernels are Sky.Core.Path's: pure operations on path text with
// path/filepath (the file system is not read).
func pathKernels() []value.Kernel {
	str1 := func(name string, f func(string) value.Value) value.Kernel {
		return value.Kernel{Name: "Path_" + name, Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			s, err := stringArg("Path."+name, a[0])
			if err != nil {
				return nil, err
			}
			return f(s), nil
		}}
	}
	return []value.Kernel{
		str1("base", func(s string) value.Value { return filepath.Base(s) }),
		str1("dir", func(s string) value.Value { return filepath.Dir(s) }),
		str1("ext", func(s string) value.Value { return filepath.Ext(s) }),
		str1("isAbsolute", func(s string) value.Value { return filepath.IsAbs(s) }),
		{Name: "Path_join", Arity: 1, Fn: func(a []value.Value) (value.Value, error) {
			parts, err := stringList("Path.join", a[0])
			if err != nil {
				return nil, err
			}
			return filepath.Join(parts...), nil
		}},
		{Name: "Path_safeJoin", Arity: 2, Fn: func(a []value.Value) (value.Value, error) {
			root, err := stringArg("Path.safeJoin", a[0])
			if err != nil {
				return nil, err
			}
			rel, err := stringArg("Path.safeJoin", a[1])
			if err != nil {
				return nil, err
			}
			return safeJoin(root, rel), nil
		}},
	}
}

// safeJoin joins rel onto root and refuses (Err PermissionDenied naming
// rel) a result outside root: an absolute rel, or one whose `..` climbs out.
// Only the text is checked; a symbolic link inside root is not followed.
func safeJoin(root, rel string) value.Value {
	joined := filepath.Join(root, rel)
	inside, err := filepath.Rel(filepath.Clean(root), joined)
	if filepath.IsAbs(rel) || err != nil || inside == ".." || strings.HasPrefix(inside, ".."+string(filepath.Separator)) {
		return value.Err(value.FromError(task.Errorf(task.PermissionDenied,
			"Path.safeJoin %q %q: the path leads outside %q; hint: a path from a request must stay inside its root", root, rel, root)))
	}
	return value.Ok(joined)
}
