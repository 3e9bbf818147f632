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
-- claim may happen. A claim of a rate-limited workflow locks its row.
CREATE TABLE _sky_durable_flow (
  workflow        TEXT PRIMARY KEY,
  concurrency     INT,
  per_key         INT,
  rate_per_second DOUBLE PRECISION,
  next_claim_at   TIMESTAMPTZ,
  updated_at      TIMESTAMPTZ NOT NULL
);

-- flow_slot is the concurrency slot (0 .. concurrency-1) a running run of a
-- limited workflow holds: the claim that took it held the slot's advisory
-- lock and saw no live running run on it, so live runs hold distinct slots.
ALTER TABLE _sky_durable_runs ADD COLUMN flow_slot INT;

-- _sky_durable_flow_gate returns the workflows of names a claim may pick
-- from (full_key NULL), each with the concurrency slot the claim holds for
-- it (slot NULL: no concurrency limit), and the perKey keys that were full
-- when it looked (a hint for the pick: _sky_durable_flow_key_open decides).
-- It locks only the flow rows of rate-limited workflows (in name order, so
-- two claims never deadlock): their token bucket is one row. A concurrency
-- limit takes no row lock: the claim takes a free slot's transaction
-- advisory lock (pg_try_advisory_xact_lock, never waiting) and then checks,
-- with the fresh snapshot a volatile function's next query takes, that no
-- live running run holds that slot. Claims of one workflow thus proceed
-- side by side, each on its own slot, and the holder of a slot's lock before
-- it has committed (a lock is released after its commit is visible). A
-- workflow found at its limit takes no lock at all.
CREATE FUNCTION _sky_durable_flow_gate(names TEXT[], at TIMESTAMPTZ, lease_ms BIGINT)
RETURNS TABLE (workflow TEXT, slot INT, full_key TEXT)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  f RECORD;
  live BIGINT;
  used INT[];
  s INT;
BEGIN
  PERFORM 1 FROM _sky_durable_flow fl
   WHERE fl.workflow = ANY(names) AND fl.rate_per_second IS NOT NULL ORDER BY fl.workflow FOR UPDATE;
  FOR f IN SELECT fl.workflow, fl.concurrency FROM _sky_durable_flow fl
            WHERE fl.workflow = ANY(names)
              AND (fl.rate_per_second IS NULL OR fl.next_claim_at IS NULL OR fl.next_claim_at <= at)
            ORDER BY fl.workflow LOOP
    workflow := f.workflow;
    slot := NULL;
    full_key := NULL;
    IF f.concurrency IS NULL THEN
      RETURN NEXT;
      CONTINUE;
    END IF;
    SELECT count(*), array_agg(r.flow_slot) INTO live, used FROM _sky_durable_runs r
     WHERE r.workflow = f.workflow AND r.status = 'running'
       AND r.claimed_at >= at - lease_ms * INTERVAL '1 millisecond';
    CONTINUE WHEN live >= f.concurrency;
    FOR s IN 0 .. f.concurrency - 1 LOOP
      CONTINUE WHEN s = ANY(used) IS TRUE;
      CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtext('_sky_durable_flow_slot:' || f.workflow), s);
      CONTINUE WHEN EXISTS (SELECT 1 FROM _sky_durable_runs r
                             WHERE r.workflow = f.workflow AND r.status = 'running' AND r.flow_slot = s
                               AND r.claimed_at >= at - lease_ms * INTERVAL '1 millisecond');
      slot := s;
      RETURN NEXT;
      EXIT;
    END LOOP;
  END LOOP;
  RETURN QUERY
    SELECT r.workflow, CAST(NULL AS INT), r.limit_key FROM _sky_durable_runs r JOIN _sky_durable_flow fl ON fl.workflow = r.workflow
     WHERE fl.workflow = ANY(names) AND fl.per_key IS NOT NULL
       AND r.status = 'running' AND r.limit_key IS NOT NULL
       AND r.claimed_at >= at - lease_ms * INTERVAL '1 millisecond'
     GROUP BY r.workflow, r.limit_key, fl.per_key
    HAVING count(*) >= fl.per_key;
END $$;

-- _sky_durable_flow_key_open says whether a claim may take its picked run
-- of workflow w with perKey key k: it takes the key's transaction advisory
-- lock without waiting (a key another claim is taking right now is not
-- open) and then counts, with a fresh snapshot, the key's live running
-- runs. The claim's update calls it once, on the run it locked, so claims
-- of different keys never wait for each other.
CREATE FUNCTION _sky_durable_flow_key_open(w TEXT, k TEXT, at TIMESTAMPTZ, span INTERVAL)
RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  per INT;
BEGIN
  IF k IS NULL THEN
    RETURN TRUE;
  END IF;
  SELECT fl.per_key INTO per FROM _sky_durable_flow fl WHERE fl.workflow = w;
  IF per IS NULL THEN
    RETURN TRUE;
  END IF;
  IF NOT pg_try_advisory_xact_lock(hashtext('_sky_durable_flow_key:' || w), hashtext(k)) THEN
    RETURN FALSE;
  END IF;
  RETURN (SELECT count(*) FROM _sky_durable_runs r
           WHERE r.workflow = w AND r.limit_key = k AND r.status = 'running'
             AND r.claimed_at >= at - span) < per;
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
