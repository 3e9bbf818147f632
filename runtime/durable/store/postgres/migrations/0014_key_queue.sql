-- 0014 key queue: runs of a workflow with a perKey limit take turns across
-- keys (docs/durable.md, "Fair across keys").
--
-- Of the fresh runs (waiting, never attempted) of one key, one is the key's
-- head: due like any run; the others queue behind it (key_queued, due
-- 'infinity', so no claim reads them). When the head leaves its fresh state
-- (claimed, cancelled, timed out), the trigger makes the key's oldest queued
-- run the head, due at that moment: at the back of the due runs. So a key
-- with 100,000 runs waiting has one run among the due ones, and a run of
-- another key started after them waits behind at most one run of each key.
-- Start and the trigger take the key's transaction advisory lock, and each
-- check reads in a fresh snapshot (volatile plpgsql), so a start racing the
-- claim of the head either sees the head gone (and becomes the head) or is
-- seen by the trigger (and is promoted). Their queries are planned for the
-- key at hand (plan_cache_mode = force_custom_plan): a plpgsql function's
-- cached generic plan, made for any key, walked a 100,000-run queue of one
-- key to find another key's (none): 20 ms a claim instead of 0.1
-- (BenchmarkClaimLatencyWithLimits, queued=true).
ALTER TABLE _sky_durable_runs ADD COLUMN key_queued BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX _sky_durable_runs_key_queue ON _sky_durable_runs (workflow, limit_key, created_at, id)
  WHERE key_queued;
CREATE INDEX _sky_durable_runs_key_head ON _sky_durable_runs (workflow, limit_key)
  WHERE status = 'waiting' AND attempts = 0 AND NOT key_queued AND limit_key IS NOT NULL;

-- _sky_durable_key_queued says whether a new run of key k of workflow w
-- queues behind the key's head (the start statement calls it for a run with
-- a perKey key only).
CREATE FUNCTION _sky_durable_key_queued(w TEXT, k TEXT) RETURNS BOOLEAN
LANGUAGE plpgsql VOLATILE SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('_sky_durable_key_queue:' || w), hashtext(k));
  RETURN EXISTS (SELECT 1 FROM _sky_durable_runs r
                  WHERE r.workflow = w AND r.limit_key = k AND r.status = 'waiting' AND r.attempts = 0
                    AND NOT r.key_queued AND r.limit_key IS NOT NULL);
END $$;

-- _sky_durable_key_next makes the oldest queued run of the old head's key
-- the head, due when the old head left (its updated_at: the engine's clock).
CREATE FUNCTION _sky_durable_key_next() RETURNS trigger
LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('_sky_durable_key_queue:' || OLD.workflow), hashtext(OLD.limit_key));
  UPDATE _sky_durable_runs r SET key_queued = FALSE, wake_at = NEW.updated_at
   WHERE r.id = (SELECT q.id FROM _sky_durable_runs q
                  WHERE q.workflow = OLD.workflow AND q.limit_key = OLD.limit_key AND q.key_queued
                    AND q.status = 'waiting'
                  ORDER BY q.created_at, q.id LIMIT 1);
  RETURN NULL;
END $$;

CREATE TRIGGER _sky_durable_runs_key_next AFTER UPDATE OF status ON _sky_durable_runs
FOR EACH ROW WHEN (OLD.status = 'waiting' AND OLD.attempts = 0 AND NOT OLD.key_queued
                   AND OLD.limit_key IS NOT NULL AND NEW.status <> 'waiting')
EXECUTE FUNCTION _sky_durable_key_next();

-- A queued run that leaves the queue otherwise (cancelled, timed out)
-- leaves the queue's index too.
CREATE FUNCTION _sky_durable_key_unqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.key_queued := FALSE;
  RETURN NEW;
END $$;

CREATE TRIGGER _sky_durable_runs_key_unqueue BEFORE UPDATE OF status ON _sky_durable_runs
FOR EACH ROW WHEN (OLD.key_queued AND NEW.status <> 'waiting')
EXECUTE FUNCTION _sky_durable_key_unqueue();
