-- 0001 baseline: the tables of the spec (times as INTEGER Unix milliseconds),
-- what the engine needs, the claim and listing indexes, and the trigger that
-- renews a run's lease whenever its worker journals an entry (so a fresh step
-- is one INSERT). Idempotent: it adopts a database made by the releases before
-- versioned migrations, after Store.adoptUnversioned added the columns such a
-- database may lack.
CREATE TABLE IF NOT EXISTS _sky_durable_runs (
  id             TEXT PRIMARY KEY,
  workflow       TEXT NOT NULL,
  status         TEXT NOT NULL CHECK (status IN ('waiting','running','done','failed','dead','cancelled')),
  input          TEXT NOT NULL,
  output         TEXT,
  attempts       INTEGER NOT NULL DEFAULT 0,
  wake_at        INTEGER NOT NULL,
  waiting_signal TEXT,
  last_error     TEXT NOT NULL DEFAULT '',
  claimed_at     INTEGER,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  version        INTEGER NOT NULL DEFAULT 1,
  lease_token    TEXT,
  claimed_by     TEXT NOT NULL DEFAULT '',
  compacted_at   INTEGER
);
CREATE TABLE IF NOT EXISTS _sky_durable_journal (
  run_id     TEXT NOT NULL,
  step_id    TEXT NOT NULL,
  result     TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  kind       TEXT NOT NULL DEFAULT 'step',
  seq        INTEGER,
  PRIMARY KEY (run_id, step_id)
);
CREATE TABLE IF NOT EXISTS _sky_durable_signals (
  run_id     TEXT NOT NULL,
  name       TEXT NOT NULL,
  payload    TEXT NOT NULL,
  delivered  BOOLEAN NOT NULL DEFAULT FALSE,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS _sky_durable_snapshot (
  id         TEXT PRIMARY KEY,
  seq        INTEGER NOT NULL,
  data       TEXT NOT NULL,
  updated_at INTEGER NOT NULL
);
UPDATE _sky_durable_journal SET seq = (
  SELECT n.rn FROM (SELECT run_id, step_id, row_number() OVER (PARTITION BY run_id ORDER BY created_at, step_id) AS rn
                      FROM _sky_durable_journal) n
   WHERE n.run_id = _sky_durable_journal.run_id AND n.step_id = _sky_durable_journal.step_id)
 WHERE seq IS NULL;
CREATE UNIQUE INDEX IF NOT EXISTS _sky_durable_journal_order ON _sky_durable_journal (run_id, seq);
CREATE INDEX IF NOT EXISTS _sky_durable_runs_due ON _sky_durable_runs (wake_at)
  WHERE status IN ('waiting','running','failed');
DROP INDEX IF EXISTS _sky_durable_runs_created;
CREATE INDEX IF NOT EXISTS _sky_durable_runs_list ON _sky_durable_runs (created_at, id);
CREATE INDEX IF NOT EXISTS _sky_durable_runs_status_list ON _sky_durable_runs (status, created_at, id);
CREATE INDEX IF NOT EXISTS _sky_durable_runs_compactable ON _sky_durable_runs (created_at)
  WHERE status IN ('done','cancelled') AND compacted_at IS NULL;
DROP INDEX IF EXISTS _sky_durable_runs_workflow_list;
CREATE INDEX IF NOT EXISTS _sky_durable_runs_workflow_status_list ON _sky_durable_runs (workflow, status, created_at, id);
CREATE TRIGGER IF NOT EXISTS _sky_durable_journal_renews_lease AFTER INSERT ON _sky_durable_journal
BEGIN
  UPDATE _sky_durable_runs SET claimed_at = NEW.created_at, updated_at = NEW.created_at
   WHERE id = NEW.run_id AND lease_token IS NOT NULL;
END;
