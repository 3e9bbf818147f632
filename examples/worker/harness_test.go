// Package worker_test runs examples/worker as real `sky` processes against
// PostgreSQL: the testscripts of testscripts/app_pg (each with a fresh
// database in DATABASE_URL), three workers sharing 1,000 runs, and (with
// -figures) the latency and throughput figures.
//
// The `sky` binary is built from cmd/sky once per test run; SKY_BIN names a
// prebuilt one instead.
//
// It may import the engine's Go API (to seed and read runs),
// runtime/db/dbtest and testscript; the workers themselves are `sky`
// processes.
package worker_test

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"skydurable/runtime/db/dbtest"
)

var scripts = flag.String("appscripts", "../../testscripts/app_pg/*.txtar", "the testscripts TestAppScripts runs (a glob)")

func TestMain(m *testing.M) { dbtest.Main(m) }

var (
	buildOnce sync.Once
	skyPath   string
	buildErr  error
)

// skyBin returns the path of the sky binary: $SKY_BIN, or cmd/sky built once.
func skyBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("SKY_BIN"); p != "" {
			skyPath = p
			return
		}
		dir, err := os.MkdirTemp("", "sky-bin-")
		if err != nil {
			buildErr = err
			return
		}
		skyPath = filepath.Join(dir, "sky")
		out, err := exec.Command("go", "build", "-o", skyPath, "../../cmd/sky").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building sky: %v", buildErr)
	}
	return skyPath
}

type buildError struct {
	err error
	out string
}

func (b *buildError) Error() string { return b.err.Error() + "\n" + b.out }

// TestAppScripts runs the app testscripts that need PostgreSQL; each gets a
// fresh database in $DATABASE_URL, the sky binary on $PATH and this
// example's directory in $EXAMPLE.
func TestAppScripts(t *testing.T) {
	files, err := filepath.Glob(*scripts)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s (%v)", *scripts, err)
	}
	bin := skyBin(t)
	example, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Files:               files,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("DATABASE_URL", dbtest.URL(t, "app"))
			env.Setenv("SKY_LOG_DEBUG", "")
			env.Setenv("EXAMPLE", example)
			return nil
		},
	})
}

// process is a running `sky run` whose output is collected.
type process struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
	done     chan error
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// startSky starts `sky run args...` in examples/worker with env added.
func startSky(t *testing.T, stdin string, env []string, args ...string) *process {
	t.Helper()
	return startSkyCommand(t, stdin, env, append([]string{"run"}, args...)...)
}

// startSkyCommand starts `sky args...` in examples/worker with env added.
func startSkyCommand(t *testing.T, stdin string, env []string, args ...string) *process {
	t.Helper()
	p := &process{done: make(chan error, 1)}
	p.cmd = exec.Command(skyBin(t), args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout = lockedWriter{&p.mu, &p.out}
	p.cmd.Stderr = lockedWriter{&p.mu, &p.err}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
		}
	})
	return p
}

// output returns what the process printed so far.
func (p *process) output() (string, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String(), p.err.String()
}

// await waits until stdout contains s.
func (p *process) await(t *testing.T, s string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		out, errOut := p.output()
		if strings.Contains(out, s) {
			return
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("sky exited (%v) before printing %q\nstdout:\n%s\nstderr:\n%s", err, s, out, errOut)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("sky did not print %q within %v\nstdout:\n%s\nstderr:\n%s", s, within, out, errOut)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wait waits for the process to exit and fails unless it exited 0.
func (p *process) wait(t *testing.T, within time.Duration) {
	t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			out, errOut := p.output()
			t.Fatalf("sky run: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
	case <-time.After(within):
		_ = p.cmd.Process.Kill()
		t.Fatalf("sky run did not exit within %v", within)
	}
}
