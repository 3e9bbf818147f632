package postgres

import (
	"context"
	"time"

	"skydurable/runtime/durable/store"
)

// Time travel (store.TimeTravel): fork and rewind, each one transaction of
// statements on the primary keys, the journal order index and the parent
// index; store.TimeTravelSQL runs them. A list parameter is one JSON array
// (pgList), as the claim's.

// pgList is the text array a JSON array parameter holds.
const pgList = `ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB)))`

const pgForkRun = pgClock + `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at,
                               priority, limit_key, forked_from, fork_step)
SELECT ?, o.workflow, o.version, ` + store.SQLWaiting + `, o.input, 0, clock.now, '', clock.now, clock.now, o.priority, o.limit_key, o.id, ?
  FROM _sky_durable_runs o, clock
 WHERE o.id = ?
ON CONFLICT (id) DO NOTHING`

const pgForkJournal = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, j.step_id, j.kind, j.result, j.created_at, j.seq FROM _sky_durable_journal j WHERE j.run_id = ? AND j.seq < ?`

const pgForkSet = pgClock + `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, ?, ?, ?, clock.now, ? FROM clock`

const pgForkSignals = `
INSERT INTO _sky_durable_signals (run_id, name, payload, delivered, created_at)
SELECT ?, s.name, s.payload, s.delivered AND s.name = ANY (` + pgList + `), s.created_at
  FROM _sky_durable_signals s WHERE s.run_id = ?`

const pgForkEvents = `
INSERT INTO _sky_durable_events (run_id, key, value, updated_at)
SELECT ?, e.key, e.value, e.updated_at FROM _sky_durable_events e WHERE e.run_id = ? AND e.key = ANY (` + pgList + `)`

// pgCutChildren reads the children of a run started before a cut: by id
// (startChild) or group (all), on the parent index.
const pgCutChildren = `
SELECT c.id, c.status FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND (c.id = ANY (` + pgList + `) OR c.child_group = ANY (` + pgList + `))
 ORDER BY c.created_at, c.id`

// pgForkChildren copies finished children under the fork: the new id is
// the fork's id followed by the child's "/key" (substr from the character
// after the original's id).
const pgForkChildren = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, attempts, wake_at, waiting_signal, last_error,
                               created_at, updated_at, parent_id, child_group, priority, limit_key, forked_from)
SELECT CAST(? AS TEXT) || substr(c.id, ?), c.workflow, c.version, c.status, c.input, c.output, c.attempts, c.wake_at,
       c.waiting_signal, c.last_error, c.created_at, c.updated_at, ?, c.child_group, c.priority, c.limit_key, c.id
  FROM _sky_durable_runs c WHERE c.id = ANY (` + pgList + `)
ON CONFLICT (id) DO NOTHING`

const pgForkChildJournals = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT CAST(? AS TEXT) || substr(j.run_id, ?), j.step_id, j.kind, j.result, j.created_at, j.seq
  FROM _sky_durable_journal j WHERE j.run_id = ANY (` + pgList + `)`

const pgRewindLock = `
SELECT r.id FROM _sky_durable_runs r
 WHERE r.id = ? AND r.status IN (` + store.SQLRewindable + `) AND r.compacted_at IS NULL
   FOR UPDATE`

// pgRewindChild is the first unfinished child started after the cut: a
// child of the run not among those started before it.
const pgRewindChild = `
SELECT c.id FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND c.status NOT IN (` + store.SQLUnclaimable + `)
   AND NOT (c.id = ANY (` + pgList + `) OR COALESCE(c.child_group = ANY (` + pgList + `), FALSE))
 ORDER BY c.created_at, c.id
 LIMIT 1`

const pgRewindJournal = `DELETE FROM _sky_durable_journal j WHERE j.run_id = ? AND j.seq >= ?`

const pgRewindSignals = `
UPDATE _sky_durable_signals s SET delivered = FALSE
 WHERE s.run_id = ? AND s.delivered AND NOT (s.name = ANY (` + pgList + `))`

const pgRewindEvents = `DELETE FROM _sky_durable_events e WHERE e.run_id = ? AND NOT (e.key = ANY (` + pgList + `))`

const pgRewindRun = pgClock + `
UPDATE _sky_durable_runs r
   SET status = ` + store.SQLWaiting + `, output = NULL, attempts = 0, wake_at = clock.now, waiting_signal = NULL, last_error = '',
       claimed_at = NULL, lease_token = NULL, updated_at = clock.now
  FROM clock
 WHERE r.id = ?`

// timeTravel is this dialect's fork and rewind (store.TimeTravelSQL).
func (s *Store) timeTravel() store.TimeTravelSQL {
	return store.TimeTravelSQL{
		DB: s.d, Hook: s.hook, At: clockArg, Record: s.recordEvent,
		InsertFork: pgForkRun, ForkJournal: pgForkJournal, ForkSet: pgForkSet, ForkSignals: pgForkSignals,
		ForkEvents: pgForkEvents, CutChildren: pgCutChildren, ForkChildren: pgForkChildren,
		ForkChildJournals: pgForkChildJournals,
		RewindLock:        pgRewindLock, RewindChild: pgRewindChild, RewindJournal: pgRewindJournal,
		RewindSignals: pgRewindSignals, RewindEvents: pgRewindEvents, RecordPriorDone: pgRecordPriorDone,
		ResetRun: pgRewindRun,
	}
}

func (s *Store) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	return s.timeTravel().ForkRun(ctx, f, now)
}

func (s *Store) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	return s.timeTravel().RewindRun(ctx, c, now)
}
