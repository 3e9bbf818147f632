-- 0018 unqueue after: the trigger that takes a queued run out of its key's
-- queue when it leaves 'waiting' (0014) runs AFTER the update, as SQLite's
-- always did, and clears key_queued with an UPDATE of its own, for a
-- statement that left it set: the engine's cancels and time-outs clear it
-- themselves, in the row version they write (pgCancelSets, the deadline
-- sweep), so the trigger is the net for any other path.
--
-- As a BEFORE ROW UPDATE trigger it made PostgreSQL lock every run row any
-- UPDATE changed before changing it (the trigger must see the row as it will
-- be updated, so the executor locks it first, whatever the trigger's WHEN
-- says): one more row lock and WAL record (54 bytes) for every step's lease
-- renewal, every completion and every claim, about 3 of them per 3-step
-- workflow, for a case (a queued run cancelled or timed out) that a perKey
-- workflow meets now and then. An AFTER trigger's WHEN is tested on the
-- updated row, and a row it does not match costs nothing more.
-- TestRunUpdatesTakeNoRowLock keeps the table free of BEFORE UPDATE triggers.
DROP TRIGGER _sky_durable_runs_key_unqueue ON _sky_durable_runs;

CREATE OR REPLACE FUNCTION _sky_durable_key_unqueue() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE _sky_durable_runs SET key_queued = FALSE WHERE id = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER _sky_durable_runs_key_unqueue AFTER UPDATE OF status ON _sky_durable_runs
FOR EACH ROW WHEN (NEW.key_queued AND NEW.status <> 'waiting')
EXECUTE FUNCTION _sky_durable_key_unqueue();
