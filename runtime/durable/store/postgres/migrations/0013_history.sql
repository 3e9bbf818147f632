-- 0013 history: what happened to each run, one row an event (store/history.go).
-- The run row counts its events (history_count); event n is stored at
-- position n, and the statement that records event n of a run with more than
-- 100 deletes event n - 80, so a run keeps its first 20 and last 80 events.
-- Adding a column with a constant default rewrites nothing.
ALTER TABLE _sky_durable_runs ADD COLUMN history_count INT NOT NULL DEFAULT 0;
CREATE TABLE _sky_durable_history (
  run_id  TEXT NOT NULL,
  pos     INT NOT NULL,
  at      TIMESTAMPTZ NOT NULL,
  kind    TEXT NOT NULL,
  actor   TEXT NOT NULL,
  attempt INT NOT NULL,
  detail  TEXT NOT NULL,
  step    TEXT NOT NULL,
  PRIMARY KEY (run_id, pos)
);
