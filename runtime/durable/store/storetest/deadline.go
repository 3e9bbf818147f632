package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

func init() { cases = append(cases, deadlineCases...) }

// CheckDeadlineMigration is the Check of a store's MigrationStep from
// version 3: after 0004 the seeded runs have no deadline, the status CHECK
// admits timed_out (and still refuses an unknown status), and a sweep with no
// overdue run changes nothing.
func CheckDeadlineMigration(t *testing.T, s store.Store, d *db.DB) {
	ctx := context.Background()
	if n, c, err := s.TimeOutRuns(ctx, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), 100); err != nil || n != 0 || c != 0 {
		t.Errorf("TimeOutRuns on runs without a deadline = %d, %d, %v; want nothing", n, c, err)
	}
	if _, err := d.Exec(ctx, `UPDATE _sky_durable_runs SET status = `+store.SQLTimedOut+` WHERE id = 'old'`); err != nil {
		t.Errorf("the status CHECK refuses timed_out after migration 0004: %v", err)
	}
	if _, err := d.Exec(ctx, `UPDATE _sky_durable_runs SET status = 'paused' WHERE id = 'old'`); err == nil {
		t.Error("the status CHECK admits an unknown status after migration 0004")
	}
	if r, err := s.ReadRun(ctx, "old"); err != nil || r.Status != store.StatusTimedOut {
		t.Errorf("ReadRun(old) = %+v, %v; want timed_out", r, err)
	}
}

// insertWithDeadline starts run id of workflow at at with a deadline (0:
// none), as a child of parent when it is not "".
func (f *fixture) insertWithDeadline(id, workflow, parent string, deadline time.Duration, at time.Time) {
	f.t.Helper()
	inserted, _, err := f.s.InsertRun(f.ctx, store.NewRun{ID: id, Workflow: workflow, Version: 1, Input: `{}`, Deadline: deadline, Priority: 5}, at)
	if err != nil || !inserted {
		f.t.Fatalf("InsertRun(%s) with a deadline = %v, %v", id, inserted, err)
	}
	if parent != "" {
		// InsertRun takes no parent (children come from the Composer's
		// insert), so the suite sets the column directly.
		if _, err := f.d.Exec(f.ctx, `UPDATE _sky_durable_runs SET parent_id = ? WHERE id = ?`, parent, id); err != nil {
			f.t.Fatal(err)
		}
	}
}

// timeOut sweeps at now and wants the counts.
func (f *fixture) timeOut(now time.Time, wantTimedOut, wantCancelled int64) {
	f.t.Helper()
	n, c, err := f.s.TimeOutRuns(f.ctx, now, 100)
	if err != nil || n != wantTimedOut || c != wantCancelled {
		f.t.Fatalf("TimeOutRuns at %v = %d timed out, %d cancelled, %v; want %d, %d", now.Sub(T0), n, c, err, wantTimedOut, wantCancelled)
	}
}

