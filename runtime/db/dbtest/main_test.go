package dbtest_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestMainFailsLoudlyWithoutPostgres re-runs this test binary with no server
// answering and no binaries to start one: it must exit 1 and say how to
// start PostgreSQL, never skip.
func TestMainFailsLoudlyWithoutPostgres(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "postgres://postgres@127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "/test?connect_timeout=5"
	l.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestURLGivesDistinctDatabases$", "-test.count=1")
	cmd.Env = append(os.Environ(), dbtest.EnvURL+"="+dead, dbtest.EnvBin+"="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child exited with %v; want exit status 1\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"does not answer", "127.0.0.1", "no initdb and pg_ctl", "hint: start PostgreSQL"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not mention %q:\n%s", want, stderr.String())
		}
	}
}
