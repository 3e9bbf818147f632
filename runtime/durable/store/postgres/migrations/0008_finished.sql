-- 0008 finished: the finished runs by the time they ended (a finished run
-- is not updated again until compaction, so updated_at is its end). The
-- dashboard's and `sky durable stats`' runs-finished-per-minute read a
-- range of it instead of every finished run (TestStoreConformance's plan
-- check: it was a sequential scan of the runs).
CREATE INDEX _sky_durable_runs_finished ON _sky_durable_runs (updated_at)
  WHERE status IN ('done','dead','cancelled','timed_out');
