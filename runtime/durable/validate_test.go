package durable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// TestOneValidationBothStores: every name and payload is checked at the
// API boundary, so SQLite and PostgreSQL get the same InvalidInput error
// naming the value, for each class of bad input (empty, NUL and other
// control characters, invalid UTF-8, over MaxIDBytes, a priority out of
// range), from Start and RunNow alike, and nothing is stored. A step id
// the journal cannot hold fails the run at once, before its effect runs:
// no second effect.
func TestOneValidationBothStores(t *testing.T) {
	long := strings.Repeat("é", MaxIDBytes/2) + "x" // MaxIDBytes + 1 bytes
	atLimit := strings.Repeat("é", MaxIDBytes/2)    // MaxIDBytes bytes
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		cnt := newCounter()
		def := RegisterWith(RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Second, MaxBackoff: time.Second}, "w", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, in, cnt.effect(in, "ok")) // the input is the step id
		})
		wf := def.Erase()
		start := func(id string, opts StartOptions) error {
			return h.e.StartJSONWith(h.ctx, opts, wf, id, `"s"`)
		}
		runNow := func(id string) error {
			_, err := RunNow(h.ctx, h.e, def, id, "s")
			return err
		}

		for _, c := range []struct {
			name  string
			err   error
			parts []string
		}{
			{"run id with NUL", start("order\x00-1", StartOptions{}), []string{`the run id "order\x00-1"`, "control character U+0000 at byte 5"}},
			{"run id with DEL", start("order\x7f", StartOptions{}), []string{"control character U+007F at byte 5"}},
			{"run id with a C1 control", start("order\u0085", StartOptions{}), []string{"control character U+0085 at byte 5"}},
			{"run id not UTF-8", start("order\xff", StartOptions{}), []string{`the run id "order\xff"`, "not valid UTF-8 (byte 5)"}},
			{"run id too long", start(long, StartOptions{}), []string{"the run id", "513 bytes, over the limit of 512"}},
			{"run id with NUL, run now", runNow("order\x00-1"), []string{`the run id "order\x00-1"`, "control character U+0000 at byte 5"}},
			{"run id not UTF-8, run now", runNow("order\xff"), []string{`the run id "order\xff"`, "not valid UTF-8 (byte 5)"}},
			{"run id too long, run now", runNow(long), []string{"the run id", "513 bytes, over the limit of 512"}},
			{"priority out of range", start("p", StartOptions{Priority: 1 << 40}), []string{"priority 1099511627776", `"p"`, "out of range"}},
			{"workflow name with NUL", h.e.StartJSON(h.ctx, Workflow{Name: "w\x00", Body: wf.Body}, "r", `1`), []string{`the workflow name "w\x00"`, "U+0000"}},
			{"input not UTF-8", h.e.StartJSON(h.ctx, wf, "bad-input", "\"\xff\""), []string{`the input of run "bad-input"`, "not valid UTF-8"}},
			{"signal without a name", h.e.Signal(h.ctx, "r", "", `1`), []string{`a signal needs a run id and a name (got run "r", name "")`, "hint: the id the run was started with"}},
			{"signal name with NUL", h.e.Signal(h.ctx, "r", "go\x00", `1`), []string{`the signal name "go\x00"`, `(run "r")`}},
			{"signal name not UTF-8", h.e.Signal(h.ctx, "r", "go\xc3", `1`), []string{"not valid UTF-8 (byte 2)"}},
			{"signal to a run id too long", h.e.Signal(h.ctx, long, "go", `1`), []string{"over the limit of 512"}},
			{"signal payload not UTF-8", h.e.Signal(h.ctx, "r", "go", "\"\xff\""), []string{`the payload of signal "go" to run "r"`, "not valid UTF-8 (byte 1)"}},
			{"event key with NUL", func() error { _, err := GetEvent(h.ctx, h.e, "r", "k\x00", str); return err }(), []string{`the event key "k\x00"`}},
		} {
			t.Run(c.name, func(t *testing.T) { wantErrContains(t, c.err, task.InvalidInput, c.parts...) })
		}
		if runs, err := h.e.ListRuns(h.ctx, ListFilter{Limit: 10}); err != nil || len(runs) != 0 {
			t.Errorf("runs after refused starts = %d, %v; want none", len(runs), err)
		}
		if orphans, err := h.e.OrphanSignals(h.ctx, 10); err != nil || len(orphans) != 0 {
			t.Errorf("signals after refused sends = %v, %v; want none", orphans, err)
		}

		// A worker given a workflow with a bad name says which.
		_, err := h.e.Poll(h.ctx, []Workflow{wf, {Name: "bad\x00name", Body: wf.Body}})
		wantErrContains(t, err, task.InvalidInput, `"bad\x00name"`)

		// The longest valid names are stored and read back alike.
		if err := start(atLimit, StartOptions{Priority: MaxPriority}); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Signal(h.ctx, atLimit, atLimit, `"\u0000 is fine escaped"`); err != nil {
			t.Fatal(err)
		}
		r, _, err := h.e.Describe(h.ctx, atLimit)
		if err != nil || r.ID != atLimit || r.Priority != MaxPriority {
			t.Fatalf("the run at the limits = %+v, %v", r, err)
		}

		// A step failing with an error text neither store could hold as
		// it is (NUL, invalid UTF-8): stored alike, readably.
		bad := RegisterWith(RetryPolicy{MaxAttempts: 1}, "bad-error", str, str, func(c *Ctx, in string) task.Task[string] {
			return Step(c, str, "s", task.Fail[string](task.New(task.Unavailable, "boom\x00\xff")))
		})
		if err := Start(h.ctx, h.e, bad, "bad-error-1", "x"); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, bad.Erase())
		wantContains(t, h.wantStatus("bad-error-1", StatusDead).LastError, "boom\\x00\uFFFD")

		// A step id with a NUL: the run is dead after one attempt, and the
		// step's effect never ran.
		if err := Start(h.ctx, h.e, def, "nul-step", "charge\x00"); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, wf)
		dead := h.wantStatus("nul-step", StatusDead)
		wantContains(t, dead.LastError, `the id "charge\x00" of a durable operation of run "nul-step"`, "U+0000")
		if dead.Attempts != 1 || cnt.get("charge\x00") != 0 {
			t.Errorf("attempts %d, effects %d; want 1 attempt and no effect", dead.Attempts, cnt.get("charge\x00"))
		}
	})
}