// deadlineCases pin the run deadline (NewRun.Deadline): no claim takes an
// overdue run, its lease holder's next step is refused, the sweep ends it
// timed_out (never retried) and cancels its children.
var deadlineCases = []storeCase{
	{"DeadlinePassingWhileRunningEndsTheLeaseAtTheNextStep", func(f *fixture) {
		f.insertWithDeadline("r", "w", "", time.Minute, T0)
		f.insert("free", "w", 1, T0)
		if got := f.run("r").Deadline; !got.Equal(T0.Add(time.Minute)) {
			f.t.Errorf("ReadRun's Deadline = %v, want %v", got, T0.Add(time.Minute))
		}
		if got := f.run("free").Deadline; !got.IsZero() {
			f.t.Errorf("a run started without a deadline has Deadline %v", got)
		}
		f.claim(T0, "A", "r")
		fence := store.Fence{RunID: "r", Token: "A"}
		steps := JournalSteps(3)
		f.ok("append before the deadline", f.s.AppendEntry(f.ctx, f.d, fence, steps[0], T0.Add(59*time.Second)))
		late := T0.Add(time.Minute)
		f.wantLeaseLost("append at the deadline", f.s.AppendEntry(f.ctx, f.d, fence, steps[1], late))
		f.wantLeaseLost("complete past the deadline", f.s.Complete(f.ctx, fence, &steps[1], `"out"`, late))
		f.timeOut(late, 1, 0)
		r := f.step(store.OpTimeOut, "r", store.StatusRunning, store.StatusTimedOut)
		if r.ClaimedBy != "worker-A" && !r.ClaimedAt.IsZero() || r.Output != "" || !r.WakeAt.IsZero() {
			f.t.Errorf("timed-out run: claimed at %v, output %q, due %v; want unclaimed, no output, never due", r.ClaimedAt, r.Output, r.WakeAt)
		}
		wantContains(f, r.LastError, "deadline passed at 2030-01-02 03:05:05.000Z")
		if j := f.journal("r"); len(j) != 1 {
			f.t.Errorf("journal = %v, want only the step before the deadline", StepIDs(j))
		}
		f.wantLeaseLost("append after timing out", f.s.AppendEntry(f.ctx, f.d, fence, steps[1], late))
		// Never claimed again (not retried), even once its lease would
		// have expired; the other run is.
		f.claim(late.Add(2*Lease), "B", "free")
		f.claim(late.Add(3*Lease), "C", "")
		f.timeOut(late.Add(time.Hour), 0, 0)
		if f.run("r").Status != store.StatusTimedOut {
			f.t.Errorf("a second sweep changed the timed-out run")
		}
	}},
	{"DeadlinePassingWhileWaitingOnASignalEndsTimedOut", func(f *fixture) {
		f.insertWithDeadline("r", "w", "", time.Hour, T0)
		f.claim(T0, "A", "r")
		f.ok("Suspend", f.s.Suspend(f.ctx, store.Fence{RunID: "r", Token: "A"}, time.Time{}, "go", T0))
		f.timeOut(T0.Add(time.Hour-time.Millisecond), 0, 0)
		f.timeOut(T0.Add(time.Hour), 1, 0)
		r := f.step(store.OpTimeOut, "r", store.StatusWaiting, store.StatusTimedOut)
		if r.WaitingSignal != "" {
			f.t.Errorf("a timed-out run still waits for %q", r.WaitingSignal)
		}
		// A late signal is ignored and wakes nothing.
		if stored, err := f.s.PutSignal(f.ctx, "r", "go", `1`, "", T0.Add(2*time.Hour)); err != nil || stored {
			f.t.Errorf("PutSignal to a timed-out run = %v, %v; want ignored", stored, err)
		}
		f.claim(T0.Add(2*time.Hour), "B", "")
	}},
	{"DeadlinePassedBeforeAClaimIsNeverClaimed", func(f *fixture) {
		f.insertWithDeadline("r", "w", "", time.Second, T0)
		f.claim(T0.Add(time.Second), "A", "")
		f.timeOut(T0.Add(time.Second), 1, 0)
		f.step(store.OpTimeOut, "r", store.StatusWaiting, store.StatusTimedOut)
	}},
	{"DeadlineOfAFailedRunEndsItTimedOut", func(f *fixture) {
		f.insertWithDeadline("r", "w", "", time.Minute, T0)
		f.claim(T0, "A", "r")
		f.ok("Fail", f.s.Fail(f.ctx, store.Fence{RunID: "r", Token: "A"}, "boom", "", time.Hour, false, T0))
		f.timeOut(T0.Add(time.Minute), 1, 0)
		r := f.step(store.OpTimeOut, "r", store.StatusFailed, store.StatusTimedOut)
		wantContains(f, r.LastError, "last error: boom")
	}},
	{"CancelRunCancelsTheDescendants", func(f *fixture) {
		f.insertWithDeadline("p", "w", "", 0, T0)
		f.insertWithDeadline("p/a", "w1", "p", 0, T0)
		f.insertWithDeadline("p/a/x", "w1", "p/a", 0, T0)
		f.insertWithDeadline("q", "w", "", 0, T0)
		f.insertWithDeadline("q/a", "w1", "q", 0, T0)
		if ok, err := f.s.CancelRun(f.ctx, "p", T0); err != nil || !ok {
			f.t.Fatalf("CancelRun(p) = %v, %v; want cancelled", ok, err)
		}
		f.step(store.OpCancel, "p", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "p/a", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "p/a/x", store.StatusWaiting, store.StatusCancelled)
		if s := f.run("q/a").Status; s != store.StatusWaiting {
			f.t.Errorf("the child of another run is %s, want waiting", s)
		}
		// A second cancel changes nothing and says so.
		if ok, err := f.s.CancelRun(f.ctx, "p", T0); err != nil || ok {
			f.t.Errorf("CancelRun of a cancelled run = %v, %v; want false", ok, err)
		}
	}},
	{"DeadlineCancelsTheChildrenOfATimedOutRun", func(f *fixture) {
		f.insertWithDeadline("parent", "w", "", time.Minute, T0)
		f.insertWithDeadline("parent/a", "w1", "parent", 0, T0)
		f.insertWithDeadline("parent/b", "w3", "parent", 0, T0)
		f.insertWithDeadline("parent/c", "w2", "parent", 0, T0)
		// Grandchildren go too, also below a child that finished.
		f.insertWithDeadline("parent/a/x", "w1", "parent/a", 0, T0)
		f.insertWithDeadline("parent/c/y", "w1", "parent/c", 0, T0)
		f.insert("other", "w1", 1, T0)
		// A finished child stays as it is.
		c, ok, err := f.s.ClaimRun(f.ctx, []string{"w2"}, T0, Lease, "A", "worker-A")
		if err != nil || !ok || c.ID != "parent/c" {
			f.t.Fatalf("claim of w2 = %q, %v, %v", c.ID, ok, err)
		}
		f.ok("Complete", f.s.Complete(f.ctx, store.Fence{RunID: c.ID, Token: "A"}, nil, `"c"`, T0))
		// A running child is cancelled too, and its holder fenced out.
		f.claim(T0, "B", "parent")
		c, ok, err = f.s.ClaimRun(f.ctx, []string{"w3"}, T0, Lease, "C", "worker-C")
		if err != nil || !ok || c.ID != "parent/b" {
			f.t.Fatalf("claim of w3 = %q, %v, %v", c.ID, ok, err)
		}
		f.timeOut(T0.Add(time.Minute), 1, 4)
		f.step(store.OpTimeOut, "parent", store.StatusRunning, store.StatusTimedOut)
		f.step(store.OpCancel, "parent/a", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "parent/a/x", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "parent/c/y", store.StatusWaiting, store.StatusCancelled)
		f.step(store.OpCancel, "parent/b", store.StatusRunning, store.StatusCancelled)
		f.wantLeaseLost("the cancelled child's append", f.s.AppendEntry(f.ctx, f.d, store.Fence{RunID: "parent/b", Token: "C"}, JournalSteps(1)[0], T0.Add(time.Minute)))
		if s := f.run("parent/c").Status; s != store.StatusDone {
			f.t.Errorf("the finished child is %s, want done", s)
		}
		if s := f.run("other").Status; s != store.StatusWaiting {
			f.t.Errorf("an unrelated run is %s, want waiting", s)
		}
	}},
}

// wantContains fails unless text holds want.
func wantContains(f *fixture, text, want string) {
	f.t.Helper()
	if !strings.Contains(text, want) {
		f.t.Errorf("%q does not contain %q", text, want)
	}
}
