// Command testrun is `make test`'s runner: it starts a private PostgreSQL
// cluster with durability off (fsync, synchronous_commit and
// full_page_writes off: no test here measures durability on the shared
// server; the crash tests start their own crash-safe clusters), runs `go
// test -json` with its arguments against it, prints what `go test` prints
// (each package's result, and the whole output of every failing test),
// and ends with how many tests ran, how many of them on each store, and
// which PostgreSQL they used. It exits with go test's status.
//
//	go run ./internal/testrun -count=1 -timeout 40m ./...
//
// With SKY_TEST_DATABASE_URL set it uses that server instead; without the
// PostgreSQL binaries it says so and leaves the choice to runtime/db/dbtest
// (the server at its default address, or a loud failure).
//
// It may import runtime/db/dbtest, runtime/db and the standard library.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run starts the cluster, runs go test with args and reports; it returns
// the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	where, stop := database(stderr)
	defer stop()

	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "testrun: go test: %v\n", err)
		return 1
	}
	// Ctrl-C reaches go test (same process group); wait for it to end so
	// the cluster is stopped after the tests, not under them.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)

	r := newReport(stdout)
	if err := r.read(out); err != nil {
		fmt.Fprintf(stderr, "testrun: reading go test's output: %v\n", err)
	}
	status := 0
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			fmt.Fprintf(stderr, "testrun: go test: %v\n", err)
			return 1
		}
		status = exit.ExitCode()
	}
	r.summary(where)
	return status
}

// database makes SKY_TEST_DATABASE_URL name the server the tests use and
// says which one it is; stop stops a cluster it started.
func database(stderr io.Writer) (where string, stop func()) {
	stop = func() {}
	if u := strings.TrimSpace(os.Getenv(dbtest.EnvURL)); u != "" {
		return describe(u, "the server "+dbtest.EnvURL+" names"), stop
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := dbtest.StartPrivateServer(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "testrun: no private PostgreSQL cluster (%v); the tests use %s\n", err, dbtest.DefaultURL)
		return describe(dbtest.ServerURL(), "the server at the default address"), stop
	}
	os.Setenv(dbtest.EnvURL, srv.URL())
	return describe(srv.URL(), fmt.Sprintf("a private cluster, durability off, port %d", srv.Port())), func() {
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(stderr, "testrun: stopping the private PostgreSQL cluster: %v\n", err)
		}
	}
}

// describe names the server at url by its version and how it was chosen.
func describe(url, how string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := db.Open(ctx, "postgres", url)
	if err != nil {
		return how + " (not answering: " + err.Error() + ")"
	}
	defer d.Close()
	var version string
	if err := d.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&version); err != nil {
		return how
	}
	return fmt.Sprintf("PostgreSQL %s, %s", version, how)
}

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// report follows go test's events: it prints what plain go test would and
// counts the tests.
type report struct {
	w io.Writer
	// output holds each running test's lines ("pkg\x00Test") until it ends.
	output map[string][]string
	// failedIn counts the failed tests of each package.
	failedIn map[string]int
	// parents marks the tests that had subtests (they are not counted).
	parents map[string]bool
	// ended is each ended test's action ("pass", "fail", "skip").
	ended map[string]string
}

func newReport(w io.Writer) *report {
	return &report{w: w, output: map[string][]string{}, failedIn: map[string]int{},
		parents: map[string]bool{}, ended: map[string]string{}}
}

// read consumes go test's stream until it ends.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil || ev.Action == "" {
			fmt.Fprintln(r.w, sc.Text()) // not an event: go test's own words
			continue
		}
		r.take(ev)
	}
	return sc.Err()
}

// take handles one event.
func (r *report) take(ev event) {
	key := ev.Package + "\x00" + ev.Test
	switch {
	case ev.Action == "build-output":
		fmt.Fprint(r.w, ev.Output)
	case ev.Test == "" && ev.Action == "output":
		if ev.Output != "PASS\n" {
			fmt.Fprint(r.w, ev.Output)
		}
	case ev.Test == "" && ev.Action == "fail" && r.failedIn[ev.Package] == 0:
		// The package failed outside any test's verdict (a panic, a
		// timeout, TestMain): show everything its tests printed.
		for k, lines := range r.output {
			if strings.HasPrefix(k, ev.Package+"\x00") {
				fmt.Fprint(r.w, strings.Join(lines, ""))
			}
		}
	case ev.Test == "":
	case ev.Action == "run":
		if i := strings.LastIndexByte(ev.Test, '/'); i > 0 {
			r.parents[ev.Package+"\x00"+ev.Test[:i]] = true
		}
	case ev.Action == "output":
		r.output[key] = append(r.output[key], ev.Output)
	case ev.Action == "pass" || ev.Action == "fail" || ev.Action == "skip":
		r.ended[key] = ev.Action
		if ev.Action == "fail" {
			r.failedIn[ev.Package]++
			fmt.Fprint(r.w, strings.Join(r.output[key], ""))
		}
		delete(r.output, key)
	}
}

// storeOf says which store a test ran on: a test of a store's package, or
// one under a subtest named after a driver (dbtest.ForEachDriver), else "".
func storeOf(key string) string {
	pkg, test, _ := strings.Cut(key, "\x00")
	for _, driver := range dbtest.Drivers() {
		if strings.HasSuffix(pkg, "/store/"+driver) {
			return driver
		}
		for _, part := range strings.Split(test, "/") {
			if part == driver || strings.HasPrefix(part, driver+"_") {
				return driver
			}
		}
	}
	return ""
}

// summary prints the counts: tests that ran (subtests counted, a test with
// subtests not), by verdict and by store, and the server used.
func (r *report) summary(where string) {
	verdicts := map[string]int{}
	stores := map[string]int{}
	total := 0
	for key, action := range r.ended {
		if r.parents[key] {
			continue
		}
		total++
		verdicts[action]++
		if action != "skip" {
			stores[storeOf(key)]++
		}
	}
	fmt.Fprintf(r.w, "\ntests: %d (%d passed, %d failed, %d skipped); on SQLite %d, on PostgreSQL %d, on no store %d\n",
		total, verdicts["pass"], verdicts["fail"], verdicts["skip"], stores["sqlite"], stores["postgres"], stores[""])
	fmt.Fprintf(r.w, "PostgreSQL: %s\n", where)
}
