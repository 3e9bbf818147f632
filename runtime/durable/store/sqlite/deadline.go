package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// sqliteBeforeDeadline ends the fence of a journal write or a completion
// (its last parameter is the time): a run past its deadline (deadline_at,
// migration 0004) refuses them, so its lease holder stops at its next step
// boundary (store.ErrLeaseLost) and TimeOutRuns ends the run timed_out.
const sqliteBeforeDeadline = `
   AND (deadline_at IS NULL OR deadline_at > ?)`

// sqliteTimeOutRuns ends the overdue runs, on the deadline index, most
// overdue first; wake_at becomes infinity, like a run parked for ever.
var sqliteTimeOutRuns = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote(store.SQLTimedOut, "'"+store.ActorDeadline+"'", "attempts",
	`'the deadline passed at ' || strftime('%Y-%m-%d %H:%M:%fZ', deadline_at / 1000.0, 'unixepoch') ||
                    CASE WHEN last_error <> '' THEN '; last error: ' || last_error ELSE '' END`, "''", "?") + `,
       status = ` + store.SQLTimedOut + `, wake_at = ?, claimed_at = NULL, lease_token = NULL, waiting_signal = NULL,
       last_error = 'the deadline passed at ' || strftime('%Y-%m-%d %H:%M:%fZ', deadline_at / 1000.0, 'unixepoch') ||
                    CASE WHEN last_error <> '' THEN '; last error: ' || last_error ELSE '' END,
       updated_at = ?
 WHERE id IN (
   SELECT id FROM _sky_durable_runs INDEXED BY _sky_durable_runs_deadline
    WHERE deadline_at IS NOT NULL AND status IN (` + store.SQLClaimable + `) AND deadline_at <= ?
    ORDER BY deadline_at
    LIMIT ?)
RETURNING id`

// sqliteCancelChildren cancels the unfinished descendants (children,
// their children, ...) of the runs of a JSON array of ids, walking the
// parent index.
const sqliteCancelChildren = `
WITH RECURSIVE tree(id) AS (
  SELECT c.id FROM _sky_durable_runs c INDEXED BY _sky_durable_runs_parent
   WHERE c.parent_id IS NOT NULL AND c.parent_id IN (SELECT value FROM json_each(?))
  UNION
  SELECT c.id FROM tree t JOIN _sky_durable_runs c INDEXED BY _sky_durable_runs_parent
    ON c.parent_id IS NOT NULL AND c.parent_id = t.id)
UPDATE _sky_durable_runs
   SET status = ` + store.SQLCancelled + `, claimed_at = NULL, lease_token = NULL, updated_at = ?
 WHERE id IN (SELECT id FROM tree) AND status IN (` + store.SQLClaimable + `)`

// sqliteAnyOverdue is the sweep's probe, a read on the deadline index: a
// sweep with nothing overdue takes no write lock.
const sqliteAnyOverdue = `
SELECT EXISTS (
  SELECT 1 FROM _sky_durable_runs INDEXED BY _sky_durable_runs_deadline
   WHERE deadline_at IS NOT NULL AND status IN (` + store.SQLClaimable + `) AND deadline_at <= ?)`

// TimeOutRuns probes the deadline index and, only when a run is overdue,
// sweeps in one write transaction.
func (s *Store) TimeOutRuns(ctx context.Context, now time.Time, limit int) (int64, int64, error) {
	var overdue bool
	s.hook("timeout", sqliteAnyOverdue)
	if err := s.d.QueryRow(ctx, sqliteAnyOverdue, ms(now)).Scan(&overdue); err != nil || !overdue {
		return 0, 0, err
	}
	var timedOut, cancelled int64
	var ids []string
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		s.hook("timeout", sqliteTimeOutRuns)
		var err error
		ids, err = store.QueryStrings(ctx, tx, sqliteTimeOutRuns, []any{ms(now), store.InfinityMs, ms(now), ms(now), limit})
		if err != nil || len(ids) == 0 {
			return err
		}
		timedOut = int64(len(ids))
		js, _ := json.Marshal(ids)
		cancelled, err = s.exec(ctx, tx, "timeout", sqliteCancelChildren, string(js), ms(now))
		return err
	})
	if err == nil {
		s.finished(ctx, ids...)
	}
	return timedOut, cancelled, err
}

// sqliteProbe is Store.Probe, four index reads in one statement (the due,
// deadline and schedule indexes, the search backlog's first row), the due
// runs and ticks up to the horizon;
// its parameters are now, now + the horizon and the workflows (a JSON
// array), all in milliseconds.
const sqliteProbe = `
WITH p AS (SELECT CAST(? AS INTEGER) AS at, CAST(? AS INTEGER) AS until, ? AS names),
f AS (
  SELECT (SELECT wake_at FROM _sky_durable_runs INDEXED BY _sky_durable_runs_due
           WHERE status IN (` + store.SQLClaimable + `) AND wake_at <= (SELECT until FROM p)
             AND workflow IN (SELECT value FROM json_each((SELECT names FROM p)))
           ORDER BY wake_at LIMIT 1) AS due,
         (SELECT min(deadline_at) FROM _sky_durable_runs INDEXED BY _sky_durable_runs_deadline
           WHERE deadline_at IS NOT NULL AND status IN (` + store.SQLClaimable + `)) AS deadline,
         (SELECT min(next_at) FROM _sky_durable_schedules INDEXED BY _sky_durable_schedules_due
           WHERE next_at <= (SELECT until FROM p)
             AND workflow IN (SELECT value FROM json_each((SELECT names FROM p)))) AS tick)
SELECT COALESCE(f.due <= p.at, 0), COALESCE(f.deadline <= p.at, 0), COALESCE(f.tick <= p.at, 0),
       min(COALESCE(f.due, p.until), COALESCE(f.deadline, p.until), COALESCE(f.tick, p.until), p.until) - p.at,
       EXISTS (SELECT 1 FROM _sky_durable_search_backlog)
  FROM f, p`

func (s *Store) Probe(ctx context.Context, workflows []string, now time.Time, horizon time.Duration) (store.Probe, error) {
	var p store.Probe
	names, err := json.Marshal(append([]string{}, workflows...)) // nil: an empty array
	if err != nil {
		return p, err
	}
	s.hook("probe", sqliteProbe)
	var nextMs int64
	err = s.d.QueryRow(ctx, sqliteProbe, ms(now), ms(now)+horizon.Milliseconds(), string(names)).Scan(&p.Due, &p.Overdue, &p.SchedulesDue, &nextMs, &p.SearchBacklog)
	p.Next = time.Duration(nextMs) * time.Millisecond
	return p, err
}
