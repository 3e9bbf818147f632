-- 0015 search and signal trace: `sky durable ls --search` and the dashboard's search box find
-- runs by a case-insensitive substring of their id, input, output or last
-- error (store.SearchSQL).
--
-- A trigram GIN index (pg_trgm, a trusted extension since PostgreSQL 13:
-- a role that may create objects in the database may create it) answers
-- ILIKE '%text%'. It is partial: it holds the finished runs only (done,
-- dead, cancelled, timed_out: NOT IN the claimable statuses, the words
-- store.SearchSQL uses, which no other index's predicate has), which are
-- not updated again, so a run gains its entries once,
-- when it ends. A running run's row is rewritten at every step (the lease
-- renewal moves wake_at, so the update is not HOT) and gains an entry in
-- every index whose predicate it meets: none here, so a step costs what it
-- did. The unfinished runs are searched row by row (store.SearchSQL).
--
-- On a large database an operator builds the same index beforehand with
-- CREATE INDEX CONCURRENTLY (docs/durable.md, Search), so the migration's
-- transaction does not block writes while it builds: an index of that name
-- is then left alone. (Not CREATE INDEX IF NOT EXISTS: it looks up the
-- operator class first, which fails when pg_trgm is off the search_path
-- and the operator built the index naming its schema.)
CREATE EXTENSION IF NOT EXISTS pg_trgm;
DO $$
BEGIN
  IF to_regclass('_sky_durable_runs_search') IS NULL THEN
    CREATE INDEX _sky_durable_runs_search ON _sky_durable_runs
      USING gin (id gin_trgm_ops, input gin_trgm_ops, output gin_trgm_ops, last_error gin_trgm_ops)
      WHERE status NOT IN ('waiting','running','failed');
  END IF;
END
$$;

-- The W3C trace context of the span that sent a signal (NULL: none, or
-- telemetry off), written by the signal's own INSERT and read by the
-- statement that consumes it: the attempt that consumes the signal links to
-- the sender's trace (docs/ui.md, OpenTelemetry: "Signals link to their sender").
ALTER TABLE _sky_durable_signals ADD COLUMN trace_context TEXT;
