-- 0015 started first: the claim index's leading column is the claim key
-- (sqliteClaimKeyOf in sqlite.go, written here word for word): priority,
-- higher first, and within a priority the runs already started and waiting
-- again (an attempt or a history), then the others (not yet started, or
-- running and claimable once their lease ended), so a burst of starts
-- queues behind the work in progress (PostgreSQL's migration 0017 does the
-- same).
DROP INDEX _sky_durable_runs_claim;
CREATE INDEX _sky_durable_runs_claim ON _sky_durable_runs
  ((CASE WHEN status = 'running' OR (attempts = 0 AND history_count = 0) THEN 1 ELSE 0 END - 2 * priority), wake_at)
  WHERE status IN ('waiting','running','failed');
