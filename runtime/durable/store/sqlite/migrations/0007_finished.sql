-- 0008 finished: the finished runs by the time they ended, for the
-- runs-finished-per-minute of `sky durable stats` and the dashboard (the
-- same index as PostgreSQL's 0008_finished).
CREATE INDEX _sky_durable_runs_finished ON _sky_durable_runs (updated_at)
  WHERE status IN ('done','dead','cancelled','timed_out');
