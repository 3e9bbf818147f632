package postgres

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// The children of one Durable.all (or the one of a startChild) are inserted
// by one statement whatever their number: the list is one JSON parameter.
const pgInsertChildren = pgClock + `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, parent_id, child_group, limit_key)
SELECT c.id, ?, ?, ` + store.SQLWaiting + `, c.input, 0, clock.now, '', ` + pgCreatedAt + `, clock.now, ?, NULLIF(?, ''), c.limit_key
  FROM clock, json_to_recordset(CAST(? AS JSON)) AS c(id TEXT, input TEXT, limit_key TEXT)
ON CONFLICT (id) DO NOTHING`

func (s *Store) InsertChildren(ctx context.Context, q *db.DB, parentID, group, workflow string, version int, children []store.NewChild, now time.Time) (int64, error) {
	list, err := json.Marshal(children)
	if err != nil {
		return 0, err
	}
	return s.exec(ctx, q, "children", pgInsertChildren, clockArg(now), workflow, version, parentID, group, string(list))
}

const pgReadChildren = `SELECT id, workflow, COALESCE(parent_id, ''), COALESCE(child_group, ''), status, COALESCE(output, ''), last_error
  FROM _sky_durable_runs WHERE id = ANY (ARRAY(SELECT jsonb_array_elements_text(CAST(? AS JSONB))))`

func (s *Store) ReadChildren(ctx context.Context, ids []string) ([]store.ChildState, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	s.hook("children.read", pgReadChildren)
	return store.QueryAll(ctx, s.d, pgReadChildren, []any{string(list)}, store.ScanChild)
}

// pgAwaitChildren parks a parent; it is due at once when what it waits for
// is already there (the predicate, on r, reads one parameter).
// It records the suspension (pgParkedHistory).
func pgAwaitChildren(ready string) string {
	return pgClock + `,
parked AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLWaiting + `, attempts = 0, last_error = '', claimed_at = NULL, lease_token = NULL, updated_at = clock.now,
         waiting_signal = CAST(? AS TEXT), history_count = r.history_count + 1,
         wake_at = CASE WHEN ` + ready + ` THEN clock.now ELSE 'infinity' END
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?
  RETURNING r.id, r.history_count, r.claimed_by),
` + pgParkedHistory
}

var (
	pgAwaitChild = pgAwaitChildren(`EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.id = CAST(? AS TEXT) AND c.status IN (` + store.SQLUnclaimable + `))`)
	// A group is ready when none of it is unfinished or one of it ended
	// dead or cancelled (the group parameter comes twice).
	pgAwaitGroup = pgAwaitChildren(`(NOT EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.parent_id = r.id AND c.child_group = CAST(? AS TEXT) AND c.status NOT IN (` + store.SQLUnclaimable + `))
     OR EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.parent_id = r.id AND c.child_group = CAST(? AS TEXT) AND c.status IN (` + store.SQLEndedUnsuccessfully + `)))`)
)

// The unfinished children a parent awaits, locked FOR SHARE: a child
// finishing in a transaction still in flight is waited for.
const (
	pgLockUnfinishedChild = `SELECT 1 FROM _sky_durable_runs c
 WHERE c.id = ? AND c.status NOT IN (` + store.SQLUnclaimable + `) FOR SHARE`
	pgLockUnfinishedGroup = `SELECT 1 FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND c.child_group = ? AND c.status NOT IN (` + store.SQLUnclaimable + `) FOR SHARE`
)

func (s *Store) AwaitChildren(ctx context.Context, f store.Fence, w store.ChildWait, now time.Time) error {
	sql, args := pgAwaitChild, []any{clockArg(now), w.Marker(), w.ChildID}
	lock, lockArgs := pgLockUnfinishedChild, []any{w.ChildID}
	if w.Group != "" {
		sql, args = pgAwaitGroup, []any{clockArg(now), w.Marker(), w.Group, w.Group}
		lock, lockArgs = pgLockUnfinishedGroup, []any{f.RunID, w.Group}
	}
	// The fence first (the run row), then the unfinished children FOR
	// SHARE, so the check below (a statement of its own, with a snapshot
	// taken after the locks) sees every child that finished before; the
	// trigger of migration 0005 wakes the parent for those that finish
	// after. See that migration for why nothing here can deadlock.
	return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if err := s.lockRun(ctx, tx, f); err != nil {
			return err
		}
		s.hook("await", lock)
		rs, err := tx.Query(ctx, lock, lockArgs...)
		if err != nil {
			return err
		}
		rs.Close()
		n, err := s.exec(ctx, tx, "await", sql, append(args, f.RunID, f.Token, w.Detail())...)
		return store.LeaseChecked(n, err)
	})
}

const pgPutEvent = pgClock + `
INSERT INTO _sky_durable_events (run_id, key, value, updated_at)
SELECT ?, ?, ?, clock.now FROM clock
ON CONFLICT (run_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at`

func (s *Store) PutEvent(ctx context.Context, q *db.DB, runID, key, value string, now time.Time) error {
	_, err := s.exec(ctx, q, "event", pgPutEvent, clockArg(now), runID, key, value)
	return err
}

const pgGetEvent = `SELECT value FROM _sky_durable_events WHERE run_id = ? AND key = ?`

func (s *Store) GetEvent(ctx context.Context, runID, key string) (string, bool, error) {
	s.hook("event", pgGetEvent)
	return store.QueryEvent(ctx, s.d, pgGetEvent, runID, key)
}
