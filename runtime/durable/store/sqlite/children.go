package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// The children of one Durable.all (or the one of a startChild) are inserted
// by one statement whatever their number: the list is one JSON parameter.
const sqliteInsertChildren = `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, parent_id, child_group, limit_key)
SELECT json_extract(c.value, '$.id'), ?, ?, ` + store.SQLWaiting + `, json_extract(c.value, '$.input'), 0, ?, '', ?, ?, ?, NULLIF(?, ''), json_extract(c.value, '$.limit_key')
  FROM json_each(?) AS c
 WHERE TRUE
ON CONFLICT (id) DO NOTHING`

func (s *Store) InsertChildren(ctx context.Context, q *db.DB, parentID, group, workflow string, version int, children []store.NewChild, now time.Time) (int64, error) {
	list, err := json.Marshal(children)
	if err != nil {
		return 0, err
	}
	at := ms(now)
	return s.exec(ctx, q, "children", sqliteInsertChildren, workflow, version, at, at, at, parentID, group, string(list))
}

const sqliteReadChildren = `SELECT id, workflow, COALESCE(parent_id, ''), COALESCE(child_group, ''), status, COALESCE(output, ''), last_error
  FROM _sky_durable_runs WHERE id IN (SELECT value FROM json_each(?))`

func (s *Store) ReadChildren(ctx context.Context, ids []string) ([]store.ChildState, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	s.hook("children.read", sqliteReadChildren)
	return store.QueryAll(ctx, s.d, sqliteReadChildren, []any{string(list)}, store.ScanChild)
}

// sqliteAwaitChildren parks a parent; it is due at once when what it waits
// for is already there (the predicate reads its parameters).
func sqliteAwaitChildren(ready string) string {
	return `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("'suspended'", "NULL", "attempts", "?", "''", "?") + `,
       status = ` + store.SQLWaiting + `, attempts = 0, last_error = '', claimed_at = NULL, lease_token = NULL, updated_at = ?,
       waiting_signal = ?,
       wake_at = CASE WHEN ` + ready + ` THEN ? ELSE ? END
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning
}

var (
	sqliteAwaitChild = sqliteAwaitChildren(`EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.id = ? AND c.status IN (` + store.SQLUnclaimable + `))`)
	// A group is ready when none of it is unfinished or one of it ended
	// dead or cancelled (the group parameter comes twice).
	sqliteAwaitGroup = sqliteAwaitChildren(`(NOT EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.parent_id = _sky_durable_runs.id AND c.child_group = ? AND c.status NOT IN (` + store.SQLUnclaimable + `))
     OR EXISTS (SELECT 1 FROM _sky_durable_runs c
     WHERE c.parent_id = _sky_durable_runs.id AND c.child_group = ? AND c.status IN (` + store.SQLEndedUnsuccessfully + `)))`)
)

func (s *Store) AwaitChildren(ctx context.Context, f store.Fence, w store.ChildWait, now time.Time) error {
	at := ms(now)
	sql, args := sqliteAwaitChild, []any{w.Detail(), at, at, w.Marker(), w.ChildID}
	if w.Group != "" {
		sql, args = sqliteAwaitGroup, []any{w.Detail(), at, at, w.Marker(), w.Group, w.Group}
	}
	n, err := s.exec(ctx, s.d, "await", sql, append(args, at, store.InfinityMs, f.RunID, f.Token)...)
	return store.LeaseChecked(n, err)
}

const sqlitePutEvent = `
INSERT INTO _sky_durable_events (run_id, key, value, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`

func (s *Store) PutEvent(ctx context.Context, q *db.DB, runID, key, value string, now time.Time) error {
	_, err := s.exec(ctx, q, "event", sqlitePutEvent, runID, key, value, ms(now))
	return err
}

const sqliteGetEvent = `SELECT value FROM _sky_durable_events WHERE run_id = ? AND key = ?`

func (s *Store) GetEvent(ctx context.Context, runID, key string) (string, bool, error) {
	s.hook("event", sqliteGetEvent)
	return store.QueryEvent(ctx, s.d, sqliteGetEvent, runID, key)
}
