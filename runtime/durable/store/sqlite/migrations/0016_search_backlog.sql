-- 0016 search backlog: a run that finishes enters the search index (0013)
-- in the background, not in the statement that finishes it. FTS5 writes a
-- new segment and its bookkeeping at every commit that adds a document:
-- about 8 of the 37 pages a 3-step run wrote to the WAL (BenchmarkWALPages,
-- docs/benchmarks.md). Now the statement that finishes a run adds one row
-- to the backlog; Store.IndexSearch, called by the workers' background pass
-- when the probe finds a backlog, moves the backlog into the index 500 runs
-- a transaction. A search tests the runs in the backlog row by row, as it
-- does the unfinished ones, so it finds a run the moment it finishes.
--
-- Invariant: a finished run has a document or a backlog row, never both;
-- an unfinished run has neither.
CREATE TABLE _sky_durable_search_backlog (
  run_id TEXT PRIMARY KEY
) WITHOUT ROWID;

DROP TRIGGER _sky_durable_search_insert;
DROP TRIGGER _sky_durable_search_update;
DROP TRIGGER _sky_durable_search_delete;

CREATE TRIGGER _sky_durable_search_insert AFTER INSERT ON _sky_durable_runs
WHEN NEW.status IN ('done','dead','cancelled','timed_out')
BEGIN
  INSERT OR IGNORE INTO _sky_durable_search_backlog (run_id) VALUES (NEW.id);
END;

-- A run finishing: into the backlog, and nothing else (the common case,
-- so the FTS5 table is not opened).
CREATE TRIGGER _sky_durable_search_finish AFTER UPDATE OF status ON _sky_durable_runs
WHEN OLD.status NOT IN ('done','dead','cancelled','timed_out')
 AND NEW.status IN ('done','dead','cancelled','timed_out')
BEGIN
  INSERT OR IGNORE INTO _sky_durable_search_backlog (run_id) VALUES (NEW.id);
END;

-- A finished run leaving the finished ones (a retry, a rewind) or changing
-- among them (a new status, input, output or error): its document or
-- backlog row goes; if it is still finished, it waits in the backlog
-- again.
CREATE TRIGGER _sky_durable_search_update AFTER UPDATE OF status, input, output, last_error ON _sky_durable_runs
WHEN OLD.status IN ('done','dead','cancelled','timed_out')
 AND (OLD.status IS NOT NEW.status OR OLD.input IS NOT NEW.input OR OLD.output IS NOT NEW.output
      OR OLD.last_error IS NOT NEW.last_error)
BEGIN
  DELETE FROM _sky_durable_search WHERE rowid = (SELECT doc FROM _sky_durable_search_docs WHERE run_id = OLD.id);
  DELETE FROM _sky_durable_search_docs WHERE run_id = OLD.id;
  DELETE FROM _sky_durable_search_backlog WHERE run_id = OLD.id;
  INSERT INTO _sky_durable_search_backlog (run_id)
  SELECT NEW.id WHERE NEW.status IN ('done','dead','cancelled','timed_out');
END;

CREATE TRIGGER _sky_durable_search_delete AFTER DELETE ON _sky_durable_runs
WHEN OLD.status IN ('done','dead','cancelled','timed_out')
BEGIN
  DELETE FROM _sky_durable_search WHERE rowid = (SELECT doc FROM _sky_durable_search_docs WHERE run_id = OLD.id);
  DELETE FROM _sky_durable_search_docs WHERE run_id = OLD.id;
  DELETE FROM _sky_durable_search_backlog WHERE run_id = OLD.id;
END;
