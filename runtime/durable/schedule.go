package durable

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Schedules: a schedule starts one run of its workflow at each tick of a
// cron expression, parsed by github.com/robfig/cron/v3 (5 fields, UTC, plus
// descriptors such as @daily and @every 30s) behind parseCron's guard. Poll fires the ticks itself:
// no extra process. Each tick's run id is "<schedule id>@<tick time>", so a
// tick starts one run however many workers fire it.

// Schedule is a schedule as stored (`sky durable schedules`).
type Schedule = store.Schedule

// ScheduleOptions tune a schedule (Sky's Durable.scheduleWith).
type ScheduleOptions struct {
	// CatchUp starts a run for every tick missed while no worker polled
	// (at most MaxCatchUp, the latest ones); by default only the latest
	// missed tick is started.
	CatchUp bool
}

// MaxCatchUp bounds the runs one catching-up schedule starts at once.
const MaxCatchUp = 1000

// ScheduleCheckInterval is how often a worker's Poll looks for due ticks
// (one indexed query); a tick fires at most this late after its time when
// workers poll steadily.
const ScheduleCheckInterval = time.Second

// cronHint ends every refused expression's error.
const cronHint = `hint: 5 fields in UTC (minute hour day-of-month month day-of-week) such as "0 9 * * *", or @hourly, @daily, @every 30s`

// parseCron parses a schedule's expression and checks that it ticks after
// now, with an error naming it. robfig/cron is behind a guard: time zone
// prefixes (TZ=, CRON_TZ=, which panic in v3.0.1 on some inputs) and
// @every below one second (which it would turn into 1s) are refused before
// it sees them, and a panic it still raises becomes an error.
func parseCron(id, expr string, now time.Time) (sched cron.Schedule, err error) {
	refuse := func(why string) error {
		return task.Errorf(task.InvalidInput, "durable: schedule %q: the cron expression %q %s; %s", id, expr, why, cronHint)
	}
	defer func() {
		if r := recover(); r != nil {
			sched, err = nil, refuse(fmt.Sprintf("does not parse (the parser panicked: %v)", r))
		}
	}()
	if t := strings.TrimSpace(expr); strings.HasPrefix(t, "TZ=") || strings.HasPrefix(t, "CRON_TZ=") {
		return nil, refuse("names a time zone, and schedules run in UTC (write the hour in UTC)")
	}
	if d, ok := strings.CutPrefix(expr, "@every "); ok {
		if every, err := time.ParseDuration(d); err == nil && every < time.Second {
			return nil, refuse("steps by less than one second (@every needs 1s or more)")
		}
	}
	sched, err = cron.ParseStandard(expr)
	if err != nil {
		return nil, refuse(fmt.Sprintf("does not parse: %v", err))
	}
	if next := sched.Next(now.UTC()); !next.After(now) {
		return nil, refuse("never ticks (no such date in the next five years, e.g. 30 February)")
	}
	return sched, nil
}

// ScheduleRuns creates or updates schedule id of def (Sky's
// Durable.schedule): from now on, each tick of expr starts a run of def with
// input. It is idempotent on the id: declaring it again updates the
// workflow, input and options, and keeps the pending tick when expr is the
// same.
func ScheduleRuns[I, O any](ctx context.Context, e *Engine, def Def[I, O], id, expr string, input I, opts ScheduleOptions) error {
	js, err := def.in.Encode(input)
	if err != nil {
		return task.Errorf(task.InvalidInput, "durable: the input of schedule %q of workflow %q does not encode: %s", id, def.name, errText(err))
	}
	return e.ScheduleJSON(ctx, def.Erase(), id, expr, js, opts)
}

// ScheduleJSON is ScheduleRuns for a type-erased workflow and an input in
// JSON.
func (e *Engine) ScheduleJSON(ctx context.Context, w Workflow, id, expr, input string, opts ScheduleOptions) error {
	if err := checkName("the schedule id", id, func() string { return fmt.Sprintf(" (workflow %q)", w.Name) }, "a printable name such as \"daily-digest\""); err != nil {
		return err
	}
	if w.Name == "" {
		return task.Errorf(task.InvalidInput, "durable: schedule %q names no workflow", id)
	}
	sched, err := parseCron(id, expr, e.now())
	if err != nil {
		return err
	}
	if err := e.checkJSON(fmt.Sprintf("the input of schedule %q", id), input); err != nil {
		return err
	}
	if _, err := (runOptions{limits: w.Limits}).limitKey(w.Name, id, input); err != nil {
		return err
	}
	s := store.Schedule{ID: id, Workflow: w.Name, Version: max(w.Version, 1), Cron: expr, Input: input, CatchUp: opts.CatchUp}
	if _, err := e.store.PutSchedule(ctx, s, e.now(), func(t time.Time) time.Time { return sched.Next(t.UTC()) }); err != nil {
		return err
	}
	// This worker looks for due ticks at its next poll.
	e.flow.mu.Lock()
	e.flow.nextCheck = time.Time{}
	e.flow.mu.Unlock()
	e.log.Info("durable schedule declared", "schedule", id, "workflow", w.Name, "cron", expr)
	return nil
}

