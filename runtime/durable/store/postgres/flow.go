package postgres

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Flow control on PostgreSQL. A claim with limits is the ordinary claim
// statement with a gate: the CTE gate calls _sky_durable_flow_gate (migration
// 0006), which returns the open limited workflows of the worker, each with
// the concurrency slot the claim holds for it (a transaction advisory lock,
// taken without waiting), and the pick asks _sky_durable_flow_key_open of
// the run it is about to lock whether its perKey key is open (the key's
// advisory lock, then a fresh count). Only a rate-limited workflow's flow
// row is locked, for its token bucket: claims of a workflow with
// concurrency and perKey limits do not queue behind each other. A workflow
// without limits is never gated: its claim is the statement it was.

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

// pgGate is the claim's gate and its conditions on the run to pick: a run
// of a limited workflow only while its workflow is open and its key was
// not full when the gate looked; when every workflow is limited (the
// boolean parameter is false), a closed gate stops the scan before it reads
// any run (a one-time filter). The claim's update records the slot the gate
// took and, on the one run it locked, asks _sky_durable_flow_key_open
// whether its key is open (pgClaimGated): a claim that loses the race for a
// key to another claim claims nothing this time.
const (
	pgGate = `,
gate AS MATERIALIZED (
  SELECT g.workflow, g.slot, g.full_key
    FROM _sky_durable_flow_gate(ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB))), (SELECT now FROM clock), CAST(? AS BIGINT)) g)`
	pgGateAlso = `
     AND (CAST(? AS BOOLEAN) OR EXISTS (SELECT 1 FROM gate g WHERE g.full_key IS NULL))
     AND (r.workflow NOT IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))
          OR r.workflow IN (SELECT g.workflow FROM gate g WHERE g.full_key IS NULL))
     AND (r.limit_key IS NULL OR NOT EXISTS (SELECT 1 FROM gate g WHERE g.workflow = r.workflow AND g.full_key = r.limit_key))`
	pgClaimSets   = `waiting_signal = NULL`
	pgClaimPicked = `WHERE r.id = picked.id`
)

var (
	pgClaimLimited       = pgClaimGated(pgClaimStatement(pgClaimClock+pgGate, pgGateAlso, "", pgPickByName, 1))
	pgClaimLimitedPinned = pgClaimGated(pgClaimStatement(pgClaimClock+pgGate, pgGateAlso, "", pgPickByVersion, 1))
)

// pgClaimGated makes a gated claim statement's update record the
// concurrency slot its gate took and check the picked run's perKey key.
func pgClaimGated(sql string) string {
	if strings.Count(sql, pgClaimSets) != 1 || strings.Count(sql, pgClaimPicked) != 1 {
		panic("postgres: the claim statement's update changed; update pgClaimGated")
	}
	sql = strings.Replace(sql, pgClaimSets, pgClaimSets+`,
         flow_slot = (SELECT g.slot FROM gate g WHERE g.workflow = r.workflow AND g.full_key IS NULL)`, 1)
	return strings.Replace(sql, pgClaimPicked, pgClaimPicked+`
     AND (r.limit_key IS NULL OR _sky_durable_flow_key_open(r.workflow, r.limit_key, clock.now, lease.span))`, 1)
}

// pgRateTaken moves a rate-limited workflow's next claim on by one interval
// from the claim's time (or from its last next claim, when that is later).
const pgRateTaken = `
UPDATE _sky_durable_flow
   SET next_claim_at = GREATEST(COALESCE(next_claim_at, CAST(? AS TIMESTAMPTZ)), CAST(? AS TIMESTAMPTZ))
                       + INTERVAL '1 millisecond' * ceil(1000.0 / rate_per_second)
 WHERE workflow = ? AND rate_per_second IS NOT NULL`

// ClaimLimited is one statement (one round trip) when no limited workflow
// has a rate limit; with one, a transaction of the claim and, when it
// claimed a run, the rate limit's update (four round trips: BEGIN, claim,
// update, COMMIT), holding the rate-limited flow row's lock in between.
func (s *Store) ClaimLimited(ctx context.Context, c store.LimitedClaim, now time.Time) (store.Claimed, bool, error) {
	sql, pick := pgClaimLimited, jsonText(c.Names)
	if c.Pinned {
		sql, pick = pgClaimLimitedPinned, jsonText(c.Keys)
	}
	hasUnlimited := len(c.Limited) < len(c.Names)
	if c.Pinned {
		hasUnlimited = slices.ContainsFunc(c.Keys, func(k store.VersionKey) bool { return !slices.Contains(c.Limited, k.Name) })
	}
	limited := jsonText(c.Limited)
	args := []any{clockArg(now), limited, c.Lease.Milliseconds(), c.Lease.Milliseconds(), hasUnlimited, limited, pick, c.Token, c.Worker}
	claim := func(q *db.DB) (store.Claimed, bool, error) {
		runs, _, err := s.claimRowsOp(ctx, q, "claim", sql, args...)
		if err != nil || len(runs) == 0 {
			return store.Claimed{}, false, err
		}
		return runs[0].c, true, nil
	}
	if !c.Rated {
		return claim(s.d)
	}
	var cl store.Claimed
	var ok bool
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		var err error
		if cl, ok, err = claim(tx); err != nil || !ok || !slices.Contains(c.Limited, cl.Workflow) {
			return err
		}
		_, err = s.exec(ctx, tx, "claim", pgRateTaken, cl.Now, cl.Now, cl.Workflow)
		return err
	})
	if err != nil {
		return store.Claimed{}, false, err
	}
	return cl, ok, nil
}

// pgFlowStates reads the limits of workflows with their running counts
// (on the running index) and the clock.
const pgFlowStates = pgClock + `
SELECT f.workflow, COALESCE(f.concurrency, 0), COALESCE(f.per_key, 0), COALESCE(f.rate_per_second, 0),
       f.next_claim_at, clock.now, COALESCE(k.limit_key, ''), k.limit_key IS NOT NULL, COALESCE(k.n, 0)
  FROM clock, _sky_durable_flow f
  LEFT JOIN LATERAL (
    SELECT r.limit_key, count(*) AS n FROM _sky_durable_runs r
     WHERE r.workflow = f.workflow AND r.status = 'running'
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
