-- 0005 children: composing workflows (Durable.startChild, awaitChild, all,
-- setEvent). A child run of Durable.all records its group (the key of the
-- first child of that call), the events table keeps the latest value of
-- each (run, key), and a trigger wakes a parent the moment a child it
-- awaits finishes, in the child's finishing transaction.
ALTER TABLE _sky_durable_runs ADD COLUMN child_group TEXT;
-- The unfinished children of a group: the trigger asks whether any is left.
CREATE INDEX _sky_durable_runs_child_group ON _sky_durable_runs (parent_id, child_group)
  WHERE child_group IS NOT NULL AND status NOT IN ('done','dead','cancelled','timed_out');

CREATE TABLE _sky_durable_events (
  run_id     TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (run_id, key)
);

-- A parent parked on its children has waiting_signal 'sky:child:<child id>'
-- (awaitChild) or 'sky:all:<group>' (all). The trigger never waits long for
-- a lock, so completions of the children of many parents in one statement
-- (group commit) cannot deadlock:
--
--  * It locks the parent only if it is parked on this child (or its
--    group), waiting at most 100ms (lock_timeout). A lock it cannot get
--    is held by a claim of the parent, by the parent's own suspension (see
--    below), by a sibling's trigger, which wakes it, or by a signal: the
--    first three make the parent look at its children again.
--  * A parent suspending on its children (AwaitChildren) locks the
--    unfinished ones FOR SHARE first: it waits for a child finishing in a
--    transaction not yet committed, so it sees it finished; a child
--    finishing after that waits for the parent to be parked.
--  * For a group, the parent is woken when no sibling is left unfinished.
--    A sibling locked by a transaction in flight (finishing, or being
--    claimed) counts as finished (SKIP LOCKED): two last siblings finishing
--    at once then both wake the parent rather than neither; an early wake
--    only makes the parent look again. An unfinished sibling it finds
--    stays share-locked until this transaction commits, so that sibling's
--    own finish comes after this one and sees it.
CREATE FUNCTION _sky_durable_child_finished() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  saved_timeout TEXT := current_setting('lock_timeout');
  marker TEXT;
BEGIN
  PERFORM set_config('lock_timeout', '100ms', true);
  BEGIN
    SELECT p.waiting_signal INTO marker FROM _sky_durable_runs p
     WHERE p.id = NEW.parent_id AND p.status = 'waiting'
       AND (p.waiting_signal = 'sky:child:' || NEW.id
            OR (NEW.child_group IS NOT NULL AND p.waiting_signal = 'sky:all:' || NEW.child_group))
       FOR UPDATE;
  EXCEPTION WHEN lock_not_available THEN
    marker := NULL;
  END;
  PERFORM set_config('lock_timeout', saved_timeout, true);
  IF marker IS NULL THEN
    RETURN NULL;
  END IF;
  IF marker <> 'sky:child:' || NEW.id AND NEW.status = 'done' THEN
    PERFORM 1 FROM _sky_durable_runs s
     WHERE s.parent_id = NEW.parent_id AND s.child_group = NEW.child_group AND s.id <> NEW.id
       AND s.status NOT IN ('done','dead','cancelled','timed_out')
     LIMIT 1 FOR SHARE SKIP LOCKED;
    IF FOUND THEN
      RETURN NULL;
    END IF;
  END IF;
  UPDATE _sky_durable_runs p SET wake_at = NEW.updated_at, updated_at = NEW.updated_at
   WHERE p.id = NEW.parent_id;
  RETURN NULL;
END $$;

CREATE TRIGGER _sky_durable_child_finished AFTER UPDATE OF status ON _sky_durable_runs
  FOR EACH ROW
  WHEN (NEW.parent_id IS NOT NULL AND NEW.status IN ('done','dead','cancelled','timed_out')
        AND OLD.status NOT IN ('done','dead','cancelled','timed_out'))
  EXECUTE FUNCTION _sky_durable_child_finished();
