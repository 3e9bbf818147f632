-- 0006 flow: flow control and schedules (docs/durable.md, "Flow control" and
-- "Schedules").
--
-- priority orders the claim (higher first, then due time) on the claim
-- index; limit_key is the perKey key computed from the input at start.
ALTER TABLE _sky_durable_runs ADD COLUMN priority INT NOT NULL DEFAULT 0;
ALTER TABLE _sky_durable_runs ADD COLUMN limit_key TEXT;
-- The claim walks the live runs one priority level at a time (a loose index
-- scan for the levels, then a range of due runs in each), so an empty poll
-- still reads no waiting run.
CREATE INDEX _sky_durable_runs_claim ON _sky_durable_runs ((-priority), wake_at)
  WHERE status NOT IN ('done','dead','cancelled');
-- The running runs of a workflow, and of one key: what the limits count.
CREATE INDEX _sky_durable_runs_running ON _sky_durable_runs (workflow, limit_key)
  WHERE status = 'running';

-- The declared limits of a workflow (Durable.registerWithLimits; the last
-- declaration wins) and its rate limit's state: the earliest time the next
-- claim may happen. A claim with limits locks the rows of its workflows.
CREATE TABLE _sky_durable_flow (
  workflow        TEXT PRIMARY KEY,
  concurrency     INT,
  per_key         INT,
  rate_per_second DOUBLE PRECISION,
  next_claim_at   TIMESTAMPTZ,
  updated_at      TIMESTAMPTZ NOT NULL
);

-- _sky_durable_flow_gate locks the flow rows of names (in name order, so two
-- claims never deadlock) and then, with the fresh snapshot a volatile
-- function's next query takes, returns the workflows a claim may pick from
-- (full_key NULL) and the keys already at their perKey limit. The claim's own
-- snapshot predates the lock, so it could not count the runs claimed by the
-- claim it waited for; this function can.
CREATE FUNCTION _sky_durable_flow_gate(names TEXT[], at TIMESTAMPTZ, lease_ms BIGINT)
RETURNS TABLE (workflow TEXT, full_key TEXT)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM _sky_durable_flow f WHERE f.workflow = ANY(names) ORDER BY f.workflow FOR UPDATE;
  RETURN QUERY
    SELECT f.workflow, CAST(NULL AS TEXT) FROM _sky_durable_flow f
     WHERE f.workflow = ANY(names)
       AND (f.rate_per_second IS NULL OR f.next_claim_at IS NULL OR f.next_claim_at <= at)
       AND (f.concurrency IS NULL OR f.concurrency > (
             SELECT count(*) FROM _sky_durable_runs r
              WHERE r.workflow = f.workflow AND r.status = 'running'
                AND r.claimed_at >= at - lease_ms * INTERVAL '1 millisecond'))
    UNION ALL
    SELECT r.workflow, r.limit_key FROM _sky_durable_runs r JOIN _sky_durable_flow f ON f.workflow = r.workflow
     WHERE f.workflow = ANY(names) AND f.per_key IS NOT NULL
       AND r.status = 'running' AND r.limit_key IS NOT NULL
       AND r.claimed_at >= at - lease_ms * INTERVAL '1 millisecond'
     GROUP BY r.workflow, r.limit_key, f.per_key
    HAVING count(*) >= f.per_key;
END $$;

-- Schedules (Durable.schedule): each tick starts one run, id
-- "<id>@<tick time>"; next_at is the next tick to fire.
CREATE TABLE _sky_durable_schedules (
  id          TEXT PRIMARY KEY,
  workflow    TEXT NOT NULL,
  version     INT NOT NULL,
  cron        TEXT NOT NULL,
  input       TEXT NOT NULL,
  catch_up    BOOLEAN NOT NULL DEFAULT FALSE,
  next_at     TIMESTAMPTZ NOT NULL,
  last_run_id TEXT,
  created_at  TIMESTAMPTZ NOT NULL,
  updated_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX _sky_durable_schedules_due ON _sky_durable_schedules (next_at);
