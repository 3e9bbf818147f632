-- 0011 history: what happened to each run, one row an event (store/history.go;
-- PostgreSQL's migration 0013). The run row counts its events
-- (history_count); a statement that records an event adds one to it and
-- puts the event in history_note (a JSON array: kind, actor or null for the
-- run's worker, attempt, detail, step, time in ms), and the trigger below
-- inserts it in the same statement. Event n is stored at position n; event
-- n of a run with more than 100 deletes event n - 80, so a run keeps its
-- first 20 and last 80 events.
ALTER TABLE _sky_durable_runs ADD COLUMN history_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE _sky_durable_runs ADD COLUMN history_note TEXT;
CREATE TABLE _sky_durable_history (
  run_id  TEXT NOT NULL,
  pos     INTEGER NOT NULL,
  at      INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  actor   TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  detail  TEXT NOT NULL,
  step    TEXT NOT NULL,
  PRIMARY KEY (run_id, pos)
) WITHOUT ROWID;

CREATE TRIGGER _sky_durable_history_record AFTER UPDATE OF history_count ON _sky_durable_runs
  WHEN NEW.history_count > OLD.history_count
BEGIN
  INSERT INTO _sky_durable_history (run_id, pos, at, kind, actor, attempt, detail, step)
  VALUES (NEW.id, NEW.history_count, json_extract(NEW.history_note, '$[5]'), json_extract(NEW.history_note, '$[0]'),
          COALESCE(json_extract(NEW.history_note, '$[1]'), NEW.claimed_by, ''), json_extract(NEW.history_note, '$[2]'),
          json_extract(NEW.history_note, '$[3]'), json_extract(NEW.history_note, '$[4]'));
  DELETE FROM _sky_durable_history WHERE NEW.history_count > 100 AND run_id = NEW.id AND pos = NEW.history_count - 80;
END;
