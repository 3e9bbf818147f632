-- 0004 children: composing workflows (Durable.startChild, awaitChild, all,
-- setEvent). A child run of Durable.all records its group (the key of the
-- first child of that call), the events table keeps the latest value of
-- each (run, key), and a trigger wakes a parent the moment a child it
-- awaits finishes, in the child's finishing transaction.
ALTER TABLE _sky_durable_runs ADD COLUMN child_group TEXT;
-- The unfinished children of a group: the trigger asks whether any is left.
CREATE INDEX _sky_durable_runs_child_group ON _sky_durable_runs (parent_id, child_group)
  WHERE child_group IS NOT NULL AND status NOT IN ('done','dead','cancelled');

CREATE TABLE _sky_durable_events (
  run_id     TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (run_id, key)
);

-- A parent parked on its children has waiting_signal 'sky:child:<child id>'
-- (awaitChild) or 'sky:all:<group>' (all). The parent's row is locked
-- first: a parent suspending at the same time holds that lock while it
-- checks its children, so either it sees this child finished or this
-- update, run after its commit, sees it parked. Each statement of the
-- function reads a fresh snapshot, taken after the lock.
CREATE FUNCTION _sky_durable_child_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM _sky_durable_runs WHERE id = NEW.parent_id FOR UPDATE;
  UPDATE _sky_durable_runs p SET wake_at = NEW.updated_at, updated_at = NEW.updated_at
   WHERE p.id = NEW.parent_id AND p.status = 'waiting'
     AND (p.waiting_signal = 'sky:child:' || NEW.id
          OR (NEW.child_group IS NOT NULL AND p.waiting_signal = 'sky:all:' || NEW.child_group
              AND (NEW.status <> 'done' OR NOT EXISTS (
                SELECT 1 FROM _sky_durable_runs s
                 WHERE s.parent_id = NEW.parent_id AND s.child_group = NEW.child_group AND s.id <> NEW.id
                   AND s.status NOT IN ('done','dead','cancelled')))));
  RETURN NULL;
END $$;

CREATE TRIGGER _sky_durable_child_finished AFTER UPDATE OF status ON _sky_durable_runs
  FOR EACH ROW
  WHEN (NEW.parent_id IS NOT NULL AND NEW.status IN ('done','dead','cancelled')
        AND OLD.status NOT IN ('done','dead','cancelled'))
  EXECUTE FUNCTION _sky_durable_child_finished();
