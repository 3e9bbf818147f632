-- 0012 key queue: runs of a workflow with a perKey limit take turns across
-- keys (docs/durable.md, "Fair across keys"). Times are Unix milliseconds,
-- as everywhere in this store; store.InfinityMs stands for 'infinity'.
-- (PostgreSQL's migration 0014 does the same; there the start and the
-- trigger take the key's advisory lock, here the single writer orders them.)
--
-- Of the fresh runs (waiting, never attempted) of one key, one is the key's
-- head, due like any run; the others queue behind it (key_queued, due
-- never). When the head leaves its fresh state (claimed, cancelled, timed
-- out) the trigger makes the key's oldest queued run the head, due then.
ALTER TABLE _sky_durable_runs ADD COLUMN key_queued INTEGER NOT NULL DEFAULT 0;
CREATE INDEX _sky_durable_runs_key_queue ON _sky_durable_runs (workflow, limit_key, created_at, id)
  WHERE key_queued;
CREATE INDEX _sky_durable_runs_key_head ON _sky_durable_runs (workflow, limit_key)
  WHERE status = 'waiting' AND attempts = 0 AND NOT key_queued AND limit_key IS NOT NULL;

CREATE TRIGGER _sky_durable_runs_key_next AFTER UPDATE OF status ON _sky_durable_runs
WHEN OLD.status = 'waiting' AND OLD.attempts = 0 AND NOT OLD.key_queued
     AND OLD.limit_key IS NOT NULL AND NEW.status <> 'waiting'
BEGIN
  UPDATE _sky_durable_runs SET key_queued = 0, wake_at = NEW.updated_at
   WHERE id = (SELECT q.id FROM _sky_durable_runs q
                WHERE q.workflow = OLD.workflow AND q.limit_key = OLD.limit_key AND q.key_queued
                  AND q.status = 'waiting'
                ORDER BY q.created_at, q.id LIMIT 1);
END;

-- A queued run that leaves the queue otherwise (cancelled, timed out)
-- leaves the queue's index too.
CREATE TRIGGER _sky_durable_runs_key_unqueue AFTER UPDATE OF status ON _sky_durable_runs
WHEN OLD.key_queued AND NEW.status <> 'waiting'
BEGIN
  UPDATE _sky_durable_runs SET key_queued = 0 WHERE id = NEW.id;
END;
