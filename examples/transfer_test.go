package examples

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestTransferSurvivesAKillDuringTheRefund runs examples/transfer, kills the
// process with SIGKILL while its compensating refund step waits on the
// bank, and runs it again: the second process replays the debit and the
// credit's journalled failure (neither runs again), takes the run over once
// the dead worker's heartbeat lease ends, refunds once and finishes.
func TestTransferSurvivesAKillDuringTheRefund(t *testing.T) {
	sky := buildSky(t)
	dir := filepath.Join(t.TempDir(), "transfer")
	if err := os.CopyFS(dir, os.DirFS("transfer")); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, ".skydata"))
	env := append(os.Environ(), "DATABASE_URL=", "SKY_DB_DRIVER=", "SKY_DB_PATH=", "SKY_DURABLE_HEARTBEAT=1s")

	first := exec.Command(sky, "run")
	first.Dir, first.Env = dir, env
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	first.Stderr = first.Stdout
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if first.ProcessState == nil {
			_ = first.Process.Kill()
			_ = first.Wait()
		}
	})
	var seen strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		seen.WriteString(sc.Text() + "\n")
		if sc.Text() == "  step refund: calling the bank" {
			break
		}
	}
	if !strings.Contains(seen.String(), "step refund") {
		t.Fatalf("the first run never reached the refund:\n%s", seen.String())
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if ws, ok := first.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the first run was not killed: %v\n%s", first.ProcessState, seen.String())
	}
	for _, line := range []string{"  step debit: -40 on alice", "  step credit: 40 on bob"} {
		if !strings.Contains(seen.String(), line+"\n") {
			t.Fatalf("the first run lacks %q:\n%s", line, seen.String())
		}
	}

	second := exec.Command(sky, "run")
	second.Dir, second.Env = dir, env
	out, err := second.CombinedOutput()
	if err != nil {
		t.Fatalf("second sky run: %v\n%s", err, out)
	}
	text := string(out)
	for _, line := range []string{
		"  step refund: calling the bank",
		`run t-1: done, "refunded 40 to alice (Conflict: account bob is closed)"`,
		"alice: 100",
		"alice's ledger rows: 2",
	} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("the resumed run lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "step debit") || strings.Contains(text, "step credit") {
		t.Errorf("the resumed run ran the debit or the credit again:\n%s", text)
	}

	show := exec.Command(sky, "durable", "show", "t-1")
	show.Dir, show.Env = dir, env
	out, err = show.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "error  credit") || !strings.Contains(string(out), "step  refund") {
		t.Errorf("sky durable show t-1 (%v) does not list the credit's error entry and the refund:\n%s", err, out)
	}
}
