package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"skydurable/runtime/durable/store"
)

// Flow control on PostgreSQL (migration 0007). A claim with limits picks
// as an unlimited claim does and asks _sky_durable_flow_admit about the run
// it locked, once: the function takes the run's perKey key and a free
// concurrency slot with transaction advisory locks (never waiting), checks
// them in a fresh snapshot, and takes a rate limit's token. When limits do
// not hold runs back that is the whole cost of them: one function call in
// the claim statement. When it refuses (the run it locked is held back),
// the same call makes a second, gated claim: it picks only among the
// workflows its snapshot saw open and skips the keys it saw full (a hint;
// the function decides again), so runs behind a held one still start.
// Claims of a workflow with concurrency and perKey limits do not queue
// behind each other; those of a rate-limited one take turns on its flow
// row. A workflow without limits is never gated.

const pgDeclareLimits = pgClock + `
INSERT INTO _sky_durable_flow (workflow, concurrency, per_key, rate_per_second, updated_at)
SELECT ?, NULLIF(CAST(? AS INT), 0), NULLIF(CAST(? AS INT), 0), NULLIF(CAST(? AS DOUBLE PRECISION), 0), clock.now FROM clock
ON CONFLICT (workflow) DO UPDATE SET concurrency = EXCLUDED.concurrency, per_key = EXCLUDED.per_key,
  rate_per_second = EXCLUDED.rate_per_second, updated_at = EXCLUDED.updated_at`

const pgDropLimits = `DELETE FROM _sky_durable_flow WHERE workflow = ?`

func (s *Store) DeclareLimits(ctx context.Context, l store.Limits, now time.Time) error {
	if l.None() {
		_, err := s.exec(ctx, s.d, "limits", pgDropLimits, l.Workflow)
		return err
	}
	_, err := s.exec(ctx, s.d, "limits", pgDeclareLimits, clockArg(now), l.Workflow, l.Concurrency, l.PerKey, l.RatePerSecond)
	return err
}

// pgGate is the gated claim's hint: the open limited workflows (under
// their concurrency, their rate limit's next claim due) and the perKey keys
// at their limit, among the live running runs (under a lease: lease_ms).
const pgGate = `,
since AS (SELECT clock.now - CAST(? AS BIGINT) * INTERVAL '1 millisecond' AS at FROM clock),
flows AS MATERIALIZED (
  SELECT fl.workflow, fl.per_key FROM _sky_durable_flow fl
    LEFT JOIN LATERAL (
      SELECT count(*) AS live FROM _sky_durable_runs r
       WHERE fl.concurrency IS NOT NULL AND r.workflow = fl.workflow AND r.status = ` + store.SQLRunning + `
         AND r.claimed_at >= (SELECT at FROM since)) u ON TRUE
   WHERE fl.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
     AND (fl.rate_per_second IS NULL OR fl.next_claim_at IS NULL OR fl.next_claim_at <= (SELECT now FROM clock))
     AND (fl.concurrency IS NULL OR u.live < fl.concurrency)),
full_keys AS MATERIALIZED (
  SELECT f.workflow, k.limit_key FROM flows f CROSS JOIN LATERAL (
    SELECT r.limit_key FROM _sky_durable_runs r
     WHERE r.workflow = f.workflow AND r.status = ` + store.SQLRunning + ` AND r.limit_key IS NOT NULL
       AND r.claimed_at >= (SELECT at FROM since)
     GROUP BY r.limit_key
    HAVING count(*) >= f.per_key) k
   WHERE f.per_key IS NOT NULL)`

// pgGateAlso are the gated claim's conditions on the run to pick: a run of
// a limited workflow only while its workflow is open and its key was not
// full; when every workflow is limited (the boolean parameter is false), a
// closed gate stops the scan before it reads any run (a one-time filter).
const pgGateAlso = `
     AND (CAST(? AS BOOLEAN) OR EXISTS (SELECT 1 FROM flows))
     AND (r.workflow NOT IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
          OR r.workflow IN (SELECT f.workflow FROM flows f))
     AND (r.limit_key IS NULL OR NOT EXISTS (SELECT 1 FROM full_keys k WHERE k.workflow = r.workflow AND k.limit_key = r.limit_key))`

