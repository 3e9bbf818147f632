package durable_test

// Crash tests with real processes: a child process (this test binary,
// re-executed; see crash_child_test.go) runs the crash workflow and is killed
// with SIGKILL right after a step's effect; the next child resumes the run.
// The parent waits for the child's READY line before killing it, never for a
// duration.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// childDeadline bounds how long the parent waits for a child's next line.
const childDeadline = 2 * time.Minute

// crashSetup is one database prepared for crash children.
type crashSetup struct {
	driver, dsn string
	effects     string // the plain step's external effect log
	attempts    int    // the workflow's MaxAttempts
	d           *db.DB
	e           *durable.Engine
	children    int // children started so far; each runs 2 leases later
	// heartbeat, when set, gives the children the default Lease, this
	// heartbeat and the real clock (heartbeat_test.go).
	heartbeat time.Duration
	// childTest is the test a child process runs (default
	// TestCrashChildProcess).
	childTest string
}

// newCrashSetup creates a fresh database of driver with the durable tables,
// the crash_orders user table and one started run "order-7" (input "book").
func newCrashSetup(t testing.TB, driver string, attempts int) *crashSetup {
	t.Helper()
	ctx := context.Background()
	s := &crashSetup{driver: driver, dsn: dbtest.URL(t, driver), attempts: attempts,
		effects: filepath.Join(t.TempDir(), "charges.log")}
	var err error
	if s.d, err = db.Open(ctx, driver, s.dsn); err != nil {
		t.Fatalf("open %s: %v", driver, err)
	}
	t.Cleanup(func() { s.d.Close() })
	s.e = durable.New(s.d, durable.Options{})
	if err := s.e.Setup(ctx); err != nil {
		t.Fatalf("setup: %v", err)
	}
	if _, err := s.d.Exec(ctx, `CREATE TABLE crash_orders (run_id TEXT NOT NULL, item TEXT NOT NULL, charge TEXT NOT NULL)`); err != nil {
		t.Fatalf("create crash_orders: %v", err)
	}
	wf := crashWorkflow(s.effects, attempts, func(string) {})
	if err := durable.Start(ctx, s.e, wf, "order-7", "book"); err != nil {
		t.Fatalf("start: %v", err)
	}
	return s
}

// crashChild is one running child process.
type crashChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string // the child's stdout, closed at EOF
	out   strings.Builder
}

// child starts the next child, pausing at pauseAt ("" = run through).
func (s *crashSetup) child(t testing.TB, pauseAt string) *crashChild {
	t.Helper()
	offset := time.Duration(s.children) * 2 * crashLease
	if s.heartbeat > 0 {
		offset = 0
	}
	s.children++
	test := s.childTest
	if test == "" {
		test = "TestCrashChildProcess"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1", "-test.timeout=5m")
	cmd.Env = append(os.Environ(),
		crashEnvChild+"=1",
		crashEnvDriver+"="+s.driver,
		crashEnvDSN+"="+s.dsn,
		crashEnvPause+"="+pauseAt,
		crashEnvOffsetMs+"="+strconv.FormatInt(offset.Milliseconds(), 10),
		crashEnvEffects+"="+s.effects,
		crashEnvAttempts+"="+strconv.Itoa(s.attempts),
		crashEnvHeartbeat+"="+heartbeatEnv(s.heartbeat),
	)
	c := &crashChild{cmd: cmd, lines: make(chan string, 64)}
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

// await waits for the child's line starting with crashChildPrefix+want and
// returns the rest of it; it fails if the child exits first.
func (c *crashChild) await(t testing.TB, want string) string {
	t.Helper()
	deadline := time.After(childDeadline)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("child exited before printing %q; its output:\n%s", want, c.out.String())
			}
			c.out.WriteString(line + "\n")
			if rest, found := strings.CutPrefix(line, crashChildPrefix+want); found {
				return strings.TrimSpace(rest)
			}
		case <-deadline:
			t.Fatalf("child printed no %q within %s; its output so far:\n%s", want, childDeadline, c.out.String())
		}
	}
}

// kill sends SIGKILL and reaps the child.
func (c *crashChild) kill(t testing.TB) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill child: %v", err)
	}
	err := c.cmd.Wait()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}
}

// finish waits for the child to exit successfully.
func (c *crashChild) finish(t testing.TB) {
	t.Helper()
	for line := range c.lines {
		c.out.WriteString(line + "\n")
	}
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("child failed: %v; its output:\n%s", err, c.out.String())
	}
}

// crashAt runs a child to pauseAt and kills it there.
func (s *crashSetup) crashAt(t testing.TB, pauseAt string) {
	t.Helper()
	c := s.child(t, pauseAt)
	c.await(t, "READY "+pauseAt)
	c.kill(t)
}