// Unschedule deletes schedule id (Sky's Durable.unschedule); runs it
// already started are not touched. found is false when there was none.
func (e *Engine) Unschedule(ctx context.Context, id string) (found bool, err error) {
	return e.store.DeleteSchedule(ctx, id)
}

// Schedules reads every schedule, by id, with its next tick.
func (e *Engine) Schedules(ctx context.Context) ([]Schedule, error) {
	return e.store.ListSchedules(ctx)
}

// scheduleCheckDue reports whether this engine should look for due
// schedule ticks now (at most once per ScheduleCheckInterval of its
// clock), and if so takes the look.
func (e *Engine) scheduleCheckDue() bool {
	now := e.localNow()
	e.flow.mu.Lock()
	defer e.flow.mu.Unlock()
	due := !now.Before(e.flow.nextCheck)
	if due {
		e.flow.nextCheck = now.Add(ScheduleCheckInterval)
	}
	return due
}

// fireSchedules starts the runs of the due ticks of the schedules of reg's
// workflows, batch after batch until none is due, and reports how many it
// started.
func (e *Engine) fireSchedules(ctx context.Context, reg *registry) (int, error) {
	plan := func(s store.Schedule, now time.Time) store.SchedulePlan {
		p := e.planTicks(s, now)
		key, err := runOptions{limits: reg.newest(s.Workflow).Limits}.limitKey(s.Workflow, s.ID, s.Input)
		if err != nil {
			e.log.Error("durable schedule tick started without its perKey key", "schedule", s.ID, "error", errText(err))
		}
		p.LimitKey = key
		return p
	}
	started := 0
	for {
		n, err := e.store.FireSchedules(ctx, reg.names, e.now(), plan)
		if err != nil || n == 0 {
			return started, err
		}
		started += n
		e.log.Info("durable schedule ticks started", "runs", n, "worker", e.worker)
	}
}

// maxTickSteps bounds the ticks planTicks walks through after a long
// outage; past it, the walk jumps to now.
const maxTickSteps = 1_000_000

// planTicks says which ticks of s to start at now: the latest due one (or,
// with CatchUp, every due one, at most MaxCatchUp) and the next one. A
// stored expression that no longer parses or ticks (it was checked when
// declared, but by an older version maybe) starts nothing and is looked at
// again in an hour; so does one whose next tick would not move forward.
func (e *Engine) planTicks(s store.Schedule, now time.Time) store.SchedulePlan {
	skip := func(err error) store.SchedulePlan {
		e.log.Error("durable schedule skipped", "schedule", s.ID, "error", errText(err))
		return store.SchedulePlan{Next: now.Add(time.Hour)}
	}
	sched, err := parseCron(s.ID, s.Cron, now)
	if err != nil {
		return skip(err)
	}
	var ticks []time.Time
	t := s.NextAt.UTC()
	for steps := 0; !t.After(now); steps++ {
		if t.IsZero() {
			return skip(fmt.Errorf("durable: schedule %q has no next tick stored; declare it again", s.ID))
		}
		if steps == maxTickSteps {
			t = sched.Next(now.UTC())
			break
		}
		ticks = append(ticks, t)
		if len(ticks) > MaxCatchUp {
			ticks = ticks[1:]
		}
		next := sched.Next(t)
		if !next.After(t) {
			return skip(fmt.Errorf("durable: schedule %q: the tick after %s of %q is %s, not later", s.ID, t.Format(time.RFC3339), s.Cron, next.Format(time.RFC3339)))
		}
		t = next
	}
	if !t.After(now) {
		return skip(fmt.Errorf("durable: schedule %q: %q has no tick after %s", s.ID, s.Cron, now.Format(time.RFC3339)))
	}
	if !s.CatchUp && len(ticks) > 1 {
		ticks = ticks[len(ticks)-1:]
	}
	return store.SchedulePlan{Ticks: ticks, Next: t}
}
