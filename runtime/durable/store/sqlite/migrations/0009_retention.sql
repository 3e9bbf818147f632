-- 0009 retention: finished runs compacted automatically and orphan signals
-- expired (docs/durable.md, "Retention"). Times are Unix milliseconds, as
-- everywhere in this store. (PostgreSQL's migration 0011 does the same.)
--
-- _sky_durable_turns gives a background job's turn to one worker per
-- period (sqliteTakeTurn): every worker asks, one wins.
CREATE TABLE _sky_durable_turns (
  job     TEXT PRIMARY KEY,
  next_at INTEGER NOT NULL
);
-- The signals by the time they were sent: the orphan signals (sent to ids
-- no run has) are listed and expired oldest first along it.
CREATE INDEX _sky_durable_signals_created ON _sky_durable_signals (created_at);
