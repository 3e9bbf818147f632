package postgres

import (
	"context"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

const pgScheduleColumns = `id, workflow, version, cron, input, catch_up, next_at, COALESCE(last_run_id, ''), created_at, updated_at`

func pgScheduleScanner(scan func(...any) error) (store.Schedule, error) {
	var s store.Schedule
	err := scan(&s.ID, &s.Workflow, &s.Version, &s.Cron, &s.Input, &s.CatchUp, &s.NextAt, &s.LastRunID, &s.CreatedAt, &s.UpdatedAt)
	return s, err
}

const pgNow = `SELECT clock_timestamp()`

// pgPutSchedule keeps the pending tick when the cron expression is the same.
// It sends a wake-up hint with no run id (store.HintChannel, delivered when
// it commits), so an idle worker of another process, which skips its probes
// until the first thing it knows of falls due (Engine.background), probes
// again and learns of the tick.
const pgPutSchedule = pgClock + `,
hint AS (SELECT pg_notify('` + store.HintChannel + `', ''))
INSERT INTO _sky_durable_schedules AS s (id, workflow, version, cron, input, catch_up, next_at, created_at, updated_at)
SELECT ?, ?, ?, ?, ?, ?, CAST(? AS TIMESTAMPTZ), clock.now, clock.now FROM clock, hint
ON CONFLICT (id) DO UPDATE SET workflow = EXCLUDED.workflow, version = EXCLUDED.version, input = EXCLUDED.input,
  catch_up = EXCLUDED.catch_up, next_at = CASE WHEN s.cron = EXCLUDED.cron THEN s.next_at ELSE EXCLUDED.next_at END,
  cron = EXCLUDED.cron, updated_at = EXCLUDED.updated_at
RETURNING ` + pgScheduleColumns

func (s *Store) PutSchedule(ctx context.Context, sc store.Schedule, now time.Time, next func(time.Time) time.Time) (store.Schedule, error) {
	at := now
	if at.IsZero() {
		s.hook("schedule", pgNow)
		if err := s.d.QueryRow(ctx, pgNow).Scan(&at); err != nil {
			return store.Schedule{}, err
		}
	}
	s.hook("schedule", pgPutSchedule)
	out, err := store.QueryAll(ctx, s.d, pgPutSchedule, []any{clockArg(now), sc.ID, sc.Workflow, sc.Version, sc.Cron, sc.Input, sc.CatchUp, next(at)}, pgScheduleScanner)
	if err != nil || len(out) == 0 {
		return store.Schedule{}, err
	}
	return out[0], nil
}

const pgDeleteSchedule = `DELETE FROM _sky_durable_schedules WHERE id = ?`

func (s *Store) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	n, err := s.exec(ctx, s.d, "schedule", pgDeleteSchedule, id)
	return n == 1, err
}

const pgListSchedules = `SELECT ` + pgScheduleColumns + ` FROM _sky_durable_schedules ORDER BY id`

// pgWorkflowNames: see store.WorkflowNamesSQL.
const pgWorkflowNames = store.WorkflowNamesSQL

func (s *Store) WorkflowNames(ctx context.Context) ([]string, error) {
	s.hook("workflows", pgWorkflowNames)
	return store.QueryStrings(ctx, s.d, pgWorkflowNames, nil)
}

func (s *Store) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	s.hook("schedule", pgListSchedules)
	return store.QueryAll(ctx, s.d, pgListSchedules, nil, pgScheduleScanner)
}

// pgDueSchedules locks the due schedules of the workflows (up to 16 per
// transaction), on the due index, skipping those another worker is firing.
const pgDueSchedules = pgClock + `
SELECT clock.now, ` + pgScheduleColumns + `
  FROM clock, _sky_durable_schedules
 WHERE next_at <= (SELECT now FROM clock) AND workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
 ORDER BY next_at
 LIMIT 16
   FOR UPDATE OF _sky_durable_schedules SKIP LOCKED`

const pgScheduleFired = pgClock + `
UPDATE _sky_durable_schedules s SET next_at = ?, last_run_id = COALESCE(CAST(? AS TEXT), s.last_run_id), updated_at = clock.now
  FROM clock WHERE s.id = ?`

// pgAnyScheduleDue is the read FireSchedules starts with, outside a
// transaction.
const pgAnyScheduleDue = pgClock + `
SELECT EXISTS (SELECT 1 FROM _sky_durable_schedules
                WHERE next_at <= (SELECT now FROM clock) AND workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB))))`

// FireSchedules costs one indexed query (one round trip) when nothing is
// due; otherwise a transaction that locks the due schedules and adds one
// insert per tick started and one update per schedule.
func (s *Store) FireSchedules(ctx context.Context, workflows []string, now time.Time, plan func(store.Schedule, time.Time) store.SchedulePlan) (int, error) {
	if len(workflows) == 0 {
		return 0, nil
	}
	var due bool
	s.hook("schedule", pgAnyScheduleDue)
	if err := s.d.QueryRow(ctx, pgAnyScheduleDue, clockArg(now), jsonText(workflows)).Scan(&due); err != nil || !due {
		return 0, err
	}
	started := 0
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		started = 0
		var at time.Time
		s.hook("schedule", pgDueSchedules)
		due, err := store.QueryAll(ctx, tx, pgDueSchedules, []any{clockArg(now), jsonText(workflows)}, func(scan func(...any) error) (store.Schedule, error) {
			var sc store.Schedule
			err := scan(&at, &sc.ID, &sc.Workflow, &sc.Version, &sc.Cron, &sc.Input, &sc.CatchUp, &sc.NextAt, &sc.LastRunID, &sc.CreatedAt, &sc.UpdatedAt)
			return sc, err
		})
		if err != nil {
			return err
		}
		for _, sc := range due {
			p := plan(sc, at)
			var last any
			for _, tick := range p.Ticks {
				r := store.NewRun{ID: store.RunIDOf(sc.ID, tick), Workflow: sc.Workflow, Version: sc.Version, Input: sc.Input, LimitKey: p.LimitKey}
				n, err := s.exec(ctx, tx, "schedule", pgInsertRun, s.insertArgs(r, now)...)
				if err != nil {
					return err
				}
				started += int(n)
				last = r.ID
			}
			if _, err := s.exec(ctx, tx, "schedule", pgScheduleFired, clockArg(now), p.Next, last, sc.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return started, err
}