// effectKeys reads the idempotency keys the plain step sent out.
func (s *crashSetup) effectKeys(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(s.effects)
	if err != nil {
		t.Fatalf("read the external effect log: %v", err)
	}
	return strings.Fields(string(b))
}

func (s *crashSetup) describe(t testing.TB) (durable.Run, []durable.JournalEntry) {
	t.Helper()
	r, j, err := s.e.Describe(context.Background(), "order-7")
	if err != nil {
		t.Fatalf("describe: %v", err)
	}
	return r, j
}

// TestCrashResumeExactlyOnce kills four children at the dangerous points of
// a run, then a fifth finishes it: each transactional step's row exists once,
// the plain step ran twice with one idempotency key, and the run is done with
// the right output.
func TestCrashResumeExactlyOnce(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			s := newCrashSetup(t, driver, 10)
			// 1: the charge went out, its journal row did not: it re-runs.
			s.crashAt(t, pauseChargeEffect)
			// 2: the charge was never journalled, so it runs again (same key);
			// the record row is written but not committed.
			s.crashAt(t, pauseRecordEffect)
			// 3: the record step committed with its journal row.
			s.crashAt(t, pauseAfterRecord)
			// 4: the Transaction step's row is written but not committed.
			s.crashAt(t, pauseShipEffect)
			r, j := s.describe(t)
			if r.Status != durable.StatusRunning || len(j) != 2 {
				t.Fatalf("after four crashes: status %s, %d journal entries; want running with 2 (charge, record)", r.Status, len(j))
			}
			// 5: runs through.
			last := s.child(t, "")
			if got := last.await(t, "POLLED"); got != "worked=true err=<nil>" {
				t.Fatalf("last child's poll: %s; want worked=true err=<nil>", got)
			}
			last.finish(t)

			r, j = s.describe(t)
			want := `"book:ch=order-7:charge:1:1"`
			if r.Status != durable.StatusDone || r.Output != want {
				t.Fatalf("run: status %s output %s (last error %q); want done with %s", r.Status, r.Output, r.LastError, want)
			}
			if r.Attempts != 5 {
				t.Errorf("attempts %d, want 5 (every crash counts)", r.Attempts)
			}
			var ids []string
			for _, e := range j {
				ids = append(ids, e.StepID)
			}
			if strings.Join(ids, ",") != "charge,record,ship" {
				t.Errorf("journal %v, want [charge record ship]", ids)
			}
			for _, item := range []string{"book", "shipment"} {
				var rows int64
				if err := s.d.QueryRow(context.Background(), `SELECT COUNT(*) FROM crash_orders WHERE run_id = ? AND item = ?`, "order-7", item).Scan(&rows); err != nil {
					t.Fatal(err)
				}
				if rows != 1 {
					t.Errorf("the transactional step's row %q exists %d times, want exactly once", item, rows)
				}
			}
			keys := s.effectKeys(t)
			if len(keys) != 2 || keys[0] != "order-7:charge" || keys[1] != keys[0] {
				t.Errorf("the plain step's external effect saw keys %q; want it twice with the same key order-7:charge", keys)
			}
		})
	}
}

// TestCrashLoopEndsDead kills every child that reaches the charge: with
// MaxAttempts 3, the fourth claim makes the run dead and says why.
func TestCrashLoopEndsDead(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			const maxAttempts = 3
			s := newCrashSetup(t, driver, maxAttempts)
			for i := 0; i < maxAttempts; i++ {
				s.crashAt(t, pauseChargeEffect)
			}
			last := s.child(t, pauseChargeEffect)
			if got := last.await(t, "POLLED"); got != "worked=true err=<nil>" {
				t.Fatalf("last child's poll: %s; want worked=true err=<nil>", got)
			}
			last.finish(t)
			r, j := s.describe(t)
			if r.Status != durable.StatusDead {
				t.Fatalf("status %s (last error %q), want dead", r.Status, r.LastError)
			}
			wantMsg := fmt.Sprintf("attempt %d exceeds the limit of %d attempts", maxAttempts+1, maxAttempts)
			if !strings.Contains(r.LastError, wantMsg) {
				t.Errorf("last error %q does not say %q", r.LastError, wantMsg)
			}
			if len(j) != 0 {
				t.Errorf("journal has %d entries, want none (every attempt crashed before journalling)", len(j))
			}
			if keys := s.effectKeys(t); len(keys) != maxAttempts {
				t.Errorf("the charge effect ran %d times, want %d (once per crashed attempt)", len(keys), maxAttempts)
			}
		})
	}
}
