package durable

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/keyring"
	"skydurable/runtime/task"
)

// secret is the marker every payload of the encryption tests carries; it
// must appear nowhere in the database.
const secret = "CARD-4111-MARKER"

// testKey is a keyring entry id:BASE64 whose 32 key bytes are all fill.
func testKey(id string, fill byte) string {
	return id + ":" + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{fill}, keyring.KeySize))
}

// vaultChild echoes its input with the marker.
var vaultChild = Register("vault-child", str, str, func(c *Ctx, in string) task.Task[string] {
	return task.Succeed(in + "/" + secret + "-child-output")
})

// vault puts the marker in every kind of payload: its input (from the
// caller), a step result, an event value, a child's input and output, a
// signal payload and its output.
var vault = Register("vault", str, str, func(c *Ctx, in string) task.Task[string] {
	return task.AndThen(Step(c, str, "charge", task.Succeed(secret+"-step")), func(charged string) task.Task[string] {
		return task.AndThen(SetEvent(c, str, "token", secret+"-event"), func(struct{}) task.Task[string] {
			return task.AndThen(StartChild(c, vaultChild, "receipt", secret+"-child-input"), func(struct{}) task.Task[string] {
				return task.AndThen(AwaitChild(c, vaultChild, "receipt"), func(receipt string) task.Task[string] {
					return task.Map(AwaitSignal(c, str, "approve"), func(ok string) string {
						return strings.Join([]string{in, charged, receipt, ok, secret + "-output"}, "|")
					})
				})
			})
		})
	})
})

// runVault runs a vault run "v1" to done with e, and a scheduled input.
func runVault(t *testing.T, h *harness, e *Engine) {
	t.Helper()
	defs := []Workflow{vault.Erase(), vaultChild.Erase()}
	if err := Start(h.ctx, e, vault, "v1", secret+"-input"); err != nil {
		t.Fatal(err)
	}
	if err := ScheduleRuns(h.ctx, e, vault, "nightly", "@daily", secret+"-schedule-input", ScheduleOptions{}); err != nil {
		t.Fatal(err)
	}
	h.drain(e, defs...)
	if err := e.Signal(h.ctx, "v1", "approve", `"`+secret+`-signal"`); err != nil {
		t.Fatal(err)
	}
	h.drain(e, defs...)
	r, err := e.ReadRun(h.ctx, "v1")
	if err != nil || r.Status != StatusDone {
		t.Fatalf("run v1: %+v, %v; want done", r, err)
	}
}

