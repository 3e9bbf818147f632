-- 0019 running keys: the index of running runs covers only those with a
-- limit key, which a perKey limit counts; a workflow's running runs, which
-- its concurrency limit counts, are read from the workflow status list.
-- Every run was in the running index while it ran, an entry written at its
-- claim and removed at its end: 2 of the 26.1 pages a 3-step run wrote to
-- the WAL (docs/benchmarks.md, "SQLite: the running index, keys only").
-- A worker of an older release names the dropped index in its limited
-- claims and its stats: upgrade the processes of one database together.
DROP INDEX _sky_durable_runs_running;
CREATE INDEX _sky_durable_runs_running_keys ON _sky_durable_runs (workflow, limit_key)
  WHERE status = 'running' AND limit_key IS NOT NULL;
