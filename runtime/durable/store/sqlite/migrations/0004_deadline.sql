-- 0004 deadline: a run started with a deadline (Durable.startWith,
-- Engine.StartWith) records when it ends timed_out, the new status the CHECK
-- admits. SQLite cannot alter a CHECK, so the table's stored definition is
-- edited in place (writable_schema): the change only widens the set of
-- statuses, which every stored row already satisfies, and changes nothing on
-- disk. writable_schema = RESET turns the edit off again and makes this
-- connection read the new definition; the CREATE INDEX after it bumps the
-- schema version, so every other connection reads it too.
ALTER TABLE _sky_durable_runs ADD COLUMN deadline_at INTEGER;
PRAGMA writable_schema = ON;
UPDATE sqlite_master
   SET sql = replace(sql, '''dead'',''cancelled'')', '''dead'',''cancelled'',''timed_out'')')
 WHERE type = 'table' AND name = '_sky_durable_runs';
PRAGMA writable_schema = RESET;
-- A status CHECK written otherwise (its list still ends with 'cancelled')
-- fails the migration here, and rolls it back, rather than refusing the
-- first run that times out. A table made by the spec's DDL has no CHECK (the
-- baseline cannot add one on SQLite) and passes.
CREATE TEMP TABLE _sky_durable_check_0004 (
  stale INTEGER CONSTRAINT the_runs_status_check_admits_timed_out CHECK (stale = 0));
INSERT INTO _sky_durable_check_0004
  SELECT COUNT(*) FROM sqlite_master
   WHERE type = 'table' AND name = '_sky_durable_runs' AND sql LIKE '%''cancelled'')%';
DROP TABLE _sky_durable_check_0004;
-- The deadline sweep (Store.TimeOutRuns) reads the unfinished runs with a
-- deadline, most overdue first.
CREATE INDEX _sky_durable_runs_deadline ON _sky_durable_runs (deadline_at)
  WHERE deadline_at IS NOT NULL AND status IN ('waiting','running','failed');
