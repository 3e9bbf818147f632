package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
	"skydurable/runtime/task"
)

// newPgStoreFixture is a fresh PostgreSQL database with the engine's schema:
// its store on a virtual clock, and the operations of the statements the
// store sends.
func newPgStoreFixture(t *testing.T) (*db.DB, *Store, *fixedClock, *[]string) {
	t.Helper()
	d := dbtest.Open(t, "postgres")
	clock := &fixedClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	stmts := &[]string{}
	s := New(d, func(op, sql string) { *stmts = append(*stmts, op) })
	if err := s.Setup(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d, s, clock, stmts
}

// TestBatchedWritesOnPostgres runs the batched statements directly: each
// row gets its own outcome (written, lease lost, or the error it gets when
// written alone: a row the database refuses fails its batch, whose rows
// are then written alone), and a lost lease writes nothing.
func TestBatchedWritesOnPostgres(t *testing.T) {
	d, s, clock, stmts := newPgStoreFixture(t)
	ctx := context.Background()
	now := clock.Now()
	for _, id := range []string{"r1", "r2", "r3", "r4", "r5"} {
		if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `""`}, now); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.ClaimRun(ctx, []string{"w"}, now, storetest.Lease, "tok-"+id, "A"); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
	}
	step := func(seq int, id string) store.JournalEntry {
		return store.JournalEntry{Seq: seq, StepID: id, Kind: store.KindStep, Result: `"` + id + `"`}
	}
	if err := s.appendOne(ctx, d, store.Fence{RunID: "r3", Token: "tok-r3"}, step(1, "a"), now); err != nil {
		t.Fatal(err)
	}
	*stmts = nil
	errs := s.appendBatch(ctx, []appendRequest{
		{f: store.Fence{RunID: "r1", Token: "tok-r1"}, e: step(1, "a"), now: now},
		{f: store.Fence{RunID: "r2", Token: "stale"}, e: step(1, "a"), now: now},  // lost lease
		{f: store.Fence{RunID: "r3", Token: "tok-r3"}, e: step(1, "b"), now: now}, // position 1 taken
		{f: store.Fence{RunID: "r4", Token: "tok-r4"}, e: step(1, "a"), now: now},
	})
	if errs[0] != nil || errs[3] != nil {
		t.Errorf("valid rows: %v, %v", errs[0], errs[3])
	}
	if !errors.Is(errs[1], store.ErrLeaseLost) {
		t.Errorf("stale fence: %v, want a lost lease", errs[1])
	}
	if se := task.As(errs[2]); se == nil || se.Kind != task.Conflict {
		t.Errorf("taken position: %v, want the Conflict a lone write gets", errs[2])
	}
	// One batched statement, which the taken position fails whole (nothing
	// of it committed), then each row alone.
	if diff := cmp.Diff([]string{"append", "append", "append", "append", "append"}, *stmts); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
	journal := func(id string) []string {
		j, err := s.LoadJournal(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return storetest.StepIDs(j)
	}
	for id, want := range map[string][]string{"r1": {"a"}, "r2": {}, "r3": {"a"}, "r4": {"a"}} {
		if diff := cmp.Diff(want, journal(id)); diff != "" {
			t.Errorf("journal of %s (-want +got):\n%s", id, diff)
		}
	}

	last := step(2, "b")
	errs = s.completeBatch(ctx, []completeRequest{
		{f: store.Fence{RunID: "r1", Token: "tok-r1"}, last: &last, output: `"one"`, now: now},
		{f: store.Fence{RunID: "r2", Token: "stale"}, output: `"two"`, now: now},
		{f: store.Fence{RunID: "r5", Token: "tok-r5"}, output: `"five"`, now: now},
	})
	if errs[0] != nil || !errors.Is(errs[1], store.ErrLeaseLost) || errs[2] != nil {
		t.Errorf("complete batch: %v", errs)
	}
	for id, want := range map[string]string{"r1": `"one"`, "r5": `"five"`} {
		r, err := s.ReadRun(ctx, id)
		if err != nil || r.Status != store.StatusDone || r.Output != want {
			t.Errorf("%s: %s %q (%v), want done %s", id, r.Status, r.Output, err, want)
		}
	}
	if r, _ := s.ReadRun(ctx, "r2"); r.Status != store.StatusRunning {
		t.Errorf("r2 with a stale fence is %s, want still running", r.Status)
	}
	if diff := cmp.Diff([]string{"a", "b"}, journal("r1")); diff != "" {
		t.Errorf("r1's journal after completing with its last step (-want +got):\n%s", diff)
	}
	// The batch records no completion for runs with no history yet (done
	// in the attempt that first claimed them: Engine.History derives their
	// done from the run row), and nothing for the stale fence.
	for id, want := range map[string]int{"r1": 0, "r5": 0, "r2": 0} {
		h, err := s.ReadHistory(ctx, id)
		if err != nil || len(h) != want || want == 1 && (h[0].Kind != store.EventDone || h[0].Actor != "A" || h[0].Attempt != 1 || !h[0].At.Equal(now)) {
			t.Errorf("history of %s = %+v (%v), want %d done by A", id, h, err, want)
		}
	}
}

