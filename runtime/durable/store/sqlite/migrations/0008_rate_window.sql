-- 0008 rate_window: a rate limit delivers its rate (docs/durable.md, "Flow
-- control"). Times are Unix milliseconds, as everywhere in this store.
--
-- 0006 moved a rate limit's next claim to (claim time) + 1/rate, so every
-- claim that came late (a poller's wake-up after the allowed time) pushed
-- all later ones back by as much. The next claim now keeps to a grid:
-- rate_grid is the next token on it, one interval after the last, unless
-- the claim came more than half an interval late (then half an interval
-- after the claim), so a late claim is caught up by the next. That alone
-- could put rate + 1 claims in some second; rate_log (a JSON array of the
-- times of the last n = ceil(rate) claims, at most 100) keeps the rule
-- exact: the claim after them waits until the oldest is n/rate seconds (at
-- least 1 s) old. next_claim_at is the later of the two; the claim reads
-- only it, as before. (PostgreSQL's migration 0009 does the same.)
ALTER TABLE _sky_durable_flow ADD COLUMN rate_grid INTEGER;
ALTER TABLE _sky_durable_flow ADD COLUMN rate_log TEXT;

DROP TRIGGER _sky_durable_runs_rate;
CREATE TRIGGER _sky_durable_runs_rate AFTER UPDATE OF lease_token ON _sky_durable_runs
WHEN NEW.lease_token IS NOT NULL AND NEW.lease_token IS NOT OLD.lease_token
BEGIN
  -- The log keeps its times oldest first: the claim drops the oldest when
  -- the log is full and appends its own.
  UPDATE _sky_durable_flow
     SET rate_grid = max(COALESCE(rate_grid, NEW.claimed_at) + CAST(ceil(1000.0 / rate_per_second) AS INTEGER),
                         NEW.claimed_at + CAST(ceil(500.0 / rate_per_second) AS INTEGER)),
         rate_log = json_insert(CASE WHEN json_array_length(COALESCE(rate_log, '[]')) >= min(100, CAST(ceil(rate_per_second) AS INTEGER))
                                     THEN json_remove(rate_log, '$[0]') ELSE COALESCE(rate_log, '[]') END,
                                '$[#]', NEW.claimed_at)
   WHERE workflow = NEW.workflow AND rate_per_second IS NOT NULL;
  UPDATE _sky_durable_flow
     SET next_claim_at = max(rate_grid, CASE
           WHEN json_array_length(rate_log) >= min(100, CAST(ceil(rate_per_second) AS INTEGER))
           THEN json_extract(rate_log, '$[' || (json_array_length(rate_log) - min(100, CAST(ceil(rate_per_second) AS INTEGER))) || ']')
                + CAST(ceil(1000.0 * min(100, CAST(ceil(rate_per_second) AS INTEGER)) / rate_per_second) AS INTEGER)
           ELSE 0 END)
   WHERE workflow = NEW.workflow AND rate_per_second IS NOT NULL;
END;
