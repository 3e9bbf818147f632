-- 0006 flow: flow control and schedules (docs/durable.md, "Flow control" and
-- "Schedules"). Times are Unix milliseconds, as everywhere in this store.
--
-- priority orders the claim (higher first, then due time) on the claim
-- index; limit_key is the perKey key computed from the input at start.
ALTER TABLE _sky_durable_runs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
ALTER TABLE _sky_durable_runs ADD COLUMN limit_key TEXT;
CREATE INDEX _sky_durable_runs_claim ON _sky_durable_runs (priority DESC, wake_at)
  WHERE status IN ('waiting','running','failed');
CREATE INDEX _sky_durable_runs_running ON _sky_durable_runs (workflow, limit_key)
  WHERE status = 'running';

-- The declared limits of a workflow (the last declaration wins) and its rate
-- limit's state: the earliest time the next claim may happen.
CREATE TABLE _sky_durable_flow (
  workflow        TEXT PRIMARY KEY,
  concurrency     INTEGER,
  per_key         INTEGER,
  rate_per_second REAL,
  next_claim_at   INTEGER,
  updated_at      INTEGER NOT NULL
);

-- Every claim of a rate-limited workflow moves its next_claim_at on by one
-- interval, in the claim's own statement (SQLite has one writer at a time).
CREATE TRIGGER _sky_durable_runs_rate AFTER UPDATE OF lease_token ON _sky_durable_runs
WHEN NEW.lease_token IS NOT NULL AND NEW.lease_token IS NOT OLD.lease_token
BEGIN
  UPDATE _sky_durable_flow
     SET next_claim_at = max(COALESCE(next_claim_at, NEW.claimed_at), NEW.claimed_at) + CAST(ceil(1000.0 / rate_per_second) AS INTEGER)
   WHERE workflow = NEW.workflow AND rate_per_second IS NOT NULL;
END;

-- Schedules (Durable.schedule): each tick starts one run, id
-- "<id>@<tick time>"; next_at is the next tick to fire.
CREATE TABLE _sky_durable_schedules (
  id          TEXT PRIMARY KEY,
  workflow    TEXT NOT NULL,
  version     INTEGER NOT NULL,
  cron        TEXT NOT NULL,
  input       TEXT NOT NULL,
  catch_up    INTEGER NOT NULL DEFAULT 0,
  next_at     INTEGER NOT NULL,
  last_run_id TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX _sky_durable_schedules_due ON _sky_durable_schedules (next_at);