// databaseText is every row of every durable table as text (PostgreSQL) or
// the database's files (SQLite), where the marker must not be.
func databaseText(t *testing.T, ctx context.Context, d *db.DB, sqlitePath string) string {
	t.Helper()
	if d.Dialect() != db.Postgres {
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		var all []byte
		files, _ := filepath.Glob(sqlitePath + "*")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		if len(files) == 0 || len(all) == 0 {
			t.Fatalf("no database file at %s", sqlitePath)
		}
		return string(all)
	}
	tables, err := d.QueryMaps(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE '\_sky\_durable\_%'`)
	if err != nil || len(tables) < 5 {
		t.Fatalf("tables: %v, %v", tables, err)
	}
	var b strings.Builder
	for _, tb := range tables {
		rows, err := d.QueryMaps(ctx, `SELECT t::text AS row FROM `+tb["tablename"]+` t`)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			b.WriteString(r["row"] + "\n")
		}
	}
	return b.String()
}

// openFor opens a fresh database of driver, giving its file path on SQLite.
func openFor(t *testing.T, driver string) (*db.DB, string) {
	t.Helper()
	if driver != "sqlite" {
		return dbtest.Open(t, driver), ""
	}
	path := dbtest.URL(t, "sqlite")
	d, err := db.Open(context.Background(), "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d, path
}

func TestEncryptionLeavesNoPlainPayloadInTheDatabase(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			d, path := openFor(t, driver)
			h := newHarness(t, d)
			e := h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) })
			runVault(t, h, e)

			// With the key, every payload reads back as it was written.
			r, j, err := e.Describe(h.ctx, "v1")
			if err != nil {
				t.Fatal(err)
			}
			wantContains(t, r.Input, secret+"-input")
			wantContains(t, r.Output, secret+"-input", secret+"-step", secret+"-child-input", secret+"-child-output", secret+"-signal", secret+"-output")
			if len(j) == 0 || !strings.Contains(j[0].Result, secret+"-step") {
				t.Errorf("journal read with the key: %+v", j)
			}
			got, err := GetEvent(h.ctx, e, "v1", "token", str)
			if err != nil || got == nil || *got != secret+"-event" {
				t.Errorf("event read with the key: %v, %v", got, err)
			}
			sigs, err := e.Signals(h.ctx, "v1")
			if err != nil || len(sigs) != 1 || !strings.Contains(sigs[0].Payload, secret) {
				t.Errorf("signals read with the key: %+v, %v", sigs, err)
			}
			scheds, err := e.Schedules(h.ctx)
			if err != nil || len(scheds) != 1 || !strings.Contains(scheds[0].Input, secret) {
				t.Errorf("schedules read with the key: %+v, %v", scheds, err)
			}

			// Without it, the same reads show which key they lack.
			plain := h.engine("B")
			r, j, err = plain.Describe(h.ctx, "v1")
			if err != nil {
				t.Fatal(err)
			}
			for what, text := range map[string]string{"input": r.Input, "output": r.Output, "journal": j[0].Result} {
				if id, sealed := keyring.KeyOf(text); !sealed || id != "k1" {
					t.Errorf("%s read without the key: %q, want a value sealed with k1", what, text)
				}
			}
			_, err = GetEvent(h.ctx, plain, "v1", "token", str)
			wantErrContains(t, err, task.Unavailable, `"v1"`, `event "token"`, `"k1"`, "SKY_DURABLE_KEYS")
			_, err = Result(h.ctx, plain, vault, "v1")
			wantErrContains(t, err, task.Unavailable, `"v1"`, "output", `"k1"`, "SKY_DURABLE_KEYS")

			text := databaseText(t, h.ctx, d, path)
			if !strings.Contains(text, "skyenc1:k1:") {
				t.Fatalf("the database holds no sealed value; the test reads the wrong place")
			}
			if i := strings.Index(text, "MARKER"); i >= 0 {
				t.Fatalf("the marker is in the database in plain text: …%s…", text[max(0, i-80):min(len(text), i+40)])
			}
		})
	}
}

func TestEncryptionWrongKeyFailsClearlyAndLosesNothing(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		sealer := h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) })
		defs := []Workflow{vault.Erase(), vaultChild.Erase()}
		if err := Start(h.ctx, sealer, vault, "v1", secret+"-input"); err != nil {
			t.Fatal(err)
		}
		// A worker with another key under the same id, and one with none:
		// each attempt fails with a clear error; the run stays failed, never
		// dead, however many times they try.
		for name, keys := range map[string]string{"another k1": testKey("k1", 2), "only k2": testKey("k2", 2), "none": ""} {
			wrong := h.engine("W", func(o *Options) { o.Keys = keys })
			for range 8 {
				h.clock.Advance(time.Hour)
				h.poll(wrong, defs...)
			}
			r, err := sealer.ReadRun(h.ctx, "v1")
			if err != nil {
				t.Fatal(err)
			}
			if r.Status != StatusFailed || !strings.Contains(r.LastError, `key "k1"`) || !strings.Contains(r.LastError, "never made dead") {
				t.Fatalf("worker keys %s: run %s, last error %q; want failed naming key k1", name, r.Status, r.LastError)
			}
			if r.Input != `"`+secret+`-input"` {
				t.Fatalf("the input was lost: %q", r.Input)
			}
		}
		// The worker with the key finishes it.
		for range 4 {
			h.clock.Advance(time.Hour)
			h.drain(sealer, defs...)
		}
		if err := sealer.Signal(h.ctx, "v1", "approve", `"yes"`); err != nil {
			t.Fatal(err)
		}
		h.drain(sealer, defs...)
		r, err := sealer.ReadRun(h.ctx, "v1")
		if err != nil || r.Status != StatusDone || !strings.Contains(r.Output, secret+"-input") {
			t.Fatalf("after the right key: %+v, %v", r, err)
		}
	})
}

func TestEncryptionKeysAreValidated(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	for _, tc := range []struct{ keys, want string }{
		{"k1", "entry 1 is not id:BASE64"},
		{"k1:" + base64.StdEncoding.EncodeToString([]byte("short")), `entry 1 (key "k1"): the key is 5 bytes`},
		{testKey("k1", 1) + "," + testKey("k1", 2), `entry 2: key id "k1" appears twice`},
		{testKey("k 1", 1), `has ' '`},
		{"k1:!!!notbase64", `entry 1 (key "k1"): the key is not base64`},
	} {
		e := New(d, Options{Keys: tc.keys})
		err := e.Setup(context.Background())
		wantErrContains(t, err, task.InvalidInput, tc.want)
		if err != nil && strings.Contains(err.Error(), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))) {
			t.Errorf("the error shows key material: %v", err)
		}
		if _, err := e.Poll(context.Background(), []Workflow{vault.Erase()}); err == nil {
			t.Errorf("keys %q: Poll ran with a keyring that does not parse", tc.keys)
		}
	}
}

func TestEncryptionOldKeysStillOpenAfterRotation(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		old := h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) })
		defs := []Workflow{vault.Erase(), vaultChild.Erase()}
		if err := Start(h.ctx, old, vault, "v1", secret+"-input"); err != nil {
			t.Fatal(err)
		}
		h.drain(old, defs...)
		// Rotated: k2 seals from now on, k1 still opens.
		rotated := h.engine("B", func(o *Options) { o.Keys = testKey("k2", 2) + "," + testKey("k1", 1) })
		if err := rotated.Signal(h.ctx, "v1", "approve", `"yes"`); err != nil {
			t.Fatal(err)
		}
		h.drain(rotated, defs...)
		r, j, err := h.e.Describe(h.ctx, "v1") // h.e has no key: it sees which key sealed what
		if err != nil {
			t.Fatal(err)
		}
		if id, _ := keyring.KeyOf(r.Input); id != "k1" {
			t.Errorf("input sealed with %q, want k1", id)
		}
		if id, _ := keyring.KeyOf(r.Output); id != "k2" {
			t.Errorf("output sealed with %q, want k2", id)
		}
		if id, _ := keyring.KeyOf(j[0].Result); id != "k1" {
			t.Errorf("first journal entry sealed with %q, want k1", id)
		}
		out, err := Result(h.ctx, rotated, vault, "v1")
		if err != nil || out == nil || !strings.Contains(*out, secret+"-input") {
			t.Fatalf("result with the rotated keyring: %v, %v", out, err)
		}
	})
}

// sealedWith lists, by key id ("" for plain), the payloads of runs ids as
// stored.
func sealedWith(t *testing.T, h *harness, e *Engine, ids ...string) map[string]int {
	t.Helper()
	payloads, err := e.sealed.Store.Payloads(h.ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range payloads {
		id, _ := keyring.KeyOf(p.Text)
		out[id]++
	}
	return out
}

func TestEncryptionRekeyMovesEverythingToTheNewKey(t *testing.T) {
	for _, driver := range dbtest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			d, path := openFor(t, driver)
			h := newHarness(t, d)
			// v0 ran before encryption was on (plain), v1 under k1; then k2
			// is added in front.
			defs := []Workflow{vault.Erase(), vaultChild.Erase()}
			if err := Start(h.ctx, h.e, vault, "v0", secret+"-plain-input"); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, defs...)
			if err := h.e.Signal(h.ctx, "v0", "approve", `"`+secret+`-plain"`); err != nil {
				t.Fatal(err)
			}
			h.drain(h.e, defs...)
			runVault(t, h, h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) }))
			rotated := h.engine("R", func(o *Options) { o.Keys = testKey("k2", 2) + "," + testKey("k1", 1) })
			ids := []string{"v0", "v0/receipt", "v1", "v1/receipt"}
			before := sealedWith(t, h, rotated, ids...)
			if before[""] == 0 || before["k1"] == 0 || before["k2"] != 0 {
				t.Fatalf("before rekey: %v; want plain and k1 payloads", before)
			}

			dry, err := rotated.Rekey(h.ctx, RekeyOptions{DryRun: true})
			if err != nil || dry.Resealed == 0 || dry.Unreadable != 0 {
				t.Fatalf("dry run: %+v, %v", dry, err)
			}
			if after := sealedWith(t, h, rotated, ids...); !cmpCounts(after, before) {
				t.Fatalf("a dry run wrote: %v, was %v", after, before)
			}

			var batches []RekeyProgress
			p, err := rotated.Rekey(h.ctx, RekeyOptions{BatchSize: 2, OnBatch: func(p RekeyProgress) { batches = append(batches, p) }})
			if err != nil || p.Resealed != dry.Resealed || p.Unreadable != 0 {
				t.Fatalf("rekey: %+v, %v; want %d resealed as the dry run counted", p, err, dry.Resealed)
			}
			if len(batches) < 2 || batches[0].Runs != 2 || p.Last != "v1/receipt" {
				t.Errorf("batches %+v, last %q; want batches of 2 runs ending at v1/receipt", batches, p.Last)
			}
			total := 0
			for _, n := range before {
				total += n
			}
			if after := sealedWith(t, h, rotated, ids...); after["k2"] != total {
				t.Fatalf("after rekey: %v; want all %d payloads with k2", after, total)
			}
			again, err := rotated.Rekey(h.ctx, RekeyOptions{})
			if err != nil || again.Resealed != 0 {
				t.Fatalf("a second rekey: %+v, %v; want nothing left to do", again, err)
			}

			// k1 can go: a keyring of k2 alone reads everything.
			only := h.engine("K", func(o *Options) { o.Keys = testKey("k2", 2) })
			for _, id := range []string{"v0", "v1"} {
				out, err := Result(h.ctx, only, vault, id)
				if err != nil || out == nil || !strings.Contains(*out, secret) {
					t.Fatalf("result of %s with k2 alone: %v, %v", id, out, err)
				}
			}
			scheds, err := only.Schedules(h.ctx)
			if err != nil || len(scheds) != 1 || !strings.Contains(scheds[0].Input, secret) {
				t.Fatalf("schedule with k2 alone: %+v, %v", scheds, err)
			}
			if driver == "sqlite" {
				// SQLite keeps a rewritten row's old bytes in free pages
				// until VACUUM (docs/durable.md says so).
				for _, sql := range []string{"PRAGMA wal_checkpoint(TRUNCATE)", "VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)"} {
					if _, err := d.ExecRaw(h.ctx, sql); err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
				}
			}
			if text := databaseText(t, h.ctx, d, path); strings.Contains(text, "MARKER") {
				t.Fatal("the marker is in the database in plain text after rekey")
			}
		})
	}
}

// cmpCounts reports whether two key counts are equal.
func cmpCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, n := range a {
		if b[k] != n {
			return false
		}
	}
	return true
}

func TestEncryptionForkRunsOnItsCopiedPayloads(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		e := h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) })
		runVault(t, h, e)
		forkID, err := e.Fork(h.ctx, "v1", "signal:approve", ForkOptions{NewID: "v1-again"})
		if err != nil {
			t.Fatal(err)
		}
		h.drain(e, vault.Erase(), vaultChild.Erase())
		r, err := e.ReadRun(h.ctx, forkID)
		if err != nil || r.Status != StatusDone || !strings.Contains(r.Output, secret+"-signal") {
			t.Fatalf("fork: %+v, %v; want done on the copied signal", r, err)
		}
		if n := sealedWith(t, h, e, forkID); n[""] != 0 || n["k1"] == 0 {
			t.Errorf("fork's payloads by key: %v; want all sealed", n)
		}
	})
}

func TestEncryptionUnreadableSignalKeepsTheRunRetryable(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		w := Register("waits", str, str, func(c *Ctx, in string) task.Task[string] {
			return task.Map(AwaitSignal(c, str, "go"), func(s string) string { return in + s })
		})
		// A plain input (started before keys were set), a sealed signal.
		h.start(w, "w1", "in")
		sealer := h.engine("S", func(o *Options) { o.Keys = testKey("k1", 1) })
		if err := sealer.Signal(h.ctx, "w1", "go", `"sealed"`); err != nil {
			t.Fatal(err)
		}
		for range 6 {
			h.clock.Advance(time.Hour)
			h.poll(h.e, w.Erase())
		}
		r := h.wantStatus("w1", StatusFailed)
		wantContains(t, r.LastError, `signal "go"`, `"k1"`, "never made dead")
		h.clock.Advance(time.Hour)
		h.drain(sealer, w.Erase())
		if r, err := sealer.ReadRun(h.ctx, "w1"); err != nil || r.Status != StatusDone || r.Output != `"insealed"` {
			t.Fatalf("with the key: %+v, %v; want done with output \"insealed\"", r, err)
		}
	})
}

func TestEncryptionReplayOpensASealedExport(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		sealer := h.engine("A", func(o *Options) { o.Keys = testKey("k1", 1) })
		if err := Start(h.ctx, sealer, vault, "v1", secret+"-input"); err != nil {
			t.Fatal(err)
		}
		h.drain(sealer, vault.Erase(), vaultChild.Erase())
		// Exported without the key: every payload in its sealed form.
		var exported []ExportedRun
		err := h.e.EachRun(h.ctx, nil, "vault", func(r Run, j []JournalEntry) error {
			exported = append(exported, Export(r, j))
			return nil
		})
		if err != nil || len(exported) != 1 {
			t.Fatalf("export: %d runs, %v", len(exported), err)
		}
		if _, sealed := keyring.KeyOf(exported[0].Input); !sealed {
			t.Fatalf("exported input %q is not sealed", exported[0].Input)
		}
		r, j, err := exported[0].Run()
		if err != nil {
			t.Fatal(err)
		}
		if div := sealer.Replay(h.ctx, vault.Erase(), r, j); div != nil {
			t.Fatalf("replay with the key: %s", div)
		}
		div := h.e.Replay(h.ctx, vault.Erase(), r, j)
		if div == nil || !errors.Is(div.Err, ErrUnreadable) || !strings.Contains(div.String(), `"k1"`) {
			t.Fatalf("replay without the key: %v; want an unreadable payload naming k1", div)
		}
	})
}

// TestEncryptionBindsTheNamespace: under the same key, a sealed input copied
// from run "v1" of namespace a onto run "v1" of namespace b does not open
// there (the associated data holds the namespace), while a's still does.
func TestEncryptionBindsTheNamespace(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		in := func(ns string) *Engine {
			return h.engine(ns, func(o *Options) { o.Keys = testKey("k1", 1); o.Namespace = ns })
		}
		a, b := in("a"), in("b")
		for _, e := range []*Engine{a, b} {
			if err := Start(h.ctx, e, vault, "v1", e.namespace+"-"+secret); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := d.Exec(h.ctx, `UPDATE _sky_durable_runs SET input = (SELECT input FROM _sky_durable_runs WHERE id = ?) WHERE id = ?`,
			"a\x1fv1", "b\x1fv1"); err != nil {
			t.Fatal(err)
		}
		r, err := b.ReadRun(h.ctx, "v1")
		if err == nil && strings.Contains(r.Input, secret) {
			t.Fatalf("namespace b opened namespace a's sealed input: %q", r.Input)
		}
		if err != nil && !errors.Is(err, ErrUnreadable) {
			t.Fatalf("namespace b reading the moved input: %v; want ErrUnreadable", err)
		}
		if r, err := a.ReadRun(h.ctx, "v1"); err != nil || r.Input != `"a-`+secret+`"` {
			t.Fatalf("namespace a's own run: %q, %v", r.Input, err)
		}
	})
}
