package houserules

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// modulePath is the module's import path prefix.
const modulePath = "skydurable"

// goPackage is the part of `go list -json` the rules read.
type goPackage struct {
	ImportPath   string
	Name         string
	Dir          string
	Doc          string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	Deps         []string
	TestImports  []string
	XTestImports []string
}

// rel is a module package's path inside the module ("runtime/durable").
func rel(importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, modulePath), "/")
}

// inModule reports whether importPath is one of the module's packages.
func inModule(importPath string) bool {
	return importPath == modulePath || strings.HasPrefix(importPath, modulePath+"/")
}

// run runs a command in dir and returns its standard output.
func run(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.Join(err, errors.New(strings.TrimSpace(stderr.String())))
	}
	return out, nil
}

// repo is what the rules read once per test process: the module root and
// its packages.
var repo = sync.OnceValues(func() (*repository, error) {
	gomod, err := run(".", "go", "env", "GOMOD")
	if err != nil {
		return nil, err
	}
	r := &repository{root: filepath.Dir(strings.TrimSpace(string(gomod)))}
	out, err := run(r.root, "go", "list", "-json", "./...")
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		r.packages = append(r.packages, p)
	}
	return r, nil
})

// repository is the module as the rules see it.
type repository struct {
	root     string
	packages []goPackage
}

// loadRepo returns the repository or fails the test.
func loadRepo(t *testing.T) *repository {
	t.Helper()
	r, err := repo()
	if err != nil {
		t.Fatalf("reading the module with `go list`: %v", err)
	}
	return r
}

// byPath indexes the module's packages by import path.
func (r *repository) byPath() map[string]goPackage {
	m := make(map[string]goPackage, len(r.packages))
	for _, p := range r.packages {
		m[p.ImportPath] = p
	}
	return m
}
