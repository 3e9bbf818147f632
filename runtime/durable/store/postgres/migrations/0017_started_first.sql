-- 0017 started first: the claim index's leading column is the claim key
-- (pgClaimKey in postgres.go, written here word for word): priority, higher
-- first, and within a priority two levels: the runs already started and
-- waiting again (an attempt or a history: resumed after a sleep or a
-- signal, retried), then the others (not yet started, or running and
-- claimable once their lease ended), each by due time. Ordered by priority
-- and due time alone, a burst of starts queued ahead of every run already
-- in flight: a run that slept 200 ms woke behind 10,000 fresh runs and
-- finished only after all of them had begun. The index holds the live runs
-- only, so building it reads those.
DROP INDEX _sky_durable_runs_claim;
CREATE INDEX _sky_durable_runs_claim ON _sky_durable_runs
  ((CASE WHEN status = 'running' OR (attempts = 0 AND history_count = 0) THEN 1 ELSE 0 END - 2 * CAST(priority AS BIGINT)), wake_at)
  WHERE status NOT IN ('done','dead','cancelled');
