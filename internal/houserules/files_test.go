package houserules

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedSize is the largest file the repository may track: sources,
// docs and test data stay far below it, a built binary does not.
const maxTrackedSize = 1 << 20

// executableScripts are the tracked files that may be executable: scripts a
// person or CI runs by name, never a build output.
var executableScripts = map[string]bool{
	".ci/run": true, // CI's entry point (starts PostgreSQL, runs make test)
}

// executableMagic are the first bytes of the binary formats `go build`
// writes (ELF, Mach-O 64-bit both byte orders, PE), caught even without
// the executable bit.
var executableMagic = [][]byte{{0x7f, 'E', 'L', 'F'}, {0xcf, 0xfa, 0xed, 0xfe}, {0xfe, 0xed, 0xfa, 0xcf}, {'M', 'Z'}}

// TestNoBinariesTracked fails on a tracked executable (other than the
// scripts of executableScripts) and on any tracked file over 1 MB: builds
// go to bin/ (ignored), never into the repository.
func TestNoBinariesTracked(t *testing.T) {
	r := loadRepo(t)
	out, err := run(r.root, "git", "ls-files", "-s", "-z")
	if err != nil {
		t.Skipf("not a git work tree, nothing tracked to check: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("unexpected git ls-files line %q", line)
		}
		mode := strings.Fields(meta)[0]
		if mode == "100755" && !executableScripts[path] {
			t.Errorf("%s is tracked as an executable; hint: a build output goes to bin/ (`git rm --cached %s`, and ignore it in .gitignore); a script belongs in executableScripts", path, path)
		}
		info, err := os.Lstat(filepath.Join(r.root, path))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		if info.Size() > maxTrackedSize {
			t.Errorf("%s is tracked and %d bytes (over %d); hint: a large file is a build output or data that belongs outside the repository", path, info.Size(), maxTrackedSize)
		}
		if magic := firstBytes(t, filepath.Join(r.root, path), 4); isExecutableFormat(magic) {
			t.Errorf("%s is tracked and is a compiled executable; hint: `git rm --cached %s` and build into bin/", path, path)
		}
	}
}

// isExecutableFormat reports whether b starts like a compiled executable.
func isExecutableFormat(b []byte) bool {
	for _, m := range executableMagic {
		if bytes.HasPrefix(b, m) {
			return true
		}
	}
	return false
}

// firstBytes reads up to n bytes from the start of a file.
func firstBytes(t *testing.T, path string, n int) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	k, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		t.Fatal(err)
	}
	return b[:k]
}
