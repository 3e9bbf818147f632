package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/durable/store"
)

// Flow control on SQLite. The claim runs under SQLite's single writer lock,
// so it counts the running runs itself: a workflow's on the workflow status
// list, a limit key's on the index of the running runs with a key
// (migration 0019: a run without a key writes no entry there); the trigger
// of migration 0006 moves a rate-limited workflow's next claim time on in the
// claim's own statement.

// sqliteLimitsOK is the condition a run (alias a) of a limited workflow
// must pass to be claimed; it reads three parameters: the time, and twice
// the oldest claimed_at of a live lease.
func sqliteLimitsOK(a string) string {
	return `
      AND NOT EXISTS (SELECT 1 FROM _sky_durable_flow f WHERE f.workflow = ` + a + `.workflow AND (
            (f.rate_per_second IS NOT NULL AND f.next_claim_at > ?)
         OR (f.concurrency IS NOT NULL AND f.concurrency <= (
              SELECT count(*) FROM _sky_durable_runs y INDEXED BY _sky_durable_runs_workflow_status_list
               WHERE y.workflow = ` + a + `.workflow AND y.status = ` + store.SQLRunning + ` AND y.claimed_at >= ?))
         OR (f.per_key IS NOT NULL AND ` + a + `.limit_key IS NOT NULL AND f.per_key <= (
              SELECT count(*) FROM _sky_durable_runs y INDEXED BY _sky_durable_runs_running_keys
               WHERE y.workflow = ` + a + `.workflow AND y.limit_key = ` + a + `.limit_key AND y.status = ` + store.SQLRunning + ` AND y.claimed_at >= ?))))`
}

const sqliteDeclareLimits = `
INSERT INTO _sky_durable_flow (workflow, concurrency, per_key, rate_per_second, updated_at)
VALUES (?, NULLIF(?, 0), NULLIF(?, 0), NULLIF(?, 0.0), ?)
ON CONFLICT (workflow) DO UPDATE SET concurrency = excluded.concurrency, per_key = excluded.per_key,
  rate_per_second = excluded.rate_per_second, updated_at = excluded.updated_at`

const sqliteDropLimits = `DELETE FROM _sky_durable_flow WHERE workflow = ?`

func (s *Store) DeclareLimits(ctx context.Context, l store.Limits, now time.Time) error {
	if l.None() {
		_, err := s.exec(ctx, s.d, "limits", sqliteDropLimits, l.Workflow)
		return err
	}
	_, err := s.exec(ctx, s.d, "limits", sqliteDeclareLimits, l.Workflow, l.Concurrency, l.PerKey, l.RatePerSecond, ms(now))
	return err
}

// sqliteNextToken is the earliest next claim time after now of rate
// limits among workflows (0: none).
const sqliteNextToken = `
SELECT COALESCE(min(next_claim_at), 0) FROM _sky_durable_flow
 WHERE workflow IN (SELECT value FROM json_each(?)) AND next_claim_at > ?`

// ClaimLimited is one statement, as the claim without limits, and a second
// (the next token) when it claims nothing and c.Rated names a workflow.
func (s *Store) ClaimLimited(ctx context.Context, c store.LimitedClaim, now time.Time) (store.Claimed, bool, time.Duration, error) {
	sql, pick := sqliteClaimLimited, any(c.Names)
	if c.Pinned {
		sql, pick = sqliteClaimLimitedPinned, c.Keys
	}
	js, _ := json.Marshal(pick)
	cl, ok, err := s.claimWith(ctx, sql, true, string(js), now, c.Lease, c.Token, c.Worker)
	if err != nil || ok || len(c.Rated) == 0 {
		return cl, ok, 0, err
	}
	s.hook("limits", sqliteNextToken)
	rated, _ := json.Marshal(c.Rated)
	var next int64
	if err := s.d.QueryRow(ctx, sqliteNextToken, string(rated), ms(now)).Scan(&next); err != nil || next == 0 {
		return store.Claimed{}, false, 0, err
	}
	return store.Claimed{}, false, store.FromMs(next).Sub(now), nil
}

const sqliteFlowStates = `
SELECT f.workflow, COALESCE(f.concurrency, 0), COALESCE(f.per_key, 0), COALESCE(f.rate_per_second, 0),
       COALESCE(f.next_claim_at, 0), COALESCE(k.limit_key, ''), k.limit_key IS NOT NULL, COALESCE(k.n, 0)
  FROM _sky_durable_flow f
  LEFT JOIN (
    SELECT r.workflow, r.limit_key, count(*) AS n FROM _sky_durable_runs r INDEXED BY _sky_durable_runs_status_list
     WHERE r.status = ` + store.SQLRunning + ` AND r.claimed_at >= ?
     GROUP BY r.workflow, r.limit_key) k ON k.workflow = f.workflow
 WHERE f.workflow IN (SELECT value FROM json_each(?))
 ORDER BY f.workflow`

func (s *Store) FlowStates(ctx context.Context, workflows []string, lease time.Duration, now time.Time) ([]store.FlowState, error) {
	s.hook("limits", sqliteFlowStates)
	names, _ := json.Marshal(workflows)
	type row struct {
		st     store.FlowState
		key    string
		keyed  bool
		n      int
		nextAt int64
	}
	rows, err := store.QueryAll(ctx, s.d, sqliteFlowStates, []any{ms(now.Add(-lease)), string(names)}, func(scan func(...any) error) (row, error) {
		var r row
		err := scan(&r.st.Workflow, &r.st.Concurrency, &r.st.PerKey, &r.st.RatePerSecond, &r.nextAt, &r.key, &r.keyed, &r.n)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	return store.FoldFlowStates(len(rows), func(i int) (store.FlowState, string, bool, int) {
		r := rows[i]
		r.st.Now = now
		if r.nextAt != 0 {
			r.st.NextClaimAt = store.FromMs(r.nextAt)
		}
		return r.st, r.key, r.keyed, r.n
	}), nil
}

// sqliteSaveRates reads the rate columns of rated workflows as one JSON
// object each (rate_log, JSON text itself, as a string in it);
// sqliteRestoreRate puts them back ("": NULL, no claim yet).
const sqliteSaveRates = `
SELECT workflow, json_object('grid', rate_grid, 'log', rate_log, 'next', next_claim_at)
  FROM _sky_durable_flow
 WHERE rate_per_second IS NOT NULL AND workflow IN (SELECT value FROM json_each(?))
 ORDER BY workflow`

const sqliteRestoreRate = `
UPDATE _sky_durable_flow
   SET rate_grid = json_extract(NULLIF(?, ''), '$.grid'), rate_log = json_extract(NULLIF(?, ''), '$.log'),
       next_claim_at = json_extract(NULLIF(?, ''), '$.next')
 WHERE workflow = ?`

func (s *Store) SaveRates(ctx context.Context, workflows []string) ([]store.RateState, error) {
	s.hook("limits", sqliteSaveRates)
	names, _ := json.Marshal(workflows)
	return store.QueryAll(ctx, s.d, sqliteSaveRates, []any{string(names)}, func(scan func(...any) error) (store.RateState, error) {
		var r store.RateState
		err := scan(&r.Workflow, &r.State)
		return r, err
	})
}

func (s *Store) RestoreRates(ctx context.Context, states []store.RateState) error {
	for _, r := range states {
		if _, err := s.exec(ctx, s.d, "limits", sqliteRestoreRate, r.State, r.State, r.State, r.Workflow); err != nil {
			return err
		}
	}
	return nil
}