// pgAdmit asks _sky_durable_flow_admit about the locked run of a limited
// workflow, once (an unlimited one's slot is NULL); a claim it refuses
// returns a row of part 2 instead of the run.
const (
	pgAdmit = `
admitted AS MATERIALIZED (
  SELECT CASE WHEN p.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
              THEN _sky_durable_flow_admit(p.workflow, p.limit_key, clock.now, lease.span) END AS slot
    FROM picked p, clock, lease),`
	pgRefused = `
UNION ALL
SELECT 2, '', '', '', 0, '', 0, '', clock.now, FALSE, 0, '', '', '', clock.now, '' FROM admitted a, clock WHERE a.slot = -1`
	// pgNextToken is the gated claim's row of part 2: the earliest next
	// claim time after now of the limited workflows' rate limits, when one
	// is (in its created_at column). The gated claim's snapshot is younger
	// than the refusal that sent it, so it sees the token that refusal saw.
	pgNextToken = `
UNION ALL
SELECT 2, '', '', '', 0, '', 0, '', clock.now, FALSE, 0, '', '', '', min(fl.next_claim_at), ''
  FROM _sky_durable_flow fl, clock
 WHERE fl.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB))) AND fl.next_claim_at > clock.now
 GROUP BY clock.now`
	pgClaimCTE = `
claimed AS (`
	pgClaimSets   = `waiting_signal = NULL`
	pgClaimPicked = `WHERE r.id = picked.id`
)

// The claims with limits: by name or pinned (the pick), first ungated,
// then gated.
var (
	pgClaimAdmitted            = pgClaimGated(pgClaimStatement(pgClaimClock, "", pgRefused, pgPickByName, 1))
	pgClaimAdmittedPinned      = pgClaimGated(pgClaimStatement(pgClaimClock, "", pgRefused, pgPickByVersion, 1))
	pgClaimAdmittedGated       = pgClaimGated(pgClaimStatement(pgClaimClock+pgGate, pgGateAlso, pgNextToken, pgPickByName, 1))
	pgClaimAdmittedGatedPinned = pgClaimGated(pgClaimStatement(pgClaimClock+pgGate, pgGateAlso, pgNextToken, pgPickByVersion, 1))
)

// pgClaimGated makes a claim statement admit its picked run (pgAdmit) and
// record the concurrency slot the run took.
func pgClaimGated(sql string) string {
	for _, part := range []string{pgClaimCTE, pgClaimSets, pgClaimPicked} {
		if strings.Count(sql, part) != 1 {
			panic("postgres: the claim statement changed; update pgClaimGated")
		}
	}
	sql = strings.Replace(sql, pgClaimCTE, pgAdmit+pgClaimCTE, 1)
	sql = strings.Replace(sql, pgClaimSets, pgClaimSets+`,
         flow_slot = (SELECT a.slot FROM admitted a)`, 1)
	return strings.Replace(sql, pgClaimPicked, pgClaimPicked+`
     AND (SELECT a.slot FROM admitted a) IS DISTINCT FROM -1`, 1)
}

// ClaimLimited is one statement (one round trip) when the run it locks is
// admitted or none is due, and two when the first is refused; the second
// also reads the next token of a rate limit (the wait).
func (s *Store) ClaimLimited(ctx context.Context, c store.LimitedClaim, now time.Time) (store.Claimed, bool, time.Duration, error) {
	ungated, gated, pick := pgClaimAdmitted, pgClaimAdmittedGated, jsonText(c.Names)
	if c.Pinned {
		ungated, gated, pick = pgClaimAdmittedPinned, pgClaimAdmittedGatedPinned, jsonText(c.Keys)
	}
	limited := jsonText(c.Limited)
	lease := c.Lease.Milliseconds()
	var wait time.Duration
	runs, refused, err := s.claimRowsOp(ctx, s.d, "claim", ungated, clockArg(now), lease, s.floors.param(now), pick, limited, c.Token, c.Worker)
	if err == nil && len(runs) == 0 && refused != nil {
		hasUnlimited := len(c.Limited) < len(c.Names)
		if c.Pinned {
			hasUnlimited = slices.ContainsFunc(c.Keys, func(k store.VersionKey) bool { return !slices.Contains(c.Limited, k.Name) })
		}
		var token []claimNote
		runs, token, err = s.claimRowsOp(ctx, s.d, "claim", gated,
			clockArg(now), lease, limited, lease, s.floors.param(now), hasUnlimited, limited, pick, limited, c.Token, c.Worker, limited)
		if len(token) > 0 {
			wait = token[0].at.Sub(token[0].now)
		}
	}
	if err != nil || len(runs) == 0 {
		return store.Claimed{}, false, wait, err
	}
	return runs[0].c, true, 0, nil
}

