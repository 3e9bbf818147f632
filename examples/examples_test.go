// Package examples runs the Sky example programs with the real `sky` binary
// and checks the story each one prints.
//
// It may import only the standard library: it drives the programs through the
// `sky` binary it builds, as a user would.
package examples

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestMain removes the sky binary buildSky made.
func TestMain(m *testing.M) {
	status := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(status)
}

// built is cmd/sky built once for the whole test process (a build with a
// warm cache still takes seconds to link).
var built struct {
	once sync.Once
	dir  string // the temporary directory holding it
	bin  string
	err  error
}

// buildSky returns cmd/sky built into a temporary directory, once.
func buildSky(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "sky-examples-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "sky")
		if out, err := exec.Command("go", "build", "-o", built.bin, "../cmd/sky").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build ../cmd/sky: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

// runExample copies an example into a fresh directory (so its SQLite file
// starts empty) and runs `sky run` there; it returns the output and the
// directory, where runIn can run it again.
func runExample(t *testing.T, sky, name string) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(name)); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, ".skydata"))
	return runIn(t, sky, dir), dir
}

// runIn runs `sky run` in dir, on the database an earlier run left there.
func runIn(t *testing.T, sky, dir string) string {
	t.Helper()
	cmd := exec.Command(sky, "run")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL=", "SKY_DB_DRIVER=", "SKY_DB_PATH=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("sky run in %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

func TestExamples(t *testing.T) {
	sky := buildSky(t)
	cases := []struct {
		name  string
		want  []string // lines that must appear, in this order
		again []string // the same, when it runs again on its database
	}{
		{"checkout", []string{
			"  step reserve: reserved 3 units as res-order-1001",
			"  step charge: charged 4200 cents to card-4242 (idempotency key order-1001:charge)",
			"  ** simulated crash: the worker dies right after the charge **",
			"worker: attempt 1 failed (Unavailable: simulated crash after charge); a new worker resumes after the backoff",
			"run order-1001 is waiting for payment.settled; reserve and charge are in the journal",
			"  step finalise: order ORD-order-1001 confirmed (settlement stl-77)",
			`run order-1001: done, order "ORD-order-1001"`,
			"charges: 1",
		}, nil},
		{"onboarding", []string{
			"  mail to ada@example.com: Welcome to Sky!",
			"run onboard-ada is waiting (asleep until its timer is due)",
			"  mail to ada@example.com: Three tips for your first day",
			"run onboard-ada is done",
			"mails sent: 2",
		}, []string{
			"run onboard-ada is done",
			"run onboard-ada is done",
			"mails sent: 2",
		}},
		{"transfer", []string{
			"transfer: starting run t-1 (alice sends 40 to bob)",
			"  step debit: -40 on alice",
			"  step credit: 40 on bob",
			"  step refund: calling the bank",
			`run t-1: done, "refunded 40 to alice (Conflict: account bob is closed)"`,
			"alice: 100",
			"alice's ledger rows: 2",
		}, nil},
		{"approval", []string{
			"manager: approves req-1",
			"  nobody answered req-2: escalating",
			`req-1: done, "approved by grace"`,
			`req-2: done, "escalated after timeout"`,
		}, nil},
		{"shipping", []string{
			"order-7 is at stage shipping, asleep until its children are done",
			"result so far: none",
			"  order-7/berlin: packed at Berlin",
			"  order-7/turin: packed at Turin",
			"order-7: INV-order-7: parcel from Berlin, parcel from Lyon, parcel from Turin",
		}, []string{
			"order-7 is at stage invoicing (done)",
			"result so far: INV-order-7: parcel from Berlin, parcel from Lyon, parcel from Turin",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, dir := runExample(t, sky, c.name)
			wantLines(t, out, c.want)
			if c.name == "checkout" && strings.Count(out, "step charge:") != 1 {
				t.Fatalf("the charge step ran %d times, want 1:\n%s", strings.Count(out, "step charge:"), out)
			}
			if c.again != nil {
				wantLines(t, runIn(t, sky, dir), c.again)
			}
		})
	}
}

// wantLines fails t unless out has each of want as a whole line, in order.
func wantLines(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, line := range want {
		i := strings.Index(rest, line+"\n")
		if i < 0 || (i > 0 && rest[i-1] != '\n') {
			t.Fatalf("output lacks %q (in order); full output:\n%s", line, out)
		}
		rest = rest[i+len(line):]
	}
}

// TestDocExamples runs the first complete program (an ```elm program block,
// see cmd/sky's docs test) of two user docs with the real binary and checks
// the output the doc promises.
func TestDocExamples(t *testing.T) {
	sky := buildSky(t)
	cases := []struct {
		doc  string
		want string
	}{
		{"../docs/durable.md", "hello Ada\ngreet-ada is done\n"},
		{"../docs/language.md", "3, 6\n"},
	}
	for _, c := range cases {
		text, err := os.ReadFile(c.doc)
		if err != nil {
			t.Fatal(err)
		}
		const open = "```elm program\nmodule Main"
		start := strings.Index(string(text), open)
		if start < 0 {
			t.Fatalf("%s has no complete Sky program", c.doc)
		}
		body := string(text[start+len("```elm program\n"):])
		body = body[:strings.Index(body, "```")]
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "src"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "src", "Main.sky"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sky, "run")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "DATABASE_URL=", "SKY_DB_DRIVER=", "SKY_DB_PATH=")
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != c.want {
			t.Errorf("the program in %s printed (err %v):\n%s\nwant:\n%s", c.doc, err, out, c.want)
		}
	}
}

// TestExampleTests runs each example's Std.Durable.Test module with `sky
// test`: virtual-clock days and a crash at every journal boundary.
func TestExampleTests(t *testing.T) {
	sky := buildSky(t)
	cases := []struct{ name, module, summary string }{
		{"checkout", "tests/CheckoutTest.sky", "2 passed, 0 failed"},
		{"onboarding", "tests/OnboardingTest.sky", "2 passed, 0 failed"},
		{"approval", "tests/ApprovalTest.sky", "4 passed, 0 failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(sky, "test", c.module)
			cmd.Dir = c.name
			cmd.Env = append(os.Environ(), "DATABASE_URL=", "SKY_DB_DRIVER=", "SKY_DB_PATH=")
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "\n"+c.summary+"\n") {
				t.Fatalf("sky test %s in %s (err %v), want %q:\n%s", c.module, c.name, err, c.summary, out)
			}
		})
	}
}
