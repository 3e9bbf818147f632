package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

const sqliteStatsCounts = `SELECT workflow, status, COUNT(*) FROM _sky_durable_runs GROUP BY workflow, status ORDER BY workflow, status`

// sqliteStatsStarted buckets the runs created in the window by minutes ago,
// on the listing index (created_at, id).
const sqliteStatsStarted = `
SELECT (? - created_at) / 60000, COUNT(*) FROM _sky_durable_runs INDEXED BY _sky_durable_runs_list
 WHERE created_at > ? AND created_at <= ? AND ` + store.ScopeID + ` GROUP BY 1`

// sqliteStatsFinished buckets the runs that ended in the window: a finished
// run is not updated again until compaction, so updated_at is its end.
const sqliteStatsFinished = `
SELECT (? - updated_at) / 60000, COUNT(*) FROM _sky_durable_runs
 WHERE status IN (` + store.SQLUnclaimable + `) AND updated_at > ? AND updated_at <= ? AND ` + store.ScopeID + ` GROUP BY 1`

// sqliteStatsHolds are the limits that hold due runs back at a time (the
// first parameter; the next two are the oldest claimed_at of a live lease):
// the limited workflows that are closed (at their concurrency, or their
// rate limit's next claim not come) and the perKey keys at their limit,
// counted on the workflow status list and the running keys' index.
// sqliteStatsHeld is a due run (alias r) they hold back.
const (
	sqliteStatsHolds = `WITH
closed AS (
  SELECT f.workflow FROM _sky_durable_flow f
   WHERE (f.rate_per_second IS NOT NULL AND f.next_claim_at > ?)
      OR (f.concurrency IS NOT NULL AND f.concurrency <= (
           SELECT count(*) FROM _sky_durable_runs y INDEXED BY _sky_durable_runs_workflow_status_list
            WHERE y.workflow = f.workflow AND y.status = ` + store.SQLRunning + ` AND y.claimed_at >= ?))),
full_keys AS (
  SELECT y.workflow, y.limit_key FROM _sky_durable_flow f JOIN _sky_durable_runs y INDEXED BY _sky_durable_runs_running_keys ON y.workflow = f.workflow
   WHERE f.per_key IS NOT NULL AND y.status = ` + store.SQLRunning + ` AND y.limit_key IS NOT NULL AND y.claimed_at >= ?
   GROUP BY y.workflow, y.limit_key, f.per_key
  HAVING count(*) >= f.per_key)`
	sqliteStatsHeld = `(r.workflow IN (SELECT c.workflow FROM closed c)
       OR (r.limit_key IS NOT NULL AND (r.workflow, r.limit_key) IN (SELECT k.workflow, k.limit_key FROM full_keys k)))`
	sqliteStatsDueRun = `
  FROM _sky_durable_runs r
 WHERE r.status IN (` + store.SQLClaimable + `) AND r.status <> ` + store.SQLRunning + ` AND r.wake_at <= ?
   AND ` + store.ScopeRunsID
)

// sqliteStatsDue reads the due index: the claimable runs due longest, but
// for those a limit holds back, which sqliteStatsHeldCount counts.
const sqliteStatsDue = sqliteStatsHolds + `
SELECT r.id, r.workflow, r.wake_at, r.claimed_by` + sqliteStatsDueRun + ` AND NOT ` + sqliteStatsHeld + `
 ORDER BY r.wake_at LIMIT 1`

const sqliteStatsHeldCount = sqliteStatsHolds + `
SELECT count(*)` + sqliteStatsDueRun + ` AND ` + sqliteStatsHeld

// sqliteStatsStuck reads the due index for running runs whose lease ended.
const sqliteStatsStuck = `
SELECT id, workflow, wake_at, claimed_by FROM _sky_durable_runs
 WHERE status IN (` + store.SQLClaimable + `) AND status = ` + store.SQLRunning + ` AND wake_at <= ?
   AND (claimed_at IS NULL OR claimed_at < ?) AND ` + store.ScopeID + `
 ORDER BY wake_at`

func (s *Store) Stats(ctx context.Context, now time.Time, minutes int, lease time.Duration, scope store.Scope) (store.Stats, error) {
	st := store.Stats{Now: now}
	s.hook("stats", sqliteStatsCounts)
	var err error
	st.Counts, err = store.QueryAll(ctx, s.d, sqliteStatsCounts, nil, func(scan func(...any) error) (store.StatusCount, error) {
		var c store.StatusCount
		var status string
		err := scan(&c.Workflow, &status, &c.N)
		c.Status = store.Status(status)
		return c, err
	})
	if err != nil {
		return st, err
	}
	from := ms(now) - int64(minutes)*60000
	for _, q := range []struct {
		sql  string
		into *[]int
	}{{sqliteStatsStarted, &st.Started}, {sqliteStatsFinished, &st.Finished}} {
		s.hook("stats", q.sql)
		rows, err := store.QueryAll(ctx, s.d, q.sql, append([]any{ms(now), from, ms(now)}, scope.Args()...), func(scan func(...any) error) ([2]int, error) {
			var r [2]int
			return r, scan(&r[0], &r[1])
		})
		if err != nil {
			return st, err
		}
		*q.into = store.Buckets(minutes, rows)
	}
	due := func(scan func(...any) error) (store.DueRun, error) {
		var r store.DueRun
		var wake int64
		err := scan(&r.ID, &r.Workflow, &wake, &r.ClaimedBy)
		r.WakeAt = store.FromMs(wake)
		return r, err
	}
	s.hook("stats", sqliteStatsDue)
	oldest, err := store.QueryAll(ctx, s.d, sqliteStatsDue, append([]any{ms(now), ms(now.Add(-lease)), ms(now.Add(-lease)), ms(now)}, scope.Args()...), due)
	if err != nil {
		return st, err
	}
	s.hook("stats", sqliteStatsHeldCount)
	if err := s.d.QueryRow(ctx, sqliteStatsHeldCount, append([]any{ms(now), ms(now.Add(-lease)), ms(now.Add(-lease)), ms(now)}, scope.Args()...)...).Scan(&st.Held); err != nil {
		return st, err
	}
	if len(oldest) > 0 {
		st.OldestDue = &oldest[0]
	}
	s.hook("stats", sqliteStatsStuck)
	stuck, err := store.QueryAll(ctx, s.d, sqliteStatsStuck, append([]any{ms(now), ms(now.Add(-lease))}, scope.Args()...), due)
	st.StuckCount = len(stuck)
	st.Stuck = stuck[:min(len(stuck), store.StuckLimit)]
	return st, err
}

const sqliteDueBacklog = `SELECT COUNT(*) FROM _sky_durable_runs
 WHERE status IN (` + store.SQLClaimable + `) AND status <> ` + store.SQLRunning + ` AND wake_at <= ?
   AND ` + store.ScopeID

func (s *Store) DueBacklog(ctx context.Context, now time.Time, scope store.Scope) (int64, error) {
	var n int64
	s.hook("backlog", sqliteDueBacklog)
	return n, s.d.QueryRow(ctx, sqliteDueBacklog, append([]any{ms(now)}, scope.Args()...)...).Scan(&n)
}
