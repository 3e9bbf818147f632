package durable

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// scheduledRuns are the ids of the runs schedule id started.
func (h *harness) scheduledRuns(id string) []string {
	h.t.Helper()
	runs, err := h.e.List(h.ctx, "", 1000)
	if err != nil {
		h.t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		if strings.HasPrefix(r.ID, id+"@") {
			ids = append(ids, r.ID)
		}
	}
	return ids
}

// TestScheduleFiresEachTickOnceAcrossWorkers: a schedule polled by 4
// workers for 10 ticks starts exactly 10 runs, one per tick, with the id
// "<schedule>@<tick time>", and they run.
func TestScheduleFiresEachTickOnceAcrossWorkers(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("digest", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in + "!") })
		if err := ScheduleRuns(h.ctx, h.e, def, "daily", "@every 1m", "news", ScheduleOptions{}); err != nil {
			t.Fatal(err)
		}
		workers := []*Engine{h.e, h.engine("B"), h.engine("C"), h.engine("D")}
		start := h.clock.Now()
		for range 10 {
			h.clock.Advance(time.Minute)
			var wg sync.WaitGroup
			for _, e := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						worked, err := e.Poll(h.ctx, []Workflow{def.Erase()})
						if err != nil {
							t.Errorf("poll: %v", err)
						}
						if !worked || err != nil {
							return
						}
					}
				}()
			}
			wg.Wait()
		}
		ids := h.scheduledRuns("daily")
		if len(ids) != 10 {
			t.Fatalf("the schedule started %d runs, want 10: %v", len(ids), ids)
		}
		for i := 1; i <= 10; i++ {
			id := fmt.Sprintf("daily@%s", start.Add(time.Duration(i)*time.Minute).UTC().Format("2006-01-02T15:04:05Z"))
			if r := h.wantStatus(id, StatusDone); r.Output != `"news!"` {
				t.Errorf("run %s output %s, want \"news!\"", id, r.Output)
			}
		}
	})
}

// TestScheduleMissedTicks: after an outage only the latest missed tick
// starts, unless the schedule catches up; re-declaring keeps the pending
// tick; unschedule stops it.
func TestScheduleMissedTicks(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("report", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		wf := def.Erase()
		for _, id := range []string{"latest", "all"} {
			if err := ScheduleRuns(h.ctx, h.e, def, id, "*/5 * * * *", id, ScheduleOptions{CatchUp: id == "all"}); err != nil {
				t.Fatal(err)
			}
		}
		// The clock starts at 03:04:05: ticks at 03:05, 03:10, ... 03:30.
		h.clock.Advance(26 * time.Minute)
		// Declaring again (as every program start does) skips nothing.
		if err := ScheduleRuns(h.ctx, h.e, def, "latest", "*/5 * * * *", "latest", ScheduleOptions{}); err != nil {
			t.Fatal(err)
		}
		h.drain(h.e, wf)
		if ids := h.scheduledRuns("latest"); len(ids) != 1 || ids[0] != "latest@2030-01-02T03:30:00Z" {
			t.Errorf("without catchUp the outage started %v, want only latest@2030-01-02T03:30:00Z", ids)
		}
		if ids := h.scheduledRuns("all"); len(ids) != 6 {
			t.Errorf("with catchUp the outage started %v, want the 6 ticks 03:05 to 03:30", ids)
		}
		list, err := h.e.Schedules(h.ctx)
		if err != nil || len(list) != 2 || list[1].ID != "latest" || !list[1].NextAt.Equal(time.Date(2030, 1, 2, 3, 35, 0, 0, time.UTC)) {
			t.Errorf("schedules = %+v, %v; want latest next at 03:35", list, err)
		}
		if found, err := h.e.Unschedule(h.ctx, "latest"); err != nil || !found {
			t.Errorf("Unschedule = %v, %v", found, err)
		}
		h.clock.Advance(time.Hour)
		h.drain(h.e, wf)
		if ids := h.scheduledRuns("latest"); len(ids) != 1 {
			t.Errorf("after unschedule the schedule started %v, want nothing more", ids)
		}
	})
}

