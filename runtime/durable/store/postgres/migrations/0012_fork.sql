-- 0012 fork: a run made by `sky durable fork` (Engine.Fork, Durable.fork)
-- records the run it was forked from and the step id of the cut; a child
-- copied with its forked parent records the child it copies (fork_step
-- NULL). Both NULL for any other run.
ALTER TABLE _sky_durable_runs ADD COLUMN forked_from TEXT;
ALTER TABLE _sky_durable_runs ADD COLUMN fork_step TEXT;
