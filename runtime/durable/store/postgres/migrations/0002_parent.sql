-- 0002 parent: a child run (Durable.startChild) records the run that started
-- it; `sky durable ls --parent ID` lists a run's children from this index.
ALTER TABLE _sky_durable_runs ADD COLUMN parent_id TEXT;
CREATE INDEX _sky_durable_runs_parent ON _sky_durable_runs (parent_id, created_at, id) WHERE parent_id IS NOT NULL;
