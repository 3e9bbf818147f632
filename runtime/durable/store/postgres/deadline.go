package postgres

import (
	"context"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// pgBeforeDeadline ends the fence of a journal write or a completion: a run
// past its deadline (deadline_at, migration 0004) refuses them, so its lease
// holder stops at its next step boundary (store.ErrLeaseLost) and TimeOutRuns ends
// the run timed_out.
const pgBeforeDeadline = `
   AND (r.deadline_at IS NULL OR r.deadline_at > clock.now)`

// pgClaimBeforeDeadline keeps a claim from leasing a run past its deadline.
// It tests the row the claim locked, not the rows it scans: a test in the
// scan lowered the planner's estimate of the due runs on a table without
// statistics enough to make it sort the whole due index
// (TestClaimPlanSurvivesABurstOnAFreshTable). So an overdue run the scan
// picks is left as it is, the claim takes one run fewer, and the next sweep
// (TimeOutRuns, at most DeadlineSweep later) ends it timed_out.
const pgClaimBeforeDeadline = `
     AND (r.deadline_at IS NULL OR r.deadline_at > clock.now)`

// pgTimeOutRuns ends the overdue runs (on the deadline index, most overdue
// first, skipping rows a lease holder's write is locking: the next sweep
// takes them) and cancels their unfinished descendants (a recursive walk of the parent index), in one statement; the
// ids go on as arrays, so the updates look them up by key and on the parent
// index (a join with the CTEs was planned as a scan of the whole table;
// the children's status test is NOT IN so that no status index is ANDed in,
// which would read every unfinished run). A
// timed-out run's wake_at becomes 'infinity': the due index keeps the rows
// of statuses it does not name (see pgClaimWhere), and there it sorts after
// every due run, so no claim scan reads it.
var pgTimeOutRuns = `WITH RECURSIVE ` + pgClockCTE + `,
over AS (
  SELECT r.id FROM _sky_durable_runs r
   WHERE r.deadline_at IS NOT NULL AND r.status NOT IN (` + store.SQLUnclaimable + `)
     AND r.deadline_at <= (SELECT now FROM clock)
   ORDER BY r.deadline_at
   LIMIT CAST(? AS INT)
   FOR UPDATE OF r SKIP LOCKED),
ended AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLTimedOut + `, wake_at = 'infinity', claimed_at = NULL, lease_token = NULL, waiting_signal = NULL, key_queued = FALSE,
         last_error = 'the deadline passed at ' || to_char(r.deadline_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS"Z"') ||
                      CASE WHEN r.last_error <> '' THEN '; last error: ' || r.last_error ELSE '' END,
         updated_at = clock.now, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ANY (ARRAY(SELECT id FROM over))
  RETURNING r.id, r.history_count, r.attempts, r.last_error),
ended_history AS (
  ` + pgRecord(`ended s`, `clock.now`, store.SQLTimedOut, `'`+store.ActorDeadline+`'`, `s.attempts`, `s.last_error`, `''`) + `),
` + pgTrim("ended_trim", "ended") + `,
` + pgCancelDescendants + `
SELECT (SELECT COUNT(*) FROM ended), (SELECT COUNT(*) FROM children)`

// pgCancelDescendants ends a WITH RECURSIVE statement whose CTE "ended"
// returns the ids of runs it just ended (timed out, cancelled): it cancels
// their unfinished descendants, walking the parent index one level at a
// time (the LATERAL subquery keeps each level an index lookup; a join
// with the work table was planned as a scan of the whole table), and
// returns them as "children".
const pgCancelDescendants = `tree AS (
  SELECT c.id FROM _sky_durable_runs c
   WHERE c.parent_id IS NOT NULL AND c.parent_id = ANY (ARRAY(SELECT id FROM ended))
  UNION
  SELECT c.id FROM tree t CROSS JOIN LATERAL (
    SELECT g.id FROM _sky_durable_runs g WHERE g.parent_id IS NOT NULL AND g.parent_id = t.id OFFSET 0) c),
children AS (
  UPDATE _sky_durable_runs c
     SET ` + pgCancelSets + `
    FROM clock
   WHERE c.id = ANY (ARRAY(SELECT id FROM tree))
     AND c.status NOT IN (` + store.SQLUnclaimable + `)
  RETURNING c.id)`

// pgAnyOverdue is the sweep's probe: the earliest deadline of an
// unfinished run, the first entry of the partial deadline index (min() over
// the index's predicate is planned as one index probe; an EXISTS with the
// time test was planned as a sequential scan of a table without
// statistics), so a sweep with nothing overdue — nearly every sweep — costs
// one cheap read and no lock, whatever the size of the table.
const pgAnyOverdue = pgClock + `
SELECT COALESCE((
  SELECT min(r.deadline_at) FROM _sky_durable_runs r
   WHERE r.deadline_at IS NOT NULL AND r.status NOT IN (` + store.SQLUnclaimable + `)) <= (SELECT now FROM clock), FALSE)`

// pgSweepLock lets one sweep run at a time in the cluster (a transaction
// advisory lock, tried, never waited for): a worker that finds another
// sweeping leaves the overdue runs to it.
const pgSweepLock = `SELECT pg_try_advisory_xact_lock(7362201557)`

// TimeOutRuns probes the deadline index (pgAnyOverdue); only when a run is
// overdue does it sweep (pgTimeOutRuns), in a transaction that holds the
// sweep lock and plans without JIT (withoutJIT: the recursive walk of the
// descendants is estimated at millions of rows once runs have many
// children, which made PostgreSQL JIT-compile every sweep).
func (s *Store) TimeOutRuns(ctx context.Context, now time.Time, limit int) (int64, int64, error) {
	var overdue bool
	s.hook("timeout", pgAnyOverdue)
	if err := s.d.QueryRow(ctx, pgAnyOverdue, clockArg(now)).Scan(&overdue); err != nil || !overdue {
		return 0, 0, err
	}
	var timedOut, cancelled int64
	err := s.withoutJIT(ctx, func(ctx context.Context, tx *db.DB) error {
		var mine bool
		s.hook("timeout", pgSweepLock)
		if err := tx.QueryRow(ctx, pgSweepLock).Scan(&mine); err != nil || !mine {
			return err
		}
		s.hook("timeout", pgTimeOutRuns)
		return tx.QueryRow(ctx, pgTimeOutRuns, clockArg(now), limit).Scan(&timedOut, &cancelled)
	})
	return timedOut, cancelled, err
}

// withoutJIT runs fn in a transaction whose statements PostgreSQL plans
// without JIT compilation. It is for the statements that walk a run's
// descendants (WITH RECURSIVE): the planner estimates a recursive term at
// ten times its non-recursive one, so with a hundred children per parent
// the estimate passes jit_above_cost and every execution paid hundreds of
// milliseconds of compilation for a walk that reads a few index pages
// (TestEveryStatementPlansWithoutJIT).
func (s *Store) withoutJIT(ctx context.Context, fn func(ctx context.Context, tx *db.DB) error) error {
	return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if _, err := tx.ExecRaw(ctx, `SET LOCAL jit = off`); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// pgProbe is Store.Probe, three index probes in one statement: the first
// run of the workflows on the due index up to the horizon (in wake_at
// order, so an idle queue reads no entry before it; from the claims'
// lowest floor while they are fresh, floors.go), the earliest deadline
// (pgAnyOverdue's min()) and the first schedule tick of the workflows up to
// the horizon; the answer says which is due now and how many milliseconds
// until the first one (the horizon when none comes sooner).
const pgProbe = pgClock + `,
horizon AS (SELECT now, now + CAST(? AS BIGINT) * INTERVAL '1 millisecond' AS until FROM clock),
found AS (
  SELECT (SELECT r.wake_at FROM _sky_durable_runs r
           WHERE r.status NOT IN (` + store.SQLDueIndexExcludes + `) AND r.wake_at <= (SELECT until FROM horizon)
             AND r.wake_at >= COALESCE(CAST(? AS TIMESTAMPTZ), '-infinity')
             AND r.workflow = ANY (ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB))))
           ORDER BY r.wake_at LIMIT 1) AS due,
         (SELECT min(r.deadline_at) FROM _sky_durable_runs r
           WHERE r.deadline_at IS NOT NULL AND r.status NOT IN (` + store.SQLUnclaimable + `)) AS deadline,
         (SELECT min(s.next_at) FROM _sky_durable_schedules s
           WHERE s.next_at <= (SELECT until FROM horizon)
             AND s.workflow = ANY (ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB))))) AS tick)
