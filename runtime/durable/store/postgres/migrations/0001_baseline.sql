-- 0001 baseline: the tables of the spec with its exact column names and
-- types, plus what the engine needs (lease token, claimant, workflow version,
-- journal order and entry kind, the status CHECK, the claim and listing
-- indexes). It is idempotent and adopts, in place, a database made by the
-- releases before versioned migrations (which ran this script on every
-- start): columns and constraints are added if missing, an older due index
-- (WHERE status IN the claimable statuses) is replaced, journal seq is
-- backfilled.
CREATE TABLE IF NOT EXISTS _sky_durable_runs (
  id             TEXT PRIMARY KEY,
  workflow       TEXT NOT NULL,
  status         TEXT NOT NULL,
  input          TEXT NOT NULL,
  output         TEXT,
  attempts       INT  NOT NULL DEFAULT 0,
  wake_at        TIMESTAMPTZ NOT NULL,
  waiting_signal TEXT,
  last_error     TEXT NOT NULL DEFAULT '',
  claimed_at     TIMESTAMPTZ,
  created_at     TIMESTAMPTZ NOT NULL,
  updated_at     TIMESTAMPTZ NOT NULL
);
ALTER TABLE _sky_durable_runs ADD COLUMN IF NOT EXISTS version INT NOT NULL DEFAULT 1;
ALTER TABLE _sky_durable_runs ADD COLUMN IF NOT EXISTS lease_token TEXT;
ALTER TABLE _sky_durable_runs ADD COLUMN IF NOT EXISTS claimed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE _sky_durable_runs ADD COLUMN IF NOT EXISTS compacted_at TIMESTAMPTZ;
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conname = '_sky_durable_runs_status_ck') THEN
    ALTER TABLE _sky_durable_runs ADD CONSTRAINT _sky_durable_runs_status_ck
      CHECK (status IN ('waiting','running','done','failed','dead','cancelled'));
  END IF;
END $$;
DROP INDEX IF EXISTS _sky_durable_runs_created;
CREATE INDEX IF NOT EXISTS _sky_durable_runs_list ON _sky_durable_runs (created_at, id);
CREATE INDEX IF NOT EXISTS _sky_durable_runs_status_list ON _sky_durable_runs (status, created_at, id);
CREATE INDEX IF NOT EXISTS _sky_durable_runs_compactable ON _sky_durable_runs (created_at)
  WHERE status IN ('done','cancelled') AND compacted_at IS NULL;
DROP INDEX IF EXISTS _sky_durable_runs_workflow_list;
CREATE INDEX IF NOT EXISTS _sky_durable_runs_workflow_status_list ON _sky_durable_runs (workflow, status, created_at, id);
-- The due index's predicate names the statuses a run leaves it in, not the
-- ones it stays in: see pgClaimWhere for why. An index of an older schema
-- (WHERE status IN the claimable ones) is replaced.
DO $$ BEGIN
  IF EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = '_sky_durable_runs_due'
              AND indexdef NOT LIKE '%<> ALL%') THEN
    DROP INDEX _sky_durable_runs_due;
  END IF;
END $$;
CREATE INDEX IF NOT EXISTS _sky_durable_runs_due ON _sky_durable_runs (wake_at)
  WHERE status NOT IN ('done','dead','cancelled');

CREATE TABLE IF NOT EXISTS _sky_durable_journal (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  result     TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (run_id, step_id)
);
ALTER TABLE _sky_durable_journal ADD COLUMN IF NOT EXISTS kind TEXT NOT NULL DEFAULT 'step';
ALTER TABLE _sky_durable_journal ADD COLUMN IF NOT EXISTS seq INT;
UPDATE _sky_durable_journal j SET seq = n.rn
  FROM (SELECT run_id, step_id, row_number() OVER (PARTITION BY run_id ORDER BY created_at, step_id) AS rn
          FROM _sky_durable_journal) n
 WHERE j.seq IS NULL AND j.run_id = n.run_id AND j.step_id = n.step_id;
ALTER TABLE _sky_durable_journal ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS _sky_durable_journal_order ON _sky_durable_journal (run_id, seq);

CREATE TABLE IF NOT EXISTS _sky_durable_signals (
  run_id     TEXT NOT NULL,
  name       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  delivered  BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (run_id, name)
);

CREATE TABLE IF NOT EXISTS _sky_durable_snapshot (
  id         TEXT PRIMARY KEY,
  seq        BIGINT NOT NULL,
  data       TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);