// TestBadSchedules: a cron expression that does not parse, never ticks,
// steps by less than a second or names a time zone, an empty id or
// an input that is not JSON is an InvalidInput error naming it; nothing is
// stored.
func TestBadSchedules(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("report", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		wantErrContains(t, ScheduleRuns(h.ctx, h.e, def, "x", "every day", "in", ScheduleOptions{}), task.InvalidInput,
			`schedule "x"`, `"every day"`, "hint", "@every 30s")
		wantErrContains(t, ScheduleRuns(h.ctx, h.e, def, "x", "61 * * * *", "in", ScheduleOptions{}), task.InvalidInput, `"61 * * * *"`)
		wantErrContains(t, ScheduleRuns(h.ctx, h.e, def, "", "@daily", "in", ScheduleOptions{}), task.InvalidInput, "schedule id")
		wantErrContains(t, h.e.ScheduleJSON(h.ctx, def.Erase(), "x", "@daily", "{not json", ScheduleOptions{}), task.InvalidInput, "schedule \"x\"")
		for _, c := range []struct{ expr, why string }{
			{"0 0 30 2 *", "never ticks"},
			{"0 0 31 4,6,9,11 *", "never ticks"},
			{"@every 0s", "less than one second"},
			{"@every -1s", "less than one second"},
			{"@every 500ms", "less than one second"},
			{"TZ=0", "time zone"},
			{"CRON_TZ=", "time zone"},
			{"CRON_TZ=Europe/Paris 0 9 * * *", "time zone"},
			{" TZ=UTC 0 9 * * *", "time zone"},
		} {
			wantErrContains(t, ScheduleRuns(h.ctx, h.e, def, "x", c.expr, "in", ScheduleOptions{}), task.InvalidInput,
				`schedule "x"`, fmt.Sprintf("%q", c.expr), c.why, "hint")
		}
		if list, err := h.e.Schedules(h.ctx); err != nil || len(list) != 0 {
			t.Errorf("schedules = %v, %v; want none", list, err)
		}
	})
}

// TestScheduleStoredWithoutTick: a schedule stored with no next tick (as
// versions that accepted "0 0 30 2 *" stored it) starts no run, and the
// poll that finds it is looked at again an hour later, not at every poll.
func TestScheduleStoredWithoutTick(t *testing.T) {
	dbtest.ForEachDriver(t, func(t *testing.T, driver string, d *db.DB) {
		h := newHarness(t, d)
		def := Register("report", str, str, func(c *Ctx, in string) task.Task[string] { return task.Succeed(in) })
		for _, s := range []store.Schedule{
			{ID: "feb30", Workflow: "report", Version: 1, Cron: "0 0 30 2 *", Input: `"in"`},
			{ID: "zero", Workflow: "report", Version: 1, Cron: "@daily", Input: `"in"`},
		} {
			if _, err := h.e.store.PutSchedule(h.ctx, s, h.e.now(), func(time.Time) time.Time { return time.Time{} }); err != nil {
				t.Fatal(err)
			}
		}
		h.clock.Advance(time.Minute)
		h.drain(h.e, def.Erase())
		if ids := append(h.scheduledRuns("feb30"), h.scheduledRuns("zero")...); len(ids) != 0 {
			t.Errorf("schedules without a tick started %v, want nothing", ids)
		}
		list, err := h.e.Schedules(h.ctx)
		if err != nil || len(list) != 2 {
			t.Fatalf("schedules = %+v, %v; want 2", list, err)
		}
		for _, s := range list {
			if want := h.e.now().Add(time.Hour); !s.NextAt.Equal(want) {
				t.Errorf("schedule %s next at %v, want %v (looked at again in an hour)", s.ID, s.NextAt, want)
			}
		}
	})
}

// FuzzParseCron: no expression makes the parser panic (the recover guard
// must never be what catches it), and every accepted expression ticks
// after now, and again after that tick.
func FuzzParseCron(f *testing.F) {
	for _, seed := range []string{
		"0 9 * * *", "*/5 * * * *", "@daily", "@every 30s", "@every 0s", "@every -1s", "0 0 30 2 *",
		"TZ=0", "CRON_TZ=", "CRON_TZ=UTC 0 9 * * *", "TZ=", "", " ", "@", "@every", "@every ", "* * * * * *",
		"0-59/0 * * * *", "1-0 * * * *", "? ? ? ? ?", "0 0 29 2 *", "0 0 L * *", "JAN-DEC * * * *", "0 0 * * MON-FRI",
	} {
		f.Add(seed)
	}
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, expr string) {
		sched, err := parseCron("f", expr, now)
		if err != nil {
			if strings.Contains(err.Error(), "panicked") {
				t.Fatalf("parseCron(%q) panicked: %v", expr, err)
			}
			return
		}
		next := sched.Next(now)
		if !next.After(now) || !sched.Next(next).After(next) {
			t.Fatalf("parseCron(%q) accepted an expression whose ticks do not advance: %v then %v", expr, next, sched.Next(next))
		}
	})
}
