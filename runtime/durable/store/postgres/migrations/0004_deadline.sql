-- 0004 deadline: a run started with a deadline (Durable.startWith,
-- Engine.StartWith) records when it ends timed_out, the new status the CHECK
-- admits.
ALTER TABLE _sky_durable_runs ADD COLUMN deadline_at TIMESTAMPTZ;
ALTER TABLE _sky_durable_runs DROP CONSTRAINT _sky_durable_runs_status_ck;
ALTER TABLE _sky_durable_runs ADD CONSTRAINT _sky_durable_runs_status_ck
  CHECK (status IN ('waiting','running','done','failed','dead','cancelled','timed_out'));
-- The deadline sweep (Store.TimeOutRuns) reads the unfinished runs with a
-- deadline, most overdue first.
CREATE INDEX _sky_durable_runs_deadline ON _sky_durable_runs (deadline_at)
  WHERE deadline_at IS NOT NULL AND status NOT IN ('done','dead','cancelled','timed_out');
