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
const pgPutSchedule = pgClock + `
INSERT INTO _sky_durable_schedules AS s (id, workflow, version, cron, input, catch_up, next_at, created_at, updated_at)
SELECT ?, ?, ?, ?, ?, ?, CAST(? AS TIMESTAMPTZ), clock.now, clock.now FROM clock
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

func (s *Store) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	s.hook("schedule", pgListSchedules)
	return store.QueryAll(ctx, s.d, pgListSchedules, nil, pgScheduleScanner)
}

const pgNextScheduleAt = `SELECT min(next_at) FROM _sky_durable_schedules WHERE workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))`

func (s *Store) NextScheduleAt(ctx context.Context, workflows []string) (time.Time, error) {
	var at *time.Time
	s.hook("schedule", pgNextScheduleAt)
	if err := s.d.QueryRow(ctx, pgNextScheduleAt, jsonText(workflows)).Scan(&at); err != nil || at == nil {
		return time.Time{}, err
	}
	return *at, nil
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

// FireSchedules costs one indexed query when nothing is due; each due
// schedule adds one insert per tick started and one update.
func (s *Store) FireSchedules(ctx context.Context, workflows []string, now time.Time, ticks func(store.Schedule, time.Time) ([]time.Time, time.Time)) (int, error) {
	if len(workflows) == 0 {
		return 0, nil
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
			times, next := ticks(sc, at)
			var last any
			for _, tick := range times {
				id := store.RunIDOf(sc.ID, tick)
				n, err := s.exec(ctx, tx, "schedule", pgInsertRun, clockArg(now), id, sc.Workflow, sc.Version, sc.Input, "", 0, nil)
				if err != nil {
					return err
				}
				started += int(n)
				last = id
			}
			if _, err := s.exec(ctx, tx, "schedule", pgScheduleFired, clockArg(now), next, last, sc.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return started, err
}
