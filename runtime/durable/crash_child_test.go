package durable_test

// The child side of the crash tests (crash_test.go). The parent re-executes
// this test binary with -test.run=^TestCrashChildProcess$ and the crashEnv*
// variables set; the child polls the crash workflow once, and when the
// workflow reaches the pause point it was told about it prints a READY line
// and blocks on stdin until the parent kills it with SIGKILL.

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/task"
)

// Environment of a crash child.
const (
	crashEnvChild    = "SKY_CRASH_CHILD"     // "1" in a child
	crashEnvDriver   = "SKY_CRASH_DRIVER"    // "sqlite" or "postgres"
	crashEnvDSN      = "SKY_CRASH_DSN"       // database the parent set up
	crashEnvPause    = "SKY_CRASH_PAUSE"     // pause point, or "" to run through
	crashEnvOffsetMs = "SKY_CRASH_OFFSET_MS" // the child's clock is the system clock plus this
	crashEnvEffects  = "SKY_CRASH_EFFECTS"   // file the plain step appends its idempotency key to
	crashEnvAttempts = "SKY_CRASH_ATTEMPTS"  // the workflow's MaxAttempts
	// crashEnvHeartbeat, when not empty, is the worker's heartbeat (a Go
	// duration); the worker then has the default Lease.
	crashEnvHeartbeat = "SKY_CRASH_HEARTBEAT"
)

// The pause points of the crash workflow.
const (
	pauseChargeEffect = "charge-effect" // the plain step's external effect happened, not journalled
	pauseRecordEffect = "record-effect" // the transactional step's row is written, not committed
	pauseAfterRecord  = "after-record"  // the transactional step is committed and journalled
	pauseShipEffect   = "ship-effect"   // Transaction's row is written, not committed
)

// crashChildPrefix starts every line a child prints for its parent.
const crashChildPrefix = "CRASHCHILD "

// crashLease is the lease of the crash workflow's workers; each child's clock
// runs 2 leases after the previous one, so it may reclaim a killed run.
const crashLease = time.Minute

// crashWorkflow is the workflow the crash tests kill: step "charge" is a
// plain step whose external effect appends the step's idempotency key to
// effects (a file, outside any transaction); step "record" inserts a row into
// crash_orders through the run's database inside the step's transaction
// (Sky's Durable.conn); step "ship" inserts another with Transaction. The
// output is "<input>:<charge>:<rows recorded>:<rows shipped>". pause is
// called at each pause point with its name.
func crashWorkflow(effects string, maxAttempts int, pause func(point string)) durable.Def[string, string] {
	policy := durable.RetryPolicy{MaxAttempts: maxAttempts}
	return durable.RegisterWith(policy, "crash.order", codec.String, codec.String, func(c *durable.Ctx, item string) task.Task[string] {
		charge := durable.Step(c, codec.String, "charge", task.From(func(ctx context.Context) (string, error) {
			key := c.IdempotencyKey("charge")
			if err := appendLine(effects, key); err != nil {
				return "", err
			}
			pause(pauseChargeEffect)
			return "ch=" + key, nil
		}))
		return task.AndThen(charge, func(ch string) task.Task[string] {
			record := durable.Step(c, codec.Int, "record", task.From(func(ctx context.Context) (int64, error) {
				n, err := c.DB().Exec(ctx, `INSERT INTO crash_orders (run_id, item, charge) VALUES (?, ?, ?)`, c.RunID(), item, ch)
				if err != nil {
					return 0, err
				}
				pause(pauseRecordEffect)
				return n, nil
			}))
			return task.AndThen(record, func(n int64) task.Task[string] {
				pause(pauseAfterRecord)
				ship := durable.Transaction(c, codec.Int, "ship", func(ctx context.Context, tx *db.DB) (int64, error) {
					m, err := tx.Exec(ctx, `INSERT INTO crash_orders (run_id, item, charge) VALUES (?, ?, ?)`, c.RunID(), "shipment", ch)
					if err != nil {
						return 0, err
					}
					pause(pauseShipEffect)
					return m, nil
				})
				return task.Map(ship, func(m int64) string { return fmt.Sprintf("%s:%s:%d:%d", item, ch, n, m) })
			})
		})
	})
}

// appendLine appends line to the file at path (the "external service").
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// TestCrashChildProcess is not a test of its own: it is the child process of
// TestCrashResumeExactlyOnce and TestCrashLoopEndsDead, and does nothing
// unless re-executed by them.
func TestCrashChildProcess(t *testing.T) {
	if os.Getenv(crashEnvChild) != "1" {
		t.Skip("helper process of the crash tests; it runs only when they re-execute the test binary")
	}
	say := func(format string, args ...any) { fmt.Printf(crashChildPrefix+format+"\n", args...) }
	offset, err := strconv.ParseInt(os.Getenv(crashEnvOffsetMs), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", crashEnvOffsetMs, err)
	}
	attempts, err := strconv.Atoi(os.Getenv(crashEnvAttempts))
	if err != nil {
		t.Fatalf("%s: %v", crashEnvAttempts, err)
	}
	ctx := context.Background()
	d, err := db.Open(ctx, os.Getenv(crashEnvDriver), os.Getenv(crashEnvDSN))
	if err != nil {
		t.Fatalf("child: open: %v", err)
	}
	defer d.Close()
	pauseAt := os.Getenv(crashEnvPause)
	pause := func(point string) {
		if point != pauseAt {
			return
		}
		say("READY %s", point)
		// Block until the parent kills this process (or, if the parent
		// died, until stdin reaches EOF).
		_, _ = io.Copy(io.Discard, os.Stdin)
		say("stdin closed while paused at %s", point)
		os.Exit(3)
	}
	clock := func() time.Time { return time.Now().Add(time.Duration(offset) * time.Millisecond) }
	opts := durable.Options{Clock: clock, Lease: crashLease, WorkerID: "child-" + strconv.Itoa(os.Getpid())}
	if hb := os.Getenv(crashEnvHeartbeat); hb != "" {
		if opts.Heartbeat, err = time.ParseDuration(hb); err != nil {
			t.Fatalf("%s: %v", crashEnvHeartbeat, err)
		}
		opts.Lease = durable.DefaultLease
	}
	e := durable.New(d, opts)
	wf := crashWorkflow(os.Getenv(crashEnvEffects), attempts, pause).Erase()
	worked, err := e.Poll(ctx, []durable.Workflow{wf})
	say("POLLED worked=%v err=%v", worked, err)
}
