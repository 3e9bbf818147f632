package sqlite

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Time travel (store.TimeTravel): fork and rewind, each one transaction
// (SQLite's single writer). A list parameter is one JSON array (sqliteList).

// sqliteList is the set of values a JSON array parameter holds.
const sqliteList = `(SELECT value FROM json_each(?))`

// jsonList is the JSON array of ss ("[]" for none).
func jsonList(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

const sqliteForkRun = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at,
                               priority, limit_key, forked_from, fork_step)
SELECT ?, o.workflow, o.version, ` + store.SQLWaiting + `, o.input, 0, ?, '', ?, ?, o.priority, o.limit_key, o.id, ?
  FROM _sky_durable_runs o
 WHERE o.id = ?
ON CONFLICT (id) DO NOTHING`

const sqliteForkJournal = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, j.step_id, j.kind, j.result, j.created_at, j.seq FROM _sky_durable_journal j WHERE j.run_id = ? AND j.seq < ?`

const sqliteForkSet = `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq) VALUES (?, ?, ?, ?, ?, ?)`

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

// errUnfinished rolls back a fork an unfinished child refused; ForkRun
// reports the child instead.
var errUnfinished = errors.New("durable: a child started before the cut is unfinished")

func (s *Store) ForkRun(ctx context.Context, f store.Fork, now time.Time) (string, error) {
	var unfinished string
	at := ms(now)
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		n, err := s.exec(ctx, tx, "fork", sqliteForkRun, f.NewID, at, at, at, f.Step, f.RunID)
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrRunExists
		}
		var finished []string
		if unfinished, finished, err = s.cutChildren(ctx, tx, f.Cut); err != nil {
			return err
		}
		if unfinished != "" {
			return errUnfinished
		}
		if _, err := s.exec(ctx, tx, "fork", sqliteForkJournal, f.NewID, f.RunID, f.Seq); err != nil {
			return err
		}
		if f.Set != nil {
			if _, err := s.exec(ctx, tx, "fork", sqliteForkSet, f.NewID, f.Set.StepID, string(f.Set.Kind), f.Set.Result, at, f.Set.Seq); err != nil {
				return err
			}
		}
		if _, err := s.exec(ctx, tx, "fork", sqliteForkSignals, f.NewID, jsonList(f.Consumed), f.RunID); err != nil {
			return err
		}
		if _, err := s.exec(ctx, tx, "fork", sqliteForkEvents, f.NewID, f.RunID, jsonList(f.Events)); err != nil {
			return err
		}
		if err := s.recordEvent(ctx, tx, f.NewID, store.EventForked, store.ActorOf(ctx), f.RunID, f.Step, now); err != nil {
			return err
		}
		if len(finished) == 0 {
			return nil
		}
		from := utf8.RuneCountInString(f.RunID) + 1
		if _, err := s.exec(ctx, tx, "fork", sqliteForkChildren, f.NewID, from, f.NewID, jsonList(finished)); err != nil {
			return err
		}
		_, err = s.exec(ctx, tx, "fork", sqliteForkChildJournals, f.NewID, from, jsonList(finished))
		return err
	})
	if errors.Is(err, errUnfinished) {
		return unfinished, nil
	}
	return "", err
}

// cutChildren reads the children started before c: the first unfinished
// one, or else all of them.
func (s *Store) cutChildren(ctx context.Context, tx *db.DB, c store.Cut) (unfinished string, finished []string, err error) {
	if len(c.Children) == 0 && len(c.Groups) == 0 {
		return "", nil, nil
	}
	s.hook("fork", sqliteCutChildren)
	kids, err := store.QueryAll(ctx, tx, sqliteCutChildren, []any{c.RunID, jsonList(c.Children), jsonList(c.Groups)},
		func(scan func(...any) error) (store.ChildState, error) {
			var k store.ChildState
			var status string
			err := scan(&k.ID, &status)
			k.Status = store.Status(status)
			return k, err
		})
	if err != nil {
		return "", nil, err
	}
	for _, k := range kids {
		if !k.Finished() {
			return k.ID, nil, nil
		}
		finished = append(finished, k.ID)
	}
	return "", finished, nil
}

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

const sqliteRewindRun = `
UPDATE _sky_durable_runs
   SET status = ` + store.SQLWaiting + `, output = NULL, attempts = 0, wake_at = ?, waiting_signal = NULL, last_error = '',
       claimed_at = NULL, lease_token = NULL, updated_at = ?
 WHERE id = ?`

func (s *Store) RewindRun(ctx context.Context, c store.Cut, now time.Time) (bool, string, error) {
	var ok bool
	var child string
	at := ms(now)
	one := func(scan func(...any) error) (string, error) {
		var id string
		err := scan(&id)
		return id, err
	}
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		s.hook("rewind", sqliteRewindable)
		ids, err := store.QueryAll(ctx, tx, sqliteRewindable, []any{c.RunID}, one)
		if err != nil || len(ids) == 0 {
			return err
		}
		s.hook("rewind", sqliteRewindChild)
		kids, err := store.QueryAll(ctx, tx, sqliteRewindChild, []any{c.RunID, jsonList(c.Children), jsonList(c.Groups)}, one)
		if err != nil {
			return err
		}
		if len(kids) > 0 {
			child = kids[0]
			return nil
		}
		for _, st := range []struct {
			sql  string
			args []any
		}{
			{sqliteRewindJournal, []any{c.RunID, c.Seq}},
			{sqliteRewindSignals, []any{c.RunID, jsonList(c.Consumed)}},
			{sqliteRewindEvents, []any{c.RunID, jsonList(c.Events)}},
			{sqliteRecordPriorDone, []any{c.RunID}},
			{sqliteRewindRun, []any{at, at, c.RunID}},
			{sqliteRecordEvent, []any{string(store.EventRewound), store.ActorOf(ctx), "", c.Step, at, c.RunID}},
		} {
			if _, err := s.exec(ctx, tx, "rewind", st.sql, st.args...); err != nil {
				return err
			}
		}
		ok = true
		return nil
	})
	return ok, child, err
}
