package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable"
)

// TestDurableUsageErrorsExit2: a bad flag value or a missing required flag
// is a usage error (exit 2) on every subcommand, as docs/cli.md promises,
// and it changes nothing: the run the commands name is still done with
// its journal, on both stores.
func TestDurableUsageErrorsExit2(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			ctx := context.Background()
			dsn, _, e := cliEngine(t, driver, "usage-test")
			greetDone(t, e, "g-1")
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"fork", "g-1", "--from", "greet", "--set", "greet=notjson"}, `--set greet=notjson: the result is not valid JSON; hint:`},
				{[]string{"fork", "g-1", "--set", "greet=notjson"}, `--set greet=notjson: the result is not valid JSON`},
				{[]string{"fork", "g-1"}, "--from STEP is required; hint: `sky durable show g-1` lists the run's steps"},
				{[]string{"fork", "g-1", "--set", "greet"}, `--set "greet" is not STEP=JSON`},
				{[]string{"fork", "g-1", "--from", "greet", "--set", "other=1"}, `--set names step "other" but the fork is cut at "greet"`},
				{[]string{"rewind", "g-1"}, "--to STEP is required; hint: `sky durable show g-1` lists the run's steps"},
				{[]string{"signals"}, "nothing to list without --orphans; hint: sky durable signals --orphans"},
				{[]string{"signals", "--orphans", "--limit", "-1"}, "--limit -1 is negative; hint: --limit 20 (the default is 50)"},
				{[]string{"worker", "--concurrency", "0", "w.sky"}, "--concurrency 0: a worker advances at least one run at a time"},
				{[]string{"worker", "--concurrency", "-1", "w.sky"}, "--concurrency -1: a worker advances at least one run at a time"},
				{[]string{"worker", "--tick", "0s", "w.sky"}, "--tick 0s: an idle worker polls every --tick, so it must be a positive duration"},
				{[]string{"worker", "--stop-timeout", "-1s", "w.sky"}, "--stop-timeout -1s: runs in flight get this long after SIGTERM"},
				{[]string{"worker", "--tick", "5x", "w.sky"}, `invalid value "5x" for flag -tick: time: unknown unit "x" in duration "5x"; hint: a duration such as 500ms, 1s or 2m (the default is 1s)`},
				{[]string{"ls", "--limit", "ten"}, `invalid value "ten" for flag -limit: `},
				{[]string{"ls", "--limit", "ten"}, "; hint: a whole number (the default is 50)"},
				{[]string{"ui", "--addr", "127.0.0.1:99999"}, `--addr "127.0.0.1:99999": the port "99999" is not a port number (0 to 65535); hint: --addr 127.0.0.1:8080`},
				// A negative payload is read as a flag unless it comes after --.
				{[]string{"signal", "g-1", "adjust", "-3"}, "flag provided but not defined: -3; hint: an argument that starts with a dash goes after --, e.g. -- -3\n"},
			} {
				code, out := runDurableOn(dsn, "", c.args...)
				if code != exitNoBuild || !strings.Contains(out, c.want) {
					t.Errorf("sky durable %s: exit %d, want %d with %q; got:\n%s", strings.Join(c.args, " "), code, exitNoBuild, c.want, out)
				}
			}
			r, journal, err := e.Describe(ctx, "g-1")
			if err != nil || r.Status != durable.StatusDone || len(journal) != 1 {
				t.Fatalf("the refused commands changed g-1: %v, %d entries, %v", r.Status, len(journal), err)
			}
			if runs, err := e.ListRuns(ctx, durable.ListFilter{Limit: 10}); err != nil || len(runs) != 1 {
				t.Fatalf("the refused commands made runs: %d, %v", len(runs), err)
			}
		})
	}
}

