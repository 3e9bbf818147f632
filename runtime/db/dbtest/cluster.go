package dbtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Crash-safe private servers for topology tests: a primary that streams to
// a synchronous replica, restarts, promotion. Unlike StartPrivateServer's,
// their commits are durable across a server crash (synchronous_commit on;
// fsync stays off, since the machine itself does not crash in a test).

// primarySettings makes a primary whose commits wait for the standby named
// walreceiver (the default application name of a replica made by
// pg_basebackup -R) to flush them, so a promoted replica holds every
// acknowledged commit. They are command-line options, so a replica copied
// from the primary's data directory does not inherit them.
const primarySettings = "-c fsync=off -c wal_level=replica -c max_wal_senders=4 -c wal_keep_size=64MB -c synchronous_standby_names=walreceiver"

// standaloneSettings makes a crash-safe server without a standby.
const standaloneSettings = "-c fsync=off"

// replicaSettings are the replica's (hot standby by default).
const replicaSettings = "-c fsync=off"

// StartCrashSafe starts a private crash-safe server without a replica and
// stops it when t ends.
func StartCrashSafe(t testing.TB) *Server {
	t.Helper()
	return startFor(t, standaloneSettings, nil)
}

// StartPrimary starts a private crash-safe server set up to stream to a
// synchronous replica (StartReplica): until the replica is up, commits
// wait. It stops when t ends.
func StartPrimary(t testing.TB) *Server {
	t.Helper()
	return startFor(t, primarySettings, nil)
}

// StartReplica copies primary with pg_basebackup (streaming the WAL) and
// starts the copy as its streaming, synchronous replica on another port. It
// stops when t ends.
func (s *Server) StartReplica(t testing.TB) *Server {
	t.Helper()
	return startFor(t, replicaSettings, func(ctx context.Context, r *Server) error {
		out, err := r.run(ctx, "pg_basebackup", "-D", r.dataDir(), "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
			"-U", "postgres", "-X", "stream", "-R", "-c", "fast", "--no-sync")
		if err != nil {
			return fmt.Errorf("private PostgreSQL: pg_basebackup from port %d: %w\n%s", s.port, err, out)
		}
		return nil
	})
}

func startFor(t testing.TB, settings string, fill func(context.Context, *Server) error) *Server {
	t.Helper()
	s, err := startCluster(context.Background(), settings, fill)
	if err != nil {
		t.Fatalf("dbtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil && !strings.Contains(err.Error(), "Is server running?") {
			t.Errorf("dbtest: %v", err)
		}
	})
	return s
}

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Restart restarts the server with pg_ctl restart -m mode ("fast": clients
// are disconnected, transactions rolled back, a checkpoint written;
// "immediate": every process is killed, as in a crash, and the server
// recovers from the WAL when it starts) on the same port, and waits until it
// answers.
func (s *Server) Restart(ctx context.Context, mode string) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	out, err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-l", filepath.Join(s.base, "server.log"),
		"-m", mode, "-w", "-t", "60", "restart")
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(s.base, "server.log"))
		return fmt.Errorf("private PostgreSQL: pg_ctl restart -m %s: %w\n%s\n%s", mode, err, out, log)
	}
	return s.awaitAnswer(ctx)
}

// Crash stops the server as a crash would (pg_ctl stop -m immediate) and
// leaves it down.
func (s *Server) Crash(ctx context.Context) error {
	out, err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-m", "immediate", "-w", "stop")
	if err != nil {
		return fmt.Errorf("private PostgreSQL: pg_ctl stop -m immediate: %w\n%s", err, out)
	}
	return nil
}

// Promote turns a replica into a primary (pg_ctl promote) and waits until
// it accepts writes.
func (s *Server) Promote(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	out, err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-w", "-t", "60", "promote")
	if err != nil {
		return fmt.Errorf("private PostgreSQL: pg_ctl promote: %w\n%s", err, out)
	}
	return nil
}
