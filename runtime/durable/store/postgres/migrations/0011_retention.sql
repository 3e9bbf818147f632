-- 0011 retention: finished runs compacted automatically and orphan signals
-- expired (docs/durable.md, "Retention").
--
-- _sky_durable_turns gives a background job's turn to one worker of the
-- cluster per period (pgTakeTurn): every worker asks, one wins.
CREATE TABLE _sky_durable_turns (
  job     TEXT PRIMARY KEY,
  next_at TIMESTAMPTZ NOT NULL
);
-- The signals by the time they were sent: the orphan signals (sent to ids
-- no run has) are listed and expired oldest first along it.
CREATE INDEX _sky_durable_signals_created ON _sky_durable_signals (created_at);
