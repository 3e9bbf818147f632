package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

const sqliteScheduleColumns = `id, workflow, version, cron, input, catch_up, next_at, COALESCE(last_run_id, ''), created_at, updated_at`

func sqliteScheduleScanner(scan func(...any) error) (store.Schedule, error) {
	var s store.Schedule
	var next, created, updated int64
	err := scan(&s.ID, &s.Workflow, &s.Version, &s.Cron, &s.Input, &s.CatchUp, &next, &s.LastRunID, &created, &updated)
	s.NextAt, s.CreatedAt, s.UpdatedAt = store.FromMs(next), store.FromMs(created), store.FromMs(updated)
	return s, err
}

// sqlitePutSchedule keeps the pending tick when the cron expression is the
// same.
const sqlitePutSchedule = `
INSERT INTO _sky_durable_schedules AS s (id, workflow, version, cron, input, catch_up, next_at, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET workflow = excluded.workflow, version = excluded.version, input = excluded.input,
  catch_up = excluded.catch_up, next_at = CASE WHEN s.cron = excluded.cron THEN s.next_at ELSE excluded.next_at END,
  cron = excluded.cron, updated_at = excluded.updated_at
RETURNING ` + sqliteScheduleColumns

func (s *Store) PutSchedule(ctx context.Context, sc store.Schedule, now time.Time, next func(time.Time) time.Time) (store.Schedule, error) {
	s.hook("schedule", sqlitePutSchedule)
	out, err := store.QueryAll(ctx, s.d, sqlitePutSchedule,
		[]any{sc.ID, sc.Workflow, sc.Version, sc.Cron, sc.Input, sc.CatchUp, ms(next(now)), ms(now), ms(now)}, sqliteScheduleScanner)
	if err != nil || len(out) == 0 {
		return store.Schedule{}, err
	}
	return out[0], nil
}

const sqliteDeleteSchedule = `DELETE FROM _sky_durable_schedules WHERE id = ?`

func (s *Store) DeleteSchedule(ctx context.Context, id string) (bool, error) {
	n, err := s.exec(ctx, s.d, "schedule", sqliteDeleteSchedule, id)
	return n == 1, err
}

const sqliteListSchedules = `SELECT ` + sqliteScheduleColumns + ` FROM _sky_durable_schedules ORDER BY id`

// sqliteWorkflowNames: see store.WorkflowNamesSQL.
const sqliteWorkflowNames = store.WorkflowNamesSQL

func (s *Store) WorkflowNames(ctx context.Context) ([]string, error) {
	s.hook("workflows", sqliteWorkflowNames)
	return store.QueryStrings(ctx, s.d, sqliteWorkflowNames, nil)
}

func (s *Store) ListSchedules(ctx context.Context) ([]store.Schedule, error) {
	s.hook("schedule", sqliteListSchedules)
	return store.QueryAll(ctx, s.d, sqliteListSchedules, nil, sqliteScheduleScanner)
}

const sqliteDueSchedules = `SELECT ` + sqliteScheduleColumns + ` FROM _sky_durable_schedules
 WHERE next_at <= ? AND workflow IN (SELECT value FROM json_each(?)) ORDER BY next_at LIMIT 16`

const sqliteScheduleFired = `
UPDATE _sky_durable_schedules SET next_at = ?, last_run_id = COALESCE(?, last_run_id), updated_at = ? WHERE id = ?`

// FireSchedules reads the due schedules first without the writer lock (one
// indexed read when nothing is due), then fires them in one transaction,
// reading them again there: another worker may have fired them meanwhile.
func (s *Store) FireSchedules(ctx context.Context, workflows []string, now time.Time, plan func(store.Schedule, time.Time) store.SchedulePlan) (int, error) {
	if len(workflows) == 0 {
		return 0, nil
	}
	names, _ := json.Marshal(workflows)
	args := []any{ms(now), string(names)}
	s.hook("schedule", sqliteDueSchedules)
	due, err := store.QueryAll(ctx, s.d, sqliteDueSchedules, args, sqliteScheduleScanner)
	if err != nil || len(due) == 0 {
		return 0, err
	}
	started := 0
	err = s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		started = 0
		s.hook("schedule", sqliteDueSchedules)
		due, err := store.QueryAll(ctx, tx, sqliteDueSchedules, args, sqliteScheduleScanner)
		if err != nil {
			return err
		}
		for _, sc := range due {
			p := plan(sc, now)
			var last any
			for _, tick := range p.Ticks {
				r := store.NewRun{ID: store.RunIDOf(sc.ID, tick), Workflow: sc.Workflow, Version: sc.Version, Input: sc.Input, LimitKey: p.LimitKey}
				n, err := s.exec(ctx, tx, "schedule", sqliteInsertRun, sqliteInsertArgs(r, now)...)
				if err != nil {
					return err
				}
				started += int(n)
				last = r.ID
			}
			if _, err := s.exec(ctx, tx, "schedule", sqliteScheduleFired, ms(p.Next), last, ms(now), sc.ID); err != nil {
				return err
			}
		}
		return nil
	})
	return started, err
}