// TestUnstorableLookupsAnswerAlike: an id that no store can hold as text
// (a NUL, bytes that are not UTF-8) is never stored, since every write
// checks it, so looking it up finds nothing on both stores: NotFound naming
// it, or an empty answer, never PostgreSQL's driver error. A bulk action's
// error text is refused as the search text is.
func TestUnstorableLookupsAnswerAlike(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		h.start(def, "ok", "x")
		h.drain(h.e, def.Erase())
		for _, id := range []string{"a\x00b", "a\xffb"} {
			t.Run(fmt.Sprintf("%q", id), func(t *testing.T) {
				quoted := fmt.Sprintf("%q", id)
				notFound := func(name string, err error) {
					t.Helper()
					t.Run(name, func(t *testing.T) { wantErrContains(t, err, task.NotFound, `no run with id `+quoted) })
				}
				empty := func(name string, n int, err error) {
					t.Helper()
					if n != 0 || err != nil {
						t.Errorf("%s = %d, %v; want nothing found", name, n, err)
					}
				}
				_, _, err := h.e.Describe(h.ctx, id)
				notFound("Describe", err)
				_, err = h.e.ReadRun(h.ctx, id)
				notFound("ReadRun", err)
				notFound("Retry", h.e.Retry(h.ctx, id))
				notFound("Cancel", h.e.Cancel(h.ctx, id))
				notFound("Wake", h.e.Wake(h.ctx, id))
				notFound("Release", h.e.Release(h.ctx, id))
				_, err = h.e.Compact(h.ctx, id)
				notFound("Compact", err)
				_, err = h.e.Fork(h.ctx, id, "s", ForkOptions{})
				notFound("Fork", err)
				notFound("Rewind", h.e.Rewind(h.ctx, id, "s"))
				_, err = h.e.Diff(h.ctx, "ok", id)
				notFound("Diff", err)
				_, err = Result(h.ctx, h.e, def, id)
				notFound("Result", err)

				_, err = h.e.History(h.ctx, id)
				notFound("History", err)
				sigs, err := h.e.Signals(h.ctx, id)
				empty("Signals", len(sigs), err)
				for name, f := range map[string]ListFilter{"workflow": {Workflow: id}, "parent": {Parent: id}, "id prefix": {IDPrefix: id}} {
					runs, err := h.e.ListRuns(h.ctx, f)
					empty("ListRuns by "+name, len(runs), err)
				}
				for name, f := range map[string]BulkFilter{"workflow": {Workflow: id}, "parent": {Parent: id}} {
					n, err := h.e.CountBulk(h.ctx, BulkRetry, f)
					empty("CountBulk by "+name, int(n), err)
				}
				found, err := h.e.Unschedule(h.ctx, id)
				if found || err != nil {
					t.Errorf("Unschedule = %v, %v; want nothing found", found, err)
				}

				_, err = h.e.CountBulk(h.ctx, BulkRetry, BulkFilter{ErrorContains: id})
				wantErrContains(t, err, task.InvalidInput, "the error text "+quoted)
				_, err = h.e.Bulk(h.ctx, BulkRetry, BulkFilter{ErrorContains: id}, BulkOptions{})
				wantErrContains(t, err, task.InvalidInput, "the error text "+quoted)

				snaps := NewSnapshotStore(h.e)
				_, err = snaps.Save(h.ctx, id, 1, `1`)
				wantErrContains(t, err, task.InvalidInput, "the snapshot id "+quoted)
				_, _, _, err = snaps.Load(h.ctx, id)
				wantErrContains(t, err, task.InvalidInput, "the snapshot id "+quoted)
			})
		}
		h.wantStatus("ok", StatusDone)
	})
}