// TestGroupCommitSkipsTransactions: a write whose context carries a
// transaction joins it instead of a batch.
func TestGroupCommitSkipsTransactions(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	ctx := context.Background()
	s := New(d, func(string, string) {})
	if err := s.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.InsertRun(ctx, store.NewRun{ID: "r", Workflow: "w", Version: 1, Input: `""`}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.ClaimRun(ctx, []string{"w"}, time.Time{}, storetest.Lease, "tok", "A"); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	boom := errors.New("roll back")
	err := d.WithTransaction(ctx, func(txCtx context.Context, _ *db.DB) error {
		if err := s.AppendEntry(txCtx, d, store.Fence{RunID: "r", Token: "tok"}, store.JournalEntry{Seq: 1, StepID: "a", Kind: store.KindStep, Result: `1`}, time.Time{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("transaction: %v", err)
	}
	if j, err := s.LoadJournal(ctx, "r"); err != nil || len(j) != 0 {
		t.Errorf("journal after the rollback: %v %v; want empty (the write joined the transaction)", j, err)
	}
}

// TestBatchedClaimOnPostgres: one statement claims for three pollers when
// two runs are due: each run goes to one poller under that poller's token,
// with its own journal, and the third poller finds none due; a fourth,
// stopped while it waited, claims nothing.
func TestBatchedClaimOnPostgres(t *testing.T) {
	d, s, clock, stmts := newPgStoreFixture(t)
	ctx := context.Background()
	now := clock.Now()
	start := func(id string) {
		if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `"` + id + `"`}, now); err != nil {
			t.Fatal(err)
		}
	}
	// "retried" had an attempt that journalled two steps, then failed.
	start("retried")
	if c, ok, err := s.ClaimRun(ctx, []string{"w"}, now, storetest.Lease, "old", "A"); !ok || err != nil || c.ID != "retried" {
		t.Fatalf("first claim: %v %v %v", c.ID, ok, err)
	}
	for i, je := range storetest.JournalSteps(2) {
		if err := s.appendOne(ctx, d, store.Fence{RunID: "retried", Token: "old"}, je, now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Fail(ctx, store.Fence{RunID: "retried", Token: "old"}, "boom", "", 0, false, now); err != nil {
		t.Fatal(err)
	}
	start("fresh")
	claimedID := "retried"

	*stmts = nil
	clock.Advance(time.Second)
	// Four pollers ask; the fourth stopped (its context ended) while it
	// waited for the batch.
	reqs := make([]claimRequest, 4)
	for i := range reqs {
		reqs[i] = claimRequest{single: pgClaim, pick: `["w"]`, now: clock.Now(), lease: 30 * time.Minute,
			token: fmt.Sprintf("tok-%d", i), worker: "B", out: &claimOutcome{}}
	}
	gone := make(chan struct{})
	close(gone)
	reqs[3].done = gone
	errs := s.claimBatch(ctx, reqs)
	for i, err := range errs[:3] {
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
	}
	if errs[3] == nil || reqs[3].out.ok {
		t.Errorf("the stopped poller's claim: %v, ok %v; want an error and no run", errs[3], reqs[3].out.ok)
	}
	if diff := cmp.Diff([]string{"claim"}, *stmts); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
	got := map[string]string{} // run -> token
	for _, r := range reqs {
		if !r.out.ok {
			continue
		}
		c := r.out.c
		got[c.ID] = r.token
		if !c.JournalRead {
			t.Errorf("%s: journal not read by the claim", c.ID)
		}
		wantJournal := []store.JournalEntry(nil)
		if c.ID == claimedID {
			wantJournal = storetest.JournalSteps(2)
		}
		if diff := cmp.Diff(wantJournal, c.Journal, storetest.IgnoreTimes); diff != "" {
			t.Errorf("journal of %s (-want +got):\n%s", c.ID, diff)
		}
		if c.Input != `"`+c.ID+`"` {
			t.Errorf("%s: input %s", c.ID, c.Input)
		}
		var token string
		if err := d.QueryRow(ctx, `SELECT lease_token FROM _sky_durable_runs WHERE id = ? AND status = 'running' AND claimed_by = 'B'`, c.ID).Scan(&token); err != nil || token != r.token {
			t.Errorf("%s: lease token in the table %q (%v), want the poller's %q", c.ID, token, err, r.token)
		}
	}
	if len(got) != 2 || got["fresh"] == "" || got["retried"] == "" || got["fresh"] == got["retried"] {
		t.Errorf("claims: %v; want both runs, each to its own poller, and one poller without a run", got)
	}
}

// TestBatchedCompleteAndClaimOnPostgres: one statement completes the runs
// of four pollers and claims the next runs for them (PollWith's chain):
// each completion gets its own outcome (done, or its lease lost), the two
// due runs go to the first two pollers still waiting, under their own
// tokens, and a poller stopped while it waited has its run completed but
// claims none. A batch the database rejects (a last step whose position is
// taken) is written again alone per poller, each getting what it gets
// alone.
func TestBatchedCompleteAndClaimOnPostgres(t *testing.T) {
	d, s, clock, stmts := newPgStoreFixture(t)
	ctx := context.Background()
	now := clock.Now()
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `""`}, now); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.ClaimRun(ctx, []string{"w"}, now, storetest.Lease, "tok-"+id, "A"); !ok || err != nil {
			t.Fatalf("claim %s: %v %v", id, ok, err)
		}
	}
	for _, id := range []string{"next1", "next2"} {
		if _, _, err := s.InsertRun(ctx, store.NewRun{ID: id, Workflow: "w", Version: 1, Input: `"` + id + `"`}, now); err != nil {
			t.Fatal(err)
		}
	}
	clock.Advance(time.Second)
	last := store.JournalEntry{Seq: 1, StepID: "s", Kind: store.KindStep, Result: `"s"`}
	gone := make(chan struct{})
	close(gone)
	req := func(id, token, output string, last *store.JournalEntry, poller int) completeClaimRequest {
		return completeClaimRequest{f: store.Fence{RunID: id, Token: token}, last: last, output: output, now: clock.Now(),
			next: store.NextClaim{Names: []string{"w"}, Lease: storetest.Lease, Token: fmt.Sprintf("next-%d", poller), Worker: "B"},
			out:  &completeClaimOutcome{}}
	}
	reqs := []completeClaimRequest{
		req("r1", "tok-r1", `"one"`, &last, 1),
		req("r2", "stale", `"two"`, nil, 2), // its lease is lost; it still claims
		req("r3", "tok-r3", `"three"`, nil, 3),
		req("r4", "tok-r4", `"four"`, nil, 4), // no run left for it
	}
	reqs[2].done = gone // stopped while it waited
	*stmts = nil
	errs := s.completeClaimBatch(ctx, reqs)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if diff := cmp.Diff([]string{"complete+claim"}, *stmts); diff != "" {
		t.Errorf("statements (-want +got):\n%s", diff)
	}
	for i, want := range []error{nil, store.ErrLeaseLost, nil, nil} {
		if !errors.Is(reqs[i].out.done, want) || (want == nil) != (reqs[i].out.done == nil) {
			t.Errorf("completion %d: %v, want %v", i+1, reqs[i].out.done, want)
		}
	}
	for id, want := range map[string]string{"r1": `"one"`, "r3": `"three"`, "r4": `"four"`} {
		r, err := s.ReadRun(ctx, id)
		if err != nil || r.Status != store.StatusDone || r.Output != want {
			t.Errorf("%s: %s %q (%v), want done %s", id, r.Status, r.Output, err, want)
		}
	}
	if r, _ := s.ReadRun(ctx, "r2"); r.Status != store.StatusRunning {
		t.Errorf("r2 with a stale fence is %s, want still running", r.Status)
	}
	if j, err := s.LoadJournal(ctx, "r1"); err != nil || len(j) != 1 || j[0].StepID != "s" {
		t.Errorf("r1's journal: %+v (%v), want its last step", j, err)
	}
	got := map[string]string{} // run -> the token it was claimed with
	for i, r := range reqs {
		if !r.out.ok {
			continue
		}
		if i >= 2 {
			t.Errorf("poller %d claimed %s; want the two runs for the first two pollers waiting", i+1, r.out.c.ID)
		}
		got[r.out.c.ID] = r.next.Token
		if !r.out.c.JournalRead || len(r.out.c.Journal) != 0 || r.out.c.Input != `"`+r.out.c.ID+`"` {
			t.Errorf("%s: claimed as %+v", r.out.c.ID, r.out.c)
		}
		var token, by string
		if err := d.QueryRow(ctx, `SELECT lease_token, claimed_by FROM _sky_durable_runs WHERE id = ? AND status = 'running'`, r.out.c.ID).Scan(&token, &by); err != nil ||
			token != r.next.Token || by != "B" {
			t.Errorf("%s: leased to %q by %q (%v), want %q by B", r.out.c.ID, token, by, err, r.next.Token)
		}
	}
	if len(got) != 2 || got["next1"] == "" || got["next2"] == "" {
		t.Errorf("claims: %v; want next1 and next2, one to each of the first two pollers", got)
	}

	// A rejected batch: next1's position 1 is taken, so the statement
	// fails as a whole and each request is written alone.
	if err := s.appendOne(ctx, d, store.Fence{RunID: "next1", Token: got["next1"]}, last, clock.Now()); err != nil {
		t.Fatal(err)
	}
	*stmts = nil
	reqs = []completeClaimRequest{
		req("next1", got["next1"], `"n1"`, &last, 1), // position 1 taken
		req("next2", got["next2"], `"n2"`, &last, 2),
	}
	errs = s.completeClaimBatch(ctx, reqs)
	if se := task.As(errs[0]); se == nil || se.Kind != task.Conflict {
		t.Errorf("taken position: %v, want the Conflict a lone write gets", errs[0])
	}
	if errs[1] != nil || reqs[1].out.done != nil {
		t.Errorf("the other request: %v, %v; want it done", errs[1], reqs[1].out.done)
	}
	if diff := cmp.Diff([]string{"complete+claim", "complete+claim", "complete+claim"}, *stmts); diff != "" {
		t.Errorf("statements: the batch, then each alone (-want +got):\n%s", diff)
	}
	if r, _ := s.ReadRun(ctx, "next2"); r.Status != store.StatusDone || r.Output != `"n2"` {
		t.Errorf("next2: %s %q, want done", r.Status, r.Output)
	}
	if r, _ := s.ReadRun(ctx, "next1"); r.Status != store.StatusRunning {
		t.Errorf("next1: %s, want still running (its completion was refused)", r.Status)
	}
}

// fixedClock is a clock the test moves by hand.
type fixedClock struct{ t time.Time }

func (c *fixedClock) Now() time.Time          { return c.t }
func (c *fixedClock) Advance(d time.Duration) { c.t = c.t.Add(d) }
