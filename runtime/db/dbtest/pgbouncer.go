package dbtest

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncer is a private PgBouncer in transaction pooling mode in front of
// one PostgreSQL server, started by StartPgBouncer and stopped when the test
// ends.
type PgBouncer struct {
	port int
}

// EnvPgBouncer names an environment variable that, when set, is the
// pgbouncer binary to run; otherwise it is looked up in $PATH and
// /usr/sbin.
const EnvPgBouncer = "SKY_TEST_PGBOUNCER"

// pgbouncerConfig is the generated configuration: every database of the
// server, pooled per transaction, as the engine meets it in production
// (PgBouncer's own default pool size is 20; a small pool makes the switching
// of server connections between a client's transactions frequent).
const pgbouncerConfig = `[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
default_pool_size = 4
max_client_conn = 400
logfile = %s
pidfile =
`

// StartPgBouncer starts PgBouncer (pool_mode = transaction) on a free port in
// front of ServerURL's server and stops it when t ends. A missing pgbouncer
// binary fails the test, with how to install it.
func StartPgBouncer(t testing.TB) *PgBouncer {
	t.Helper()
	bin, err := findPgBouncer()
	if err != nil {
		t.Fatalf("dbtest: %v; hint: apt-get install pgbouncer (.ci/run does), or set %s", err, EnvPgBouncer)
	}
	server, err := pgx.ParseConfig(ServerURL())
	if err != nil {
		t.Fatalf("dbtest: %s: %v", EnvURL, err)
	}
	dir := t.TempDir()
	var cred *syscall.Credential
	if os.Geteuid() == 0 { // PgBouncer refuses to run as root
		if cred, err = unprivilegedUser(); err != nil {
			t.Fatalf("dbtest: pgbouncer: %v", err)
		}
		if dir, err = os.MkdirTemp("/tmp", "sky-pgbouncer-"); err != nil {
			t.Fatalf("dbtest: pgbouncer: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatalf("dbtest: pgbouncer: %v", err)
		}
	}
	users := filepath.Join(dir, "users.txt")
	if err := os.WriteFile(users, []byte(strconv.Quote(server.User)+` ""`+"\n"), 0o644); err != nil {
		t.Fatalf("dbtest: pgbouncer: %v", err)
	}
	logFile := filepath.Join(dir, "pgbouncer.log")
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("dbtest: pgbouncer: %v", err)
		}
		ini := filepath.Join(dir, "pgbouncer.ini")
		conf := fmt.Sprintf(pgbouncerConfig, server.Host, server.Port, port, users, logFile)
		if err := os.WriteFile(ini, []byte(conf), 0o644); err != nil {
			t.Fatalf("dbtest: pgbouncer: %v", err)
		}
		cmd := exec.Command(bin, ini)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("dbtest: start %s: %v", bin, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		b := &PgBouncer{port: port}
		err = b.awaitAnswer(server.User, server.Database, exited)
		if err == nil {
			t.Cleanup(func() {
				_ = cmd.Process.Signal(syscall.SIGTERM)
				<-exited
			})
			return b
		}
		_ = cmd.Process.Kill()
		<-exited
		if attempt == 4 {
			log, _ := os.ReadFile(logFile)
			t.Fatalf("dbtest: pgbouncer on port %d: %v\n%s\n%s", port, err, out.String(), log)
		}
	}
}

// awaitAnswer polls until a query through the pooler reaches the server, or
// the process exits, or startTimeout passes.
func (b *PgBouncer) awaitAnswer(user, database string, exited <-chan error) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	u := fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", url.PathEscape(user), b.hostPort(), url.PathEscape(database))
	for {
		attempt, stop := context.WithTimeout(ctx, 2*time.Second)
		err := Answers(attempt, u)
		stop()
		if err == nil {
			return nil
		}
		select {
		case e := <-exited:
			return fmt.Errorf("pgbouncer exited: %v (last connection error: %v)", e, err)
		case <-ctx.Done():
			return fmt.Errorf("pgbouncer never answered: %w", err)
		case <-time.After(50 * time.Millisecond): // poll interval, not a synchronisation sleep
		}
	}
}

func (b *PgBouncer) hostPort() string { return "127.0.0.1:" + strconv.Itoa(b.port) }

// Route returns the PostgreSQL URL direct (a URL from URL) with its host and
// port replaced by the pooler's: the same database, through PgBouncer.
func (b *PgBouncer) Route(t testing.TB, direct string) string {
	t.Helper()
	u, err := url.Parse(direct)
	if err != nil || !strings.HasPrefix(u.Scheme, "postgres") {
		t.Fatalf("dbtest: PgBouncer.Route needs a postgres:// URL, got %q (%v)", direct, err)
	}
	u.Host = b.hostPort()
	return u.String()
}

// findPgBouncer locates the pgbouncer binary.
func findPgBouncer() (string, error) {
	if p := os.Getenv(EnvPgBouncer); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable", EnvPgBouncer, p)
	}
	if p, err := exec.LookPath("pgbouncer"); err == nil {
		return p, nil
	}
	if isExecutable("/usr/sbin/pgbouncer") {
		return "/usr/sbin/pgbouncer", nil
	}
	return "", fmt.Errorf("no pgbouncer binary in $PATH or /usr/sbin")
}