// TestDeepPayloadStaysInspectable: a payload nested deeper than
// MaxJSONDepth is refused by name on both stores, and one at the limit is
// stored and reads back whole inside a document (as `sky durable show
// --json` embeds it).
func TestDeepPayloadStaysInspectable(t *testing.T) {
	nested := func(n int) string { return strings.Repeat(`[`, n) + `"]["` + strings.Repeat(`]`, n) }
	if d := jsonDepth(`{"a":"[[{","b":[{"c":"\"["}]}`); d != 3 {
		t.Fatalf("jsonDepth = %d, want 3 (brackets in strings do not count)", d)
	}
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		wf := Register("w", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) }).Erase()
		wantErrContains(t, h.e.StartJSON(h.ctx, wf, "deep", nested(MaxJSONDepth+1)), task.InvalidInput,
			`the input of run "deep" is nested 1001 levels deep, over the limit of 1000`, "hint: flatten it")
		wantErrContains(t, h.e.Signal(h.ctx, "deep", "go", nested(MaxJSONDepth+1)), task.InvalidInput,
			`the payload of signal "go" to run "deep" is nested 1001 levels deep`)
		if _, _, err := h.e.Describe(h.ctx, "deep"); task.As(err).Kind != task.NotFound {
			t.Fatalf("a refused start stored a run: %v", err)
		}

		if err := h.e.StartJSON(h.ctx, wf, "deep", nested(MaxJSONDepth)); err != nil {
			t.Fatal(err)
		}
		if err := h.e.Signal(h.ctx, "deep", "go", nested(MaxJSONDepth)); err != nil {
			t.Fatal(err)
		}
		r, _, err := h.e.Describe(h.ctx, "deep")
		if err != nil {
			t.Fatal(err)
		}
		sigs, err := h.e.Signals(h.ctx, "deep")
		if err != nil || len(sigs) != 1 {
			t.Fatalf("signals = %v, %v", sigs, err)
		}
		doc := map[string]any{"run": map[string]any{"input": json.RawMessage(r.Input)},
			"signals": []any{map[string]any{"payload": json.RawMessage(sigs[0].Payload)}}}
		if _, err := json.Marshal(doc); err != nil {
			t.Fatalf("the run at the depth limit does not show as JSON: %v", err)
		}
	})
}

