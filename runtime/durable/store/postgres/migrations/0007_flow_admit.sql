-- 0007 flow_admit: the claim's flow-control gate in plain SQL, with one
-- admission call on the run it locked (docs/durable.md, "Flow control").
--
-- 0006's gate was a set-returning plpgsql function every claim of a
-- limited workflow called before it picked a run. A claim now picks as an
-- unlimited one does and asks _sky_durable_flow_admit, once, about the run
-- it locked; only when that refuses does a second claim pick among the
-- open workflows and keys (CTEs in plain SQL, a hint) and ask again. The
-- decision needs a fresh snapshot per query, which a volatile function's
-- queries take and one statement's subqueries do not.
DROP FUNCTION _sky_durable_flow_gate(TEXT[], TIMESTAMPTZ, BIGINT);
DROP FUNCTION _sky_durable_flow_key_open(TEXT, TEXT, TIMESTAMPTZ, INTERVAL);

-- _sky_durable_flow_admit decides whether the claim may take its locked run
-- of limited workflow w with perKey key k (NULL: none), under the limits
-- the workflow's flow row declares. It returns the concurrency slot the run
-- takes, NULL when the workflow has no concurrency limit, or -1: not now
-- (the claim claims nothing). A key or slot is taken with its transaction
-- advisory lock, without waiting (pg_try_advisory_xact_lock), and then
-- checked against the live running runs (claimed since at - span) in a
-- fresh snapshot, so a claim that committed a moment ago is seen and one
-- still committing holds the lock (a lock is released after its commit is
-- visible). Last, a rate limit takes its token: the update locks the flow
-- row (claims of one rate-limited workflow take turns here) and moves the
-- next claim on by one interval, or finds it not due and refuses.
CREATE FUNCTION _sky_durable_flow_admit(w TEXT, k TEXT, at TIMESTAMPTZ, span INTERVAL)
RETURNS INT
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  conc INT;
  per INT;
  rate DOUBLE PRECISION;
  used INT[];
  s INT;
  slot INT;
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
    UPDATE _sky_durable_flow fl SET next_claim_at = at + INTERVAL '1 millisecond' * ceil(1000.0 / fl.rate_per_second)
     WHERE fl.workflow = w AND (fl.next_claim_at IS NULL OR fl.next_claim_at <= at);
    IF NOT FOUND THEN
      RETURN -1;
    END IF;
  END IF;
  RETURN slot;
END $$;
