package dbtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Server is a private, throwaway PostgreSQL cluster started from the
// installed binaries: trust auth, listening on 127.0.0.1 on a free port, data
// in a temporary directory removed by Stop.
type Server struct {
	bin  string // directory holding initdb, pg_ctl
	base string // temporary directory: data/, log, socket
	port int
	cred *syscall.Credential // non-root user the server runs as, when we are root
}

// startTimeout bounds initdb plus server start-up.
const startTimeout = 2 * time.Minute

// StartPrivateServer initialises and starts a private cluster and waits until
// it accepts connections. As root it runs the server as the `postgres` (else
// `nobody`) user, since PostgreSQL refuses to run as root. It trades crash
// safety for speed (fsync, synchronous_commit and full_page_writes off);
// StartPrimary gives a crash-safe one.
func StartPrivateServer(ctx context.Context) (*Server, error) {
	return startCluster(ctx, "-c fsync=off -c synchronous_commit=off -c full_page_writes=off", nil)
}

// StartServer initialises and starts a private cluster with the server
// options settings ("" keeps PostgreSQL's defaults: fsync and
// synchronous_commit on) and waits until it accepts connections. Stop stops
// it and deletes its files. The peer benchmark (bench/peers) measures on one
// with the default durability.
func StartServer(ctx context.Context, settings string) (*Server, error) {
	return startCluster(ctx, settings, nil)
}

// startCluster makes a cluster (initdb, or fill when not nil: it gets the
// new server, its data directory still empty) and starts it with the
// server options settings, on a free port.
func startCluster(ctx context.Context, settings string, fill func(ctx context.Context, s *Server) error) (*Server, error) {
	s, err := newServer()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	if fill != nil {
		err = fill(ctx, s)
	} else if out, initErr := s.run(ctx, "initdb", "-D", s.dataDir(), "-A", "trust", "-U", "postgres",
		"-E", "UTF8", "--locale=C", "--no-sync"); initErr != nil {
		err = fmt.Errorf("private PostgreSQL: initdb failed: %w\n%s", initErr, out)
	}
	if err != nil {
		os.RemoveAll(s.base)
		return nil, err
	}
	if err := s.start(ctx, settings); err != nil {
		os.RemoveAll(s.base)
		return nil, err
	}
	return s, nil
}

// newServer finds the binaries and makes the server's temporary directory.
func newServer() (*Server, error) {
	bin, err := findPostgresBin()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin}
	parent := os.TempDir()
	if os.Geteuid() == 0 {
		if s.cred, err = unprivilegedUser(); err != nil {
			return nil, err
		}
		parent = "/tmp" // must be traversable by the unprivileged user
	}
	if s.base, err = os.MkdirTemp(parent, "sky-pg-"); err != nil {
		return nil, fmt.Errorf("private PostgreSQL: temp dir: %w", err)
	}
	if s.cred != nil {
		if err := os.Chown(s.base, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(s.base)
			return nil, fmt.Errorf("private PostgreSQL: chown %s: %w", s.base, err)
		}
	}
	return s, nil
}

// start starts the server with settings on a free port and waits until it
// answers.
func (s *Server) start(ctx context.Context, settings string) error {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			lastErr = err
			continue
		}
		s.port = port
		opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c max_connections=200 %s", s.port, s.base, settings)
		out, err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-l", filepath.Join(s.base, "server.log"),
			"-w", "-t", "60", "-o", opts, "start")
		if err != nil {
			log, _ := os.ReadFile(filepath.Join(s.base, "server.log"))
			lastErr = fmt.Errorf("pg_ctl start on port %d failed: %w\n%s\n%s", s.port, err, out, log)
			continue
		}
		if err := s.awaitAnswer(ctx); err != nil {
			s.Stop()
			return err
		}
		return nil
	}
	return fmt.Errorf("private PostgreSQL: %w", lastErr)
}

// URL is the server's connection URL (database "postgres", user "postgres").
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Dir is the temporary directory holding the cluster; Stop removes it.
func (s *Server) Dir() string { return s.base }

// Stop shuts the server down (fast mode, waiting) and deletes its files.
func (s *Server) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-m", "fast", "-w", "stop")
	rmErr := os.RemoveAll(s.base)
	if err != nil {
		return fmt.Errorf("private PostgreSQL: pg_ctl stop: %w\n%s", err, out)
	}
	return rmErr
}

func (s *Server) dataDir() string { return filepath.Join(s.base, "data") }

// PID is the process id of the server's postmaster (the first line of its
// postmaster.pid): the parent of every server process, whose CPU time a
// benchmark can read from /proc.
func (s *Server) PID() (int, error) {
	b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid"))
	if err != nil {
		return 0, fmt.Errorf("private PostgreSQL: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("private PostgreSQL: postmaster.pid starts with %q, not a process id", line)
	}
	return pid, nil
}

// awaitAnswer polls until the server accepts a connection or ctx ends.
func (s *Server) awaitAnswer(ctx context.Context) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := Answers(attempt, s.URL())
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("private PostgreSQL on port %d never accepted connections: %w", s.port, err)
		case <-time.After(50 * time.Millisecond): // poll interval, not a synchronisation sleep
		}
	}
}

// run runs one PostgreSQL binary as the server's user, returning its output.
func (s *Server) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, name), args...)
	cmd.Dir = s.base
	cmd.Env = []string{"PATH=" + s.bin + ":/usr/bin:/bin", "LC_ALL=C", "LANG=C", "HOME=" + s.base}
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	// pg_ctl start leaves the server running with our stdout: do not wait
	// for the pipe to close once pg_ctl itself has exited.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil
	}
	return out.Bytes(), err
}

// EnvBin names an environment variable that, when set, is the only
// directory searched for initdb and pg_ctl.
const EnvBin = "SKY_TEST_POSTGRES_BIN"

// findPostgresBin locates initdb and pg_ctl: $SKY_TEST_POSTGRES_BIN if set,
// else the newest /usr/lib/postgresql/*/bin, else $PATH.
func findPostgresBin() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
		return "", fmt.Errorf("no initdb and pg_ctl in %s=%s", EnvBin, d)
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExecutable(filepath.Join(d, "pg_ctl")) {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or $PATH")
}

func versionOf(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// unprivilegedUser finds an existing non-root user to run the server as.
func unprivilegedUser() (*syscall.Credential, error) {
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and found no `postgres` or `nobody` user to run PostgreSQL as")
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
