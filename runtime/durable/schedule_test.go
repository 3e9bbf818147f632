package durable

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
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

// TestBadSchedules: a cron expression that does not parse, an empty id or
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
		if list, err := h.e.Schedules(h.ctx); err != nil || len(list) != 0 {
			t.Errorf("schedules = %v, %v; want none", list, err)
		}
	})
}
