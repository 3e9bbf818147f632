package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// pgStatsNow fixes the one clock reading every figure is relative to.
const pgStatsNow = `SELECT COALESCE(CAST(? AS TIMESTAMPTZ), clock_timestamp())`

const pgStatsCounts = `SELECT workflow, status, COUNT(*) FROM _sky_durable_runs GROUP BY workflow, status ORDER BY workflow, status`

// pgStatsStarted buckets the runs created in the window by minutes ago, a
// range of the listing index (created_at, id).
const pgStatsStarted = `
SELECT CAST(floor(extract(epoch FROM CAST(? AS TIMESTAMPTZ) - created_at) / 60) AS INT), COUNT(*)
  FROM _sky_durable_runs
 WHERE created_at > ? AND created_at <= ? AND ` + store.ScopeID + ` GROUP BY 1`

// pgStatsFinished buckets the runs that ended in the window: a finished run
// is not updated again until compaction, so updated_at is its end.
const pgStatsFinished = `
SELECT CAST(floor(extract(epoch FROM CAST(? AS TIMESTAMPTZ) - updated_at) / 60) AS INT), COUNT(*)
  FROM _sky_durable_runs
 WHERE status IN (` + store.SQLUnclaimable + `) AND updated_at > ? AND updated_at <= ? AND ` + store.ScopeID + ` GROUP BY 1`

// pgStatsHolds are the limits that hold due runs back at a time (the
// first parameter; the next two are the oldest claimed_at of a live lease):
// the limited workflows that are closed (at their concurrency, or their
// rate limit's next claim not come) and the perKey keys at their limit,
// counted on the running index. pgStatsHeld is a due run (alias r) they
// hold back.
const (
	pgStatsHolds = `WITH
closed AS MATERIALIZED (
  SELECT f.workflow FROM _sky_durable_flow f
   WHERE (f.rate_per_second IS NOT NULL AND f.next_claim_at > CAST(? AS TIMESTAMPTZ))
      OR (f.concurrency IS NOT NULL AND f.concurrency <= (
           SELECT count(*) FROM _sky_durable_runs y
            WHERE y.workflow = f.workflow AND y.status = ` + store.SQLRunning + ` AND y.claimed_at >= CAST(? AS TIMESTAMPTZ)))),
full_keys AS MATERIALIZED (
  SELECT y.workflow, y.limit_key FROM _sky_durable_flow f JOIN _sky_durable_runs y ON y.workflow = f.workflow
   WHERE f.per_key IS NOT NULL AND y.status = ` + store.SQLRunning + ` AND y.limit_key IS NOT NULL AND y.claimed_at >= CAST(? AS TIMESTAMPTZ)
   GROUP BY y.workflow, y.limit_key, f.per_key
  HAVING count(*) >= f.per_key)`
	pgStatsHeld = `(r.workflow IN (SELECT c.workflow FROM closed c)
       OR (r.limit_key IS NOT NULL AND (r.workflow, r.limit_key) IN (SELECT k.workflow, k.limit_key FROM full_keys k)))`
	pgStatsDueRun = `
  FROM _sky_durable_runs r
 WHERE r.status NOT IN (` + store.SQLDueIndexExcludes + `) AND r.status <> ` + store.SQLRunning + ` AND r.wake_at <= CAST(? AS TIMESTAMPTZ)
   AND ` + store.ScopeRunsID
)

// pgStatsDue and pgStatsStuck walk the due index (its predicate written as
// the claim writes it, see pgClaimWhere) from the oldest wake time;
// pgStatsDue skips the runs a limit holds back, which pgStatsHeldCount
// counts.
const pgStatsDue = pgStatsHolds + `
SELECT r.id, r.workflow, r.wake_at, r.claimed_by` + pgStatsDueRun + ` AND NOT ` + pgStatsHeld + `
 ORDER BY r.wake_at LIMIT 1`

const pgStatsHeldCount = pgStatsHolds + `
SELECT count(*)` + pgStatsDueRun + ` AND ` + pgStatsHeld

const pgStatsStuck = `
SELECT id, workflow, wake_at, claimed_by FROM _sky_durable_runs
 WHERE status NOT IN (` + store.SQLDueIndexExcludes + `) AND status = ` + store.SQLRunning + ` AND wake_at <= ?
   AND (claimed_at IS NULL OR claimed_at < ?) AND ` + store.ScopeID + `
 ORDER BY wake_at`

func (s *Store) Stats(ctx context.Context, now time.Time, minutes int, lease time.Duration, scope store.Scope) (store.Stats, error) {
	var st store.Stats
	s.hook("stats", pgStatsNow)
	if err := s.d.QueryRow(ctx, pgStatsNow, clockArg(now)).Scan(&st.Now); err != nil {
		return st, err
	}
	now = st.Now
	s.hook("stats", pgStatsCounts)
	var err error
	st.Counts, err = store.QueryAll(ctx, s.d, pgStatsCounts, nil, func(scan func(...any) error) (store.StatusCount, error) {
		var c store.StatusCount
		var status string
		err := scan(&c.Workflow, &status, &c.N)
		c.Status = store.Status(status)
		return c, err
	})
	if err != nil {
		return st, err
	}
	from := now.Add(-time.Duration(minutes) * time.Minute)
	for _, q := range []struct {
		sql  string
		into *[]int
	}{{pgStatsStarted, &st.Started}, {pgStatsFinished, &st.Finished}} {
		s.hook("stats", q.sql)
		rows, err := store.QueryAll(ctx, s.d, q.sql, append([]any{now, from, now}, scope.Args()...), func(scan func(...any) error) ([2]int, error) {
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
		return r, scan(&r.ID, &r.Workflow, &r.WakeAt, &r.ClaimedBy)
	}
	since := now.Add(-lease)
	s.hook("stats", pgStatsDue)
	oldest, err := store.QueryAll(ctx, s.d, pgStatsDue, append([]any{now, since, since, now}, scope.Args()...), due)
	if err != nil {
		return st, err
	}
	s.hook("stats", pgStatsHeldCount)
	if err := s.d.QueryRow(ctx, pgStatsHeldCount, append([]any{now, since, since, now}, scope.Args()...)...).Scan(&st.Held); err != nil {
		return st, err
	}
	if len(oldest) > 0 {
		st.OldestDue = &oldest[0]
	}
	s.hook("stats", pgStatsStuck)
	stuck, err := store.QueryAll(ctx, s.d, pgStatsStuck, append([]any{now, since}, scope.Args()...), due)
	st.StuckCount = len(stuck)
	st.Stuck = stuck[:min(len(stuck), store.StuckLimit)]
	return st, err
}

const pgDueBacklog = pgClock + `
SELECT COUNT(*) FROM _sky_durable_runs
 WHERE status NOT IN (` + store.SQLDueIndexExcludes + `) AND status <> ` + store.SQLRunning + ` AND wake_at <= (SELECT now FROM clock)
   AND ` + store.ScopeID

func (s *Store) DueBacklog(ctx context.Context, now time.Time, scope store.Scope) (int64, error) {
	var n int64
	s.hook("backlog", pgDueBacklog)
	return n, s.d.QueryRow(ctx, pgDueBacklog, append([]any{clockArg(now)}, scope.Args()...)...).Scan(&n)
}