SELECT COALESCE(f.due <= h.now, FALSE), COALESCE(f.deadline <= h.now, FALSE), COALESCE(f.tick <= h.now, FALSE),
       CAST(ceil(extract(epoch FROM LEAST(f.due, f.deadline, f.tick, h.until) - h.now) * 1000) AS BIGINT)
  FROM found f, horizon h`

// Probe reads the due index from the claims' lowest floor while they are
// fresh, so under a held xmin horizon it skips the row versions no one
// sees, as the claims do; the quiet it allows then ends when the floors go
// stale, so a run made due below them (claimFloors) still waits at most
// floorRefresh for the next claim without floors.
func (s *Store) Probe(ctx context.Context, workflows []string, now time.Time, horizon time.Duration) (store.Probe, error) {
	var p store.Probe
	var nextMs int64
	var from any
	low, left, fresh := s.floors.lowest(now)
	if fresh {
		from = low
	}
	names := jsonText(append([]string{}, workflows...)) // nil: an empty array
	s.hook("probe", pgProbe)
	err := s.d.QueryRow(ctx, pgProbe, clockArg(now), horizon.Milliseconds(), from, names, names).Scan(&p.Due, &p.Overdue, &p.SchedulesDue, &nextMs)
	p.Next = time.Duration(nextMs) * time.Millisecond
	if fresh && p.Next > left {
		p.Next = left
	}
	return p, err
}
