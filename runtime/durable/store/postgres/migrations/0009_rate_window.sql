-- 0009 rate_window: a rate limit delivers its rate (docs/durable.md, "Flow
-- control").
--
-- 0006 moved a rate limit's next claim to (claim time) + 1/rate, so every
-- claim that came late (a poller's wake-up and round trip after the
-- allowed time) pushed all later ones back by as much: 20 a second
-- delivered 18-19 on a busy machine. The next claim now keeps to a grid:
-- rate_grid is the next token on it, one interval after the last, unless
-- the claim came more than half an interval late (then half an interval
-- after the claim), so a late claim is caught up by the next. That alone
-- could put rate + 1 claims in some second; rate_log (the times of the
-- last n = ceil(rate) claims, at most 100) keeps the rule exact: the claim
-- after them waits until the oldest is n/rate seconds (at least 1 s) old.
-- next_claim_at is the later of the two; the claim reads only it, as
-- before.
ALTER TABLE _sky_durable_flow ADD COLUMN rate_grid TIMESTAMPTZ;
ALTER TABLE _sky_durable_flow ADD COLUMN rate_log TIMESTAMPTZ[];

-- _sky_durable_flow_admit is 0007's, but for the rate limit's token (the
-- last block).
CREATE OR REPLACE FUNCTION _sky_durable_flow_admit(w TEXT, k TEXT, at TIMESTAMPTZ, span INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  conc INT;
  per INT;
  rate DOUBLE PRECISION;
  used INT[];
  s INT;
  slot INT;
  n INT;
BEGIN
  SELECT fl.concurrency, fl.per_key, fl.rate_per_second INTO conc, per, rate
    FROM _sky_durable_flow fl WHERE fl.workflow = w;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF per IS NOT NULL AND k IS NOT NULL THEN
    IF NOT pg_try_advisory_xact_lock(hashtext('_sky_durable_flow_key:' || w), hashtext(k)) THEN
      RETURN -1;
    END IF;
    IF (SELECT count(*) FROM _sky_durable_runs r
         WHERE r.workflow = w AND r.limit_key = k AND r.status = 'running' AND r.claimed_at >= at - span) >= per THEN
      RETURN -1;
    END IF;
  END IF;
  IF conc IS NOT NULL THEN
    SELECT array_agg(r.flow_slot) INTO used FROM _sky_durable_runs r
     WHERE r.workflow = w AND r.status = 'running' AND r.claimed_at >= at - span;
    IF COALESCE(cardinality(used), 0) >= conc THEN
      RETURN -1;
    END IF;
    FOR s IN 0 .. conc - 1 LOOP
      CONTINUE WHEN s = ANY(used) IS TRUE;
      CONTINUE WHEN NOT pg_try_advisory_xact_lock(hashtext('_sky_durable_flow_slot:' || w), s);
      IF NOT EXISTS (SELECT 1 FROM _sky_durable_runs r
                      WHERE r.workflow = w AND r.status = 'running' AND r.flow_slot = s AND r.claimed_at >= at - span) THEN
        slot := s;
        EXIT;
      END IF;
    END LOOP;
    IF slot IS NULL THEN
      RETURN -1;
    END IF;
  END IF;
  IF rate IS NOT NULL THEN
    -- The token: the update locks the flow row (claims of one rate-limited
    -- workflow take turns here), or finds the next claim not due.
    n := LEAST(100, CAST(ceil(rate) AS INT));
    UPDATE _sky_durable_flow fl
       SET rate_grid = GREATEST(COALESCE(fl.rate_grid, at) + INTERVAL '1 millisecond' * ceil(1000.0 / rate),
                                at + INTERVAL '1 millisecond' * ceil(500.0 / rate)),
           rate_log = ARRAY(SELECT t FROM unnest(array_append(fl.rate_log, at)) t ORDER BY t DESC LIMIT n)
     WHERE fl.workflow = w AND (fl.next_claim_at IS NULL OR fl.next_claim_at <= at);
    IF NOT FOUND THEN
      RETURN -1;
    END IF;
    UPDATE _sky_durable_flow fl
       SET next_claim_at = GREATEST(fl.rate_grid, CASE WHEN cardinality(fl.rate_log) >= n
                                    THEN fl.rate_log[n] + INTERVAL '1 millisecond' * ceil(1000.0 * n / rate) END)
     WHERE fl.workflow = w;
  END IF;
  RETURN slot;
END $$;
