-- 0010 due apart: the due index no longer serves the claim. Both it and the
-- claim index cover the live runs; the claim walks the claim index
-- ((-priority), wake_at) in order and stops at its first claimable run. With
-- statistics taken when (almost) every run was finished, PostgreSQL expects
-- one live run, finds the two indexes equally cheap, takes the smaller one
-- (this one) and sorts what it reads: every due run, on every claim, until
-- the next ANALYZE (2,000 due runs: 2-3 ms a claim instead of 0.3; the slow
-- mode of the 3-step benchmark). The extra condition wake_at IS NOT NULL is
-- implied by the `wake_at <= t` of every statement that reads this index
-- (the probe, the stats) but not by the claim's row comparison, so the
-- claim cannot use it (TestClaimPlanSurvivesABurstAfterAnalyze).
DROP INDEX _sky_durable_runs_due;
CREATE INDEX _sky_durable_runs_due ON _sky_durable_runs (wake_at)
  WHERE status NOT IN ('done','dead','cancelled') AND wake_at IS NOT NULL;
