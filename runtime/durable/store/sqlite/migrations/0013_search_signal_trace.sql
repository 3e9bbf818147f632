-- 0013 search and signal trace: `sky durable ls --search` and the dashboard's search box find
-- runs by a case-insensitive substring of their id, input, output or last
-- error (store.SearchSQL; PostgreSQL's migration 0015 does the same with a
-- trigram GIN index).
--
-- An FTS5 table with the trigram tokenizer holds the finished runs only
-- (done, dead, cancelled, timed_out): a run enters it once, when it ends,
-- and leaves it if an operator's retry or rewind makes it live again. It is
-- contentless (the text stays in the runs table only), so each document is
-- found again by its number: _sky_durable_search_docs maps a run to it (an
-- INTEGER PRIMARY KEY, which VACUUM keeps, unlike the runs table's rowid).
-- The triggers fire on a change of status, input, output or last_error
-- only: a step's lease renewal updates none of them, so a step costs what it
-- did.
CREATE TABLE _sky_durable_search_docs (
  doc    INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE
);
CREATE VIRTUAL TABLE _sky_durable_search USING fts5(
  id, input, output, last_error, content='', contentless_delete=1, tokenize='trigram');

INSERT INTO _sky_durable_search_docs (run_id)
SELECT id FROM _sky_durable_runs WHERE status IN ('done','dead','cancelled','timed_out');
INSERT INTO _sky_durable_search (rowid, id, input, output, last_error)
SELECT d.doc, r.id, r.input, COALESCE(r.output, ''), r.last_error
  FROM _sky_durable_search_docs d JOIN _sky_durable_runs r ON r.id = d.run_id;

CREATE TRIGGER _sky_durable_search_insert AFTER INSERT ON _sky_durable_runs
WHEN NEW.status IN ('done','dead','cancelled','timed_out')
BEGIN
  INSERT INTO _sky_durable_search_docs (run_id) VALUES (NEW.id);
  INSERT INTO _sky_durable_search (rowid, id, input, output, last_error)
  SELECT doc, NEW.id, NEW.input, COALESCE(NEW.output, ''), NEW.last_error
    FROM _sky_durable_search_docs WHERE run_id = NEW.id;
END;

-- A run entering, leaving or changing among the finished ones: its old
-- document (if any) goes, its new one (if finished) comes.
CREATE TRIGGER _sky_durable_search_update AFTER UPDATE OF status, input, output, last_error ON _sky_durable_runs
WHEN (OLD.status IN ('done','dead','cancelled','timed_out') OR NEW.status IN ('done','dead','cancelled','timed_out'))
 AND (OLD.status IS NOT NEW.status OR OLD.input IS NOT NEW.input OR OLD.output IS NOT NEW.output
      OR OLD.last_error IS NOT NEW.last_error)
BEGIN
  DELETE FROM _sky_durable_search WHERE rowid = (SELECT doc FROM _sky_durable_search_docs WHERE run_id = OLD.id);
  DELETE FROM _sky_durable_search_docs WHERE run_id = OLD.id;
  INSERT INTO _sky_durable_search_docs (run_id)
  SELECT NEW.id WHERE NEW.status IN ('done','dead','cancelled','timed_out');
  INSERT INTO _sky_durable_search (rowid, id, input, output, last_error)
  SELECT doc, NEW.id, NEW.input, COALESCE(NEW.output, ''), NEW.last_error
    FROM _sky_durable_search_docs WHERE run_id = NEW.id;
END;

CREATE TRIGGER _sky_durable_search_delete AFTER DELETE ON _sky_durable_runs
WHEN OLD.status IN ('done','dead','cancelled','timed_out')
BEGIN
  DELETE FROM _sky_durable_search WHERE rowid = (SELECT doc FROM _sky_durable_search_docs WHERE run_id = OLD.id);
  DELETE FROM _sky_durable_search_docs WHERE run_id = OLD.id;
END;

-- The W3C trace context of the span that sent a signal (NULL: none, or
-- telemetry off), written by the signal's own INSERT and read by the
-- statement that consumes it (PostgreSQL's migration 0015 adds the same).
ALTER TABLE _sky_durable_signals ADD COLUMN trace_context TEXT;
