-- 0017 step renewal: a journalled step no longer renews the lease by a
-- trigger. An engine with heartbeats (the default) holds its runs by its
-- beats, and the trigger rewrote the run's row (input and output) and its
-- page at every step for nothing: 2 of the 30.8 pages a 3-step run wrote
-- to the WAL (docs/benchmarks.md, "SQLite: a step writes the journal
-- only"). An
-- engine without heartbeats renews the lease itself, in the step's
-- transaction (Store.AppendEntry). updated_at no longer moves at a step,
-- as on PostgreSQL: it moves with the run's state.
DROP TRIGGER _sky_durable_journal_renews_lease;
