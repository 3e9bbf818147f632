package sqlite

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// Time travel (store.TimeTravel): fork and rewind, each one transaction
// (SQLite's single writer). A list parameter is one JSON array (sqliteList).

// sqliteList is the set of values a JSON array parameter holds.
const sqliteList = `(SELECT value FROM json_each(?))`

// sqliteClock is the CTE a statement that takes the time first starts
// with (store.TimeTravelSQL's (at) statements).
const sqliteClock = `WITH clock AS (SELECT ? AS now)`

const sqliteForkRun = sqliteClock + `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at,
                               priority, limit_key, forked_from, fork_step)
SELECT ?, o.workflow, o.version, ` + store.SQLWaiting + `, o.input, 0, clock.now, '', clock.now, clock.now, o.priority, o.limit_key, o.id, ?
  FROM _sky_durable_runs o, clock
 WHERE o.id = ?
ON CONFLICT (id) DO NOTHING`

const sqliteForkJournal = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, j.step_id, j.kind, j.result, j.created_at, j.seq FROM _sky_durable_journal j WHERE j.run_id = ? AND j.seq < ?`

const sqliteForkSet = sqliteClock + `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, ?, ?, ?, clock.now, ? FROM clock`

const sqliteForkSignals = `
INSERT INTO _sky_durable_signals (run_id, name, payload, delivered, created_at)
SELECT ?, s.name, s.payload, s.delivered AND s.name IN ` + sqliteList + `, s.created_at
  FROM _sky_durable_signals s WHERE s.run_id = ?`

const sqliteForkEvents = `
INSERT INTO _sky_durable_events (run_id, key, value, updated_at)
SELECT ?, e.key, e.value, e.updated_at FROM _sky_durable_events e WHERE e.run_id = ? AND e.key IN ` + sqliteList

// sqliteCutChildren reads the children of a run started before a cut: by
// id (startChild) or group (all).
const sqliteCutChildren = `
SELECT c.id, c.status FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND (c.id IN ` + sqliteList + ` OR c.child_group IN ` + sqliteList + `)
 ORDER BY c.created_at, c.id`

// sqliteForkChildren copies finished children under the fork: the new id
// is the fork's id followed by the child's "/key".
const sqliteForkChildren = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, attempts, wake_at, waiting_signal, last_error,
                               created_at, updated_at, parent_id, child_group, priority, limit_key, forked_from)
SELECT ? || substr(c.id, ?), c.workflow, c.version, c.status, c.input, c.output, c.attempts, c.wake_at,
       c.waiting_signal, c.last_error, c.created_at, c.updated_at, ?, c.child_group, c.priority, c.limit_key, c.id
  FROM _sky_durable_runs c WHERE c.id IN ` + sqliteList + `
ON CONFLICT (id) DO NOTHING`

const sqliteForkChildJournals = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ? || substr(j.run_id, ?), j.step_id, j.kind, j.result, j.created_at, j.seq
  FROM _sky_durable_journal j WHERE j.run_id IN ` + sqliteList

const sqliteRewindable = `
SELECT r.id FROM _sky_durable_runs r
 WHERE r.id = ? AND r.status IN (` + store.SQLRewindable + `) AND r.compacted_at IS NULL`

// sqliteRewindChild is the first unfinished child started after the cut: a
// child of the run not among those started before it.
const sqliteRewindChild = `
SELECT c.id FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND c.status NOT IN (` + store.SQLUnclaimable + `)
   AND NOT (c.id IN ` + sqliteList + ` OR COALESCE(c.child_group IN ` + sqliteList + `, FALSE))
 ORDER BY c.created_at, c.id
 LIMIT 1`

const sqliteRewindJournal = `DELETE FROM _sky_durable_journal WHERE run_id = ? AND seq >= ?`

const sqliteRewindSignals = `
UPDATE _sky_durable_signals SET delivered = FALSE
 WHERE run_id = ? AND delivered AND name NOT IN ` + sqliteList

const sqliteRewindEvents = `DELETE FROM _sky_durable_events WHERE run_id = ? AND key NOT IN ` + sqliteList

const sqliteRewindRun = sqliteClock + `
UPDATE _sky_durable_runs
   SET status = ` + store.SQLWaiting + `, output = NULL, attempts = 0, wake_at = clock.now, waiting_signal = NULL, last_error = '',
       claimed_at = NULL, lease_token = NULL, updated_at = clock.now
  FROM clock
 WHERE id = ?`

// timeTravel is this dialect's fork and rewind (store.TimeTravelSQL).
func (s *Store) timeTravel() store.TimeTravelSQL {
	return store.TimeTravelSQL{
		DB: s.d, Hook: s.hook, At: func(t time.Time) any { return ms(t) }, Record: s.recordEvent,
		InsertFork: sqliteForkRun, ForkJournal: sqliteForkJournal, ForkSet: sqliteForkSet, ForkSignals: sqliteForkSignals,
		ForkEvents: sqliteForkEvents, CutChildren: sqliteCutChildren, ForkChildren: sqliteForkChildren,
		ForkChildJournals: sqliteForkChildJournals,
		RewindLock:        sqliteRewindable, RewindChild: sqliteRewindChild, RewindJournal: sqliteRewindJournal,
		RewindSignals: sqliteRewindSignals, RewindEvents: sqliteRewindEvents, RecordPriorDone: sqliteRecordPriorDone,
		ResetRun: sqliteRewindRun,
	}
}

func (s *Store) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	return s.timeTravel().ForkRun(ctx, f, now)
}

func (s *Store) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	return s.timeTravel().RewindRun(ctx, c, now)
}
