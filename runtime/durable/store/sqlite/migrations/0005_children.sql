-- 0005 children: composing workflows (Durable.startChild, awaitChild, all,
-- setEvent). A child run of Durable.all records its group (the key of the
-- first child of that call), the events table keeps the latest value of
-- each (run, key), and a trigger wakes a parent the moment a child it
-- awaits finishes, in the child's finishing transaction (SQLite serialises
-- writers, so a parent suspending meanwhile is either seen parked or sees
-- the child finished).
ALTER TABLE _sky_durable_runs ADD COLUMN child_group TEXT;
CREATE INDEX _sky_durable_runs_child_group ON _sky_durable_runs (parent_id, child_group)
  WHERE child_group IS NOT NULL AND status NOT IN ('done','dead','cancelled','timed_out');

CREATE TABLE _sky_durable_events (
  run_id     TEXT NOT NULL,
  key        TEXT NOT NULL,
  value      TEXT NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, key)
);

-- A parent parked on its children has waiting_signal 'sky:child:<child id>'
-- (awaitChild) or 'sky:all:<group>' (all).
CREATE TRIGGER _sky_durable_child_finished AFTER UPDATE OF status ON _sky_durable_runs
  WHEN NEW.parent_id IS NOT NULL AND NEW.status IN ('done','dead','cancelled','timed_out')
   AND OLD.status NOT IN ('done','dead','cancelled','timed_out')
BEGIN
  UPDATE _sky_durable_runs SET wake_at = NEW.updated_at, updated_at = NEW.updated_at
   WHERE id = NEW.parent_id AND status = 'waiting'
     AND (waiting_signal = 'sky:child:' || NEW.id
          OR (NEW.child_group IS NOT NULL AND waiting_signal = 'sky:all:' || NEW.child_group
              AND (NEW.status <> 'done' OR NOT EXISTS (
                SELECT 1 FROM _sky_durable_runs s
                 WHERE s.parent_id = NEW.parent_id AND s.child_group = NEW.child_group AND s.id <> NEW.id
                   AND s.status NOT IN ('done','dead','cancelled','timed_out')))));
END;