// TestDeepCodecResultFailsTheStep: a value a codec makes (a step result,
// the output) nested deeper than MaxJSONDepth fails the run at once, by
// name, on both stores, and is not stored, so `sky durable show --json` can
// still print the run; one at the limit is journalled.
func TestDeepCodecResultFailsTheStep(t *testing.T) {
	// nestedCodec encodes n as n nested arrays around a string.
	nestedCodec := codec.Make(func(buf *bytes.Buffer, n int) error {
		buf.WriteString(strings.Repeat(`[`, n) + `"x"` + strings.Repeat(`]`, n))
		return nil
	}, func(v any, _ codec.Path) (int, error) {
		n := 0
		for ; ; n++ {
			list, ok := v.([]any)
			if !ok {
				return n, nil
			}
			v = list[0]
		}
	})
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		step := Register("step", codec.Int, codec.Int, func(c *Ctx, n int64) task.Task[int64] {
			return task.AndThen(Step(c, nestedCodec, "at-limit", task.Succeed(MaxJSONDepth)), func(int) task.Task[int64] {
				return task.Map(Step(c, nestedCodec, "deep", task.Succeed(int(n))), func(m int) int64 { return int64(m) })
			})
		})
		output := Register("output", codec.Int, nestedCodec, func(c *Ctx, n int64) task.Task[int] { return task.Succeed(int(n)) })
		for _, start := range []error{Start(h.ctx, h.e, step, "s", MaxJSONDepth+1), Start(h.ctx, h.e, output, "o", MaxJSONDepth+1)} {
			if start != nil {
				t.Fatal(start)
			}
		}
		h.drain(h.e, step.Erase(), output.Erase())
		s, j := h.describe("s")
		wantContains(t, s.LastError, `the result of step "deep" of run "s" is nested 1001 levels deep, over the limit of 1000`, "hint: flatten it")
		if s.Status != StatusDead || len(j) != 1 || j[0].StepID != "at-limit" {
			t.Fatalf("run s is %s with %d journal entries; want dead with only the step at the limit journalled", s.Status, len(j))
		}
		if _, err := json.Marshal(map[string]any{"journal": []any{map[string]any{"result": json.RawMessage(j[0].Result)}}}); err != nil {
			t.Errorf("the step at the limit does not show as JSON: %v", err)
		}
		if o := h.wantStatus("o", StatusDead); o.Output != "" {
			t.Errorf("run o stored its output %.20s...", o.Output)
		} else {
			wantContains(t, o.LastError, `the output of run "o" is nested 1001 levels deep`)
		}
	})
}

// TestChecksWordOnlyARefusal: the name and depth checks call their wording
// (where, what) only to refuse, so a step's id and result that pass format
// nothing; a refusal still names the value and where it is.
func TestChecksWordOnlyARefusal(t *testing.T) {
	calls := 0
	where := func() string { calls++; return ` of run "r"` }
	if err := checkName("the id", "charge", where, "a hint"); err != nil || calls != 0 {
		t.Errorf("checkName of a good id = %v after %d wordings, want nil after none", err, calls)
	}
	if err := checkDepth(where, `["`+strings.Repeat("a", 2*MaxJSONDepth)+`"]`); err != nil || calls != 0 {
		t.Errorf("checkDepth of shallow text = %v after %d wordings, want nil after none", err, calls)
	}
	err := checkName("the id", "bad\x01id", where, "a hint")
	if err == nil || !strings.Contains(err.Error(), `the id "bad\x01id" of run "r" contains the control character U+0001`) || calls != 1 {
		t.Errorf("checkName of a bad id = %v after %d wordings, want a refusal naming it and where, after one", err, calls)
	}
	deep := strings.Repeat("[", MaxJSONDepth+1) + strings.Repeat("]", MaxJSONDepth+1)
	if err := checkDepth(where, deep); err == nil || !strings.Contains(err.Error(), ` of run "r" is nested 1001 levels deep`) || calls != 2 {
		t.Errorf("checkDepth of deep text = %v after %d wordings, want a refusal naming it, after two", err, calls)
	}
	if n := testing.AllocsPerRun(100, func() {
		_ = checkName("the id", "charge", func() string { return fmt.Sprint(" of run ", calls) }, "a hint")
	}); n != 0 {
		t.Errorf("checkName of a good id allocates %.0f times, want 0", n)
	}
}