// TestDurableNamespaceFromElsewhereIsUsage: a namespace name that is not
// valid is a usage error (exit 2) wherever it comes from, and the message
// names where: SKY_DURABLE_NAMESPACE, or sky.toml's [durable] namespace.
func TestDurableNamespaceFromElsewhereIsUsage(t *testing.T) {
	dsn, _, _ := cliEngine(t, "sqlite", "namespace-test")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sky.toml"), []byte("name = \"app\"\n\n[durable]\nnamespace = \"Billing\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, out := runDurableOn(dsn, "", "ls")
	if want := `sky durable ls: [durable] namespace of sky.toml: InvalidInput: durable: the namespace "Billing" is not a valid name; hint:`; code != exitNoBuild || !strings.Contains(out, want) {
		t.Errorf("a bad namespace in sky.toml: exit %d, want %d with %q; got:\n%s", code, exitNoBuild, want, out)
	}
	t.Setenv(durable.NamespaceEnv, "a b")
	code, out = runDurableOn(dsn, "", "ls")
	if want := `sky durable ls: SKY_DURABLE_NAMESPACE: InvalidInput: durable: the namespace "a b" is not a valid name; hint:`; code != exitNoBuild || !strings.Contains(out, want) {
		t.Errorf("a bad SKY_DURABLE_NAMESPACE: exit %d, want %d with %q; got:\n%s", code, exitNoBuild, want, out)
	}
	t.Setenv(durable.NamespaceEnv, "billing")
	if code, out = runDurableOn(dsn, "", "ls"); code != exitOK {
		t.Errorf("a good SKY_DURABLE_NAMESPACE wins over sky.toml's bad one: exit %d, want 0:\n%s", code, out)
	}
}

// TestDurableDBOfAnotherSchemeIsUsage: a --db URL of a scheme sky has no
// driver for is a usage error (exit 2) naming the scheme, not the password
// the URL may hold, rather than a SQLite file "mysql://..." not found.
func TestDurableDBOfAnotherSchemeIsUsage(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"mysql://ann:s3cret@db/app", `sky durable ls: --db is a "mysql" URL, and sky opens only PostgreSQL and SQLite; hint: --db postgres://user@host:5432/dbname, or the path of a SQLite file` + "\n"},
		{"POSTGRES://db/app", `sky durable ls: --db is a "POSTGRES" URL; hint: write the scheme in lower case, postgres://` + "\n"},
	} {
		code, out := runDurableOn(c.dsn, "", "ls")
		if code != exitNoBuild || out != c.want || strings.Contains(out, "s3cret") {
			t.Errorf("sky durable ls --db %s: exit %d, want %d with\n%s\ngot:\n%s", c.dsn, code, exitNoBuild, c.want, out)
		}
	}
}

// TestDurableUnreadableFileExits1: a file a flag names that cannot be read
// (signal --file, replay --from) is not found, exit 1, as a program that
// does not load; a payload file that is read but not JSON is a bad value,
// exit 2. Neither stores anything.
func TestDurableUnreadableFileExits1(t *testing.T) {
	dsn, d, e := cliEngine(t, "sqlite", "file-test")
	greetDone(t, e, "g-1")
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"signal", "g-1", "go", "--file", missing, "--db", dsn}, exitFailure, "cannot read the payload: open " + missing + ": no such file or directory; hint: --file names a file"},
		{[]string{"signal", "g-1", "go", "--file", bad, "--db", dsn}, exitNoBuild, "the payload in " + bad + " is not valid JSON"},
		{[]string{"replay", "--from", missing, "../../examples/checkout/src/Main.sky"}, exitFailure, "cannot read the runs: open " + missing + ": no such file or directory; hint: write them with `sky durable export > "},
	} {
		var out, errOut strings.Builder
		code := runDurable(context.Background(), c.args, streams{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut})
		if code != c.code || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("sky durable %s: exit %d, want %d with %q; got:\n%s%s", strings.Join(c.args, " "), code, c.code, c.want, out.String(), errOut.String())
		}
	}
	var stored int
	if err := d.QueryRow(context.Background(), "SELECT count(*) FROM _sky_durable_signals").Scan(&stored); err != nil || stored != 0 {
		t.Errorf("the refused signals stored %d (%v)", stored, err)
	}
}