// pgFlowStates reads the limits of workflows with their running counts
// (on the running index) and the clock.
const pgFlowStates = pgClock + `
SELECT f.workflow, COALESCE(f.concurrency, 0), COALESCE(f.per_key, 0), COALESCE(f.rate_per_second, 0),
       f.next_claim_at, clock.now, COALESCE(k.limit_key, ''), k.limit_key IS NOT NULL, COALESCE(k.n, 0)
  FROM clock, _sky_durable_flow f
  LEFT JOIN LATERAL (
    SELECT r.limit_key, count(*) AS n FROM _sky_durable_runs r
     WHERE r.workflow = f.workflow AND r.status = ` + store.SQLRunning + `
       AND r.claimed_at >= (SELECT now FROM clock) - CAST(? AS BIGINT) * INTERVAL '1 millisecond'
     GROUP BY r.limit_key) k ON TRUE
 WHERE f.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
 ORDER BY f.workflow`

func (s *Store) FlowStates(ctx context.Context, workflows []string, lease time.Duration, now time.Time) ([]store.FlowState, error) {
	s.hook("limits", pgFlowStates)
	type row struct {
		st     store.FlowState
		key    string
		keyed  bool
		n      int
		nextAt *time.Time
	}
	rows, err := store.QueryAll(ctx, s.d, pgFlowStates, []any{clockArg(now), lease.Milliseconds(), jsonText(workflows)}, func(scan func(...any) error) (row, error) {
		var r row
		err := scan(&r.st.Workflow, &r.st.Concurrency, &r.st.PerKey, &r.st.RatePerSecond, &r.nextAt, &r.st.Now, &r.key, &r.keyed, &r.n)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	return store.FoldFlowStates(len(rows), func(i int) (store.FlowState, string, bool, int) {
		r := rows[i]
		if r.nextAt != nil {
			r.st.NextClaimAt = *r.nextAt
		}
		return r.st, r.key, r.keyed, r.n
	}), nil
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// pgSaveRates reads the rate columns of rated workflows as one JSON object
// each, keyed by column, for pgRestoreRate's jsonb_populate_record ("":
// every column NULL, no claim yet).
const pgSaveRates = `
SELECT workflow, CAST(json_build_object('rate_grid', rate_grid, 'rate_log', rate_log, 'next_claim_at', next_claim_at) AS TEXT)
  FROM _sky_durable_flow
 WHERE rate_per_second IS NOT NULL AND workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
 ORDER BY workflow`

const pgRestoreRate = `
UPDATE _sky_durable_flow fl
   SET rate_grid = r.rate_grid, rate_log = r.rate_log, next_claim_at = r.next_claim_at
  FROM jsonb_populate_record(CAST(NULL AS _sky_durable_flow), CAST(COALESCE(NULLIF(?, ''), '{}') AS JSONB)) r
 WHERE fl.workflow = ?`

func (s *Store) SaveRates(ctx context.Context, workflows []string) ([]store.RateState, error) {
	s.hook("limits", pgSaveRates)
	return store.QueryAll(ctx, s.d, pgSaveRates, []any{jsonText(workflows)}, func(scan func(...any) error) (store.RateState, error) {
		var r store.RateState
		err := scan(&r.Workflow, &r.State)
		return r, err
	})
}

func (s *Store) RestoreRates(ctx context.Context, states []store.RateState) error {
	for _, r := range states {
		if _, err := s.exec(ctx, s.d, "limits", pgRestoreRate, r.State, r.Workflow); err != nil {
			return err
		}
	}
	return nil
}
