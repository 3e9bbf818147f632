package sqlite

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Store is the SQLite store. Times are INTEGER Unix milliseconds
// (store.InfinityMs stands for 'infinity'); the clock is always passed in. SQLite
// serialises writers, so a statement or transaction here needs no row locks.
type Store struct {
	d    *db.DB
	hook store.StatementHook
	// writes groups the writes of concurrent pollers (groupcommit.go).
	writes *store.GroupCommit[write]
	// beats is store.Config.Beats: the engine renews its leases by
	// heartbeats, so AppendEntry leaves the lease alone.
	beats bool
}

// migrationFiles are the SQLite store's numbered schema changes.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are migrationFiles, read once (TestMigrationsLoad checks them).
var migrations, migrationsErr = store.LoadMigrations(migrationFiles, "migrations")

func (s *Store) migrator() store.Migrator {
	return store.Migrator{
		Migrations: migrations,
		CreateTable: `CREATE TABLE IF NOT EXISTS ` + store.VersionTable + ` (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP
)`,
		TableExists: `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = '` + store.VersionTable + `'`,
		Adopt:       s.adoptUnversioned,
		Hook:        s.hook,
		LoadErr:     migrationsErr,
	}
}

func (s *Store) Setup(ctx context.Context) error { return s.migrator().Setup(ctx, s.d) }

func (s *Store) SchemaVersion(ctx context.Context) (int, int, error) {
	return s.migrator().Versions(ctx, s.d)
}

// sqliteAddedColumns are the columns a database made before versioned
// migrations may lack (SQLite has no ADD COLUMN IF NOT EXISTS).
var sqliteAddedColumns = []struct{ table, column, ddl string }{
	{"_sky_durable_runs", "version", `ALTER TABLE _sky_durable_runs ADD COLUMN version INTEGER NOT NULL DEFAULT 1`},
	{"_sky_durable_runs", "lease_token", `ALTER TABLE _sky_durable_runs ADD COLUMN lease_token TEXT`},
	{"_sky_durable_runs", "claimed_by", `ALTER TABLE _sky_durable_runs ADD COLUMN claimed_by TEXT NOT NULL DEFAULT ''`},
	{"_sky_durable_runs", "compacted_at", `ALTER TABLE _sky_durable_runs ADD COLUMN compacted_at INTEGER`},
	{"_sky_durable_journal", "kind", `ALTER TABLE _sky_durable_journal ADD COLUMN kind TEXT NOT NULL DEFAULT 'step'`},
	{"_sky_durable_journal", "seq", `ALTER TABLE _sky_durable_journal ADD COLUMN seq INTEGER`},
}

const sqliteHasColumn = `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`

// adoptUnversioned adds, before the baseline runs on a database with no
// recorded version, the columns an older release's tables lack; on a new
// database (no tables) it does nothing.
func (s *Store) adoptUnversioned(ctx context.Context, tx *db.DB) error {
	for _, c := range sqliteAddedColumns {
		var exists, has int64
		s.hook("setup", sqliteHasTable)
		if err := tx.QueryRow(ctx, sqliteHasTable, c.table).Scan(&exists); err != nil {
			return err
		}
		s.hook("setup", sqliteHasColumn)
		if err := tx.QueryRow(ctx, sqliteHasColumn, c.table, c.column).Scan(&has); err != nil {
			return err
		}
		if exists > 0 && has == 0 {
			s.hook("setup", c.ddl)
			if _, err := tx.ExecRaw(ctx, c.ddl); err != nil {
				return err
			}
		}
	}
	return nil
}

const sqliteHasTable = `SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?`

func ms(t time.Time) int64 { return t.UnixMilli() }

// DatabaseClock is false: every statement takes the time it is given.
func (s *Store) DatabaseClock() bool { return false }

func (s *Store) exec(ctx context.Context, q *db.DB, op, sql string, args ...any) (int64, error) {
	s.hook(op, sql)
	return q.Exec(ctx, sql, args...)
}

// sqliteNewRun is the WITH clause of the run a start inserts: its
// parameters are sqliteInsertArgs'.
const sqliteNewRun = `
WITH new AS (SELECT ? AS id, ? AS workflow, ? AS version, ? AS input, ? AS now, NULLIF(?, '') AS trace_context,
                    ? AS deadline_ms, ? AS priority, ? AS limit_key, ? AS never)`

// sqliteInsertRun starts a run. A run with a perKey key queues behind its
// key's head when the key has one (migration 0012): due never until the
// head leaves.
const sqliteInsertRun = sqliteNewRun + `,
queue AS (SELECT new.limit_key IS NOT NULL AND EXISTS (
                   SELECT 1 FROM _sky_durable_runs r
                    WHERE r.workflow = new.workflow AND r.limit_key = new.limit_key AND r.status = ` + store.SQLWaiting + `
                      AND r.attempts = 0 AND NOT r.key_queued AND r.limit_key IS NOT NULL) AS queued
            FROM new)
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, trace_context, deadline_at, priority, limit_key, key_queued)
SELECT new.id, new.workflow, new.version, ` + store.SQLWaiting + `, new.input, 0, CASE WHEN queue.queued THEN new.never ELSE new.now END, '',
       new.now, new.now, new.trace_context, new.now + new.deadline_ms, new.priority, new.limit_key, queue.queued
  FROM new, queue WHERE TRUE
ON CONFLICT (id) DO NOTHING`

// sqliteInsertArgs are the arguments of sqliteInsertRun for r.
func sqliteInsertArgs(r store.NewRun, now time.Time) []any {
	return []any{r.ID, r.Workflow, r.Version, r.Input, ms(now), r.TraceContext,
		store.DeadlineMs(r.Deadline), r.Priority, r.LimitKeyArg(), store.InfinityMs}
}

func (s *Store) InsertRun(ctx context.Context, r store.NewRun, now time.Time) (bool, string, error) {
	n, err := s.exec(ctx, s.d, "start", sqliteInsertRun, sqliteInsertArgs(r, now)...)
	if err != nil || n == 1 {
		return n == 1, "", err
	}
	existing, err := s.existingWorkflow(ctx, r.ID)
	return false, existing, err
}

const sqliteRunWorkflow = `SELECT workflow FROM _sky_durable_runs WHERE id = ?`

// existingWorkflow reads the workflow of the run a start found under id.
func (s *Store) existingWorkflow(ctx context.Context, id string) (string, error) {
	var existing string
	s.hook("start", sqliteRunWorkflow)
	err := s.d.QueryRow(ctx, sqliteRunWorkflow, id).Scan(&existing)
	return existing, err
}

// sqliteInsertClaimed starts a run already claimed (InsertClaimedRun): the
// row a first claim (sqliteClaimWhere) leaves, as PostgreSQL's
// pgInsertClaimed; its last parameters are the lease (ms), its token and
// the worker.
const sqliteInsertClaimed = sqliteNewRun + `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, trace_context,
                               deadline_at, priority, limit_key, claimed_at, lease_token, claimed_by)
SELECT new.id, new.workflow, new.version, ` + store.SQLRunning + `, new.input, 1, new.now + ?, '', new.now, new.now, new.trace_context,
       new.now + new.deadline_ms, new.priority, new.limit_key, new.now, ?, ?
  FROM new WHERE TRUE
ON CONFLICT (id) DO NOTHING`

func (s *Store) InsertClaimedRun(ctx context.Context, r store.NewRun, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, string, error) {
	n, err := s.exec(ctx, s.d, "start+claim", sqliteInsertClaimed, append(sqliteInsertArgs(r, now), lease.Milliseconds(), token, worker)...)
	switch {
	case err != nil:
		return store.Claimed{}, false, "", err
	case n == 1:
		return r.ClaimedAt(now), true, "", nil
	}
	existing, err := s.existingWorkflow(ctx, r.ID)
	return store.Claimed{}, false, existing, err
}

const sqliteLoadJournal = `SELECT seq, step_id, kind, result, created_at FROM _sky_durable_journal WHERE run_id = ? ORDER BY seq`

const sqliteReadSignal = `SELECT payload, COALESCE(trace_context, '') FROM _sky_durable_signals WHERE run_id = ? AND name = ? AND delivered = FALSE`

const sqliteMarkDelivered = `UPDATE _sky_durable_signals SET delivered = TRUE WHERE run_id = ? AND name = ?`

const sqliteLoadSnapshot = `SELECT seq, data FROM _sky_durable_snapshot WHERE id = ?`

// sqliteClaimKeyOf is a run's place in the claim order, lowest first, the
// leading column of the claim index (migration 0015, word for word):
// priority, higher first, and within a priority the runs already started
// and waiting again (an attempt or a history), then the others (not yet
// started, or running and claimable once their lease ended); PostgreSQL's
// pgClaimKey says why.
func sqliteClaimKeyOf(alias string) string {
	return "(CASE WHEN " + alias + ".status = " + store.SQLRunning + " OR (" + alias + ".attempts = 0 AND " + alias +
		".history_count = 0) THEN 1 ELSE 0 END - 2 * " + alias + ".priority)"
}

// sqliteClaimWhere builds the claim statement: it picks and leases the
// first claimable run in claim order (sqliteClaimKeyOf), then the most
// overdue, matching pick (a predicate on the unqualified run columns
// reading one JSON parameter) in one statement (SQLite runs it under its
// single writer lock), which also returns the run's journal as one JSON
// array of [seq, step_id, kind, result, created_at] arrays (sorted by seq
// in Go: an ORDER BY in the aggregate costs a temporary B-tree): no other
// writer can run between the claim and that read, so it is complete. When
// limited, a run must also pass sqliteLimitsOK.
//
// The claim key is the lowest level of the live runs (a loose index scan,
// one probe per level) that has a claimable run; the run is then the most
// overdue of that level, so neither step reads the backlog.
// INDEXED BY pins the claim index: without statistics SQLite would otherwise
// pick the (status, created_at, id) listing index and sort.
func sqliteClaimWhere(pick string, limited bool) string {
	sqliteClaimKey := sqliteClaimKeyOf("c")
	cond := func(alias string) string {
		c := `
      AND ` + alias + `.wake_at <= ?
      AND (` + alias + `.claimed_at IS NULL OR ` + alias + `.claimed_at < ?)
      AND (` + alias + `.deadline_at IS NULL OR ` + alias + `.deadline_at > ?)
      AND ` + pick
		if limited {
			c += sqliteLimitsOK(alias)
		}
		return c
	}
	return `
UPDATE _sky_durable_runs
   SET status = ` + store.SQLRunning + `, attempts = attempts + 1, claimed_at = ?, updated_at = ?, wake_at = ?,
       lease_token = ?, claimed_by = ?, waiting_signal = NULL,
       ` + sqliteClaimNote + `
 WHERE id = (
   SELECT c.id FROM _sky_durable_runs AS c INDEXED BY _sky_durable_runs_claim
    WHERE c.status IN (` + store.SQLClaimable + `)
      AND ` + sqliteClaimKey + ` = (
        WITH RECURSIVE l(k) AS (
          SELECT (SELECT ` + sqliteClaimKeyOf("y") + ` FROM _sky_durable_runs AS y INDEXED BY _sky_durable_runs_claim
                   WHERE y.status IN (` + store.SQLClaimable + `) ORDER BY 1 LIMIT 1)
          UNION ALL
          SELECT (SELECT ` + sqliteClaimKeyOf("y") + ` FROM _sky_durable_runs AS y INDEXED BY _sky_durable_runs_claim
                   WHERE y.status IN (` + store.SQLClaimable + `) AND ` + sqliteClaimKeyOf("y") + ` > l.k ORDER BY 1 LIMIT 1)
            FROM l WHERE l.k IS NOT NULL)
        SELECT l.k FROM l WHERE l.k IS NOT NULL AND EXISTS (
          SELECT 1 FROM _sky_durable_runs AS x INDEXED BY _sky_durable_runs_claim
           WHERE x.status IN (` + store.SQLClaimable + `) AND ` + sqliteClaimKeyOf("x") + ` = l.k` + cond("x") + `)
        LIMIT 1)` + cond("c") + `
    ORDER BY c.wake_at
    LIMIT 1)
RETURNING id, workflow, version, input, attempts, last_error, COALESCE(trace_context, ''),
  (SELECT json_group_array(json_array(j.seq, j.step_id, j.kind, j.result, j.created_at))
     FROM _sky_durable_journal j WHERE j.run_id = _sky_durable_runs.id)`
}

// sqliteClaimNote records a claim (its time the parameter) when the run
// was claimed before or has a history: the first claim of a run is not
// recorded. A run still running was reclaimed from its worker.
const sqliteClaimNote = `history_count = history_count + (attempts > 0 OR history_count > 0),
       history_note = CASE WHEN attempts > 0 OR history_count > 0
         THEN json_array(CASE WHEN status = ` + store.SQLRunning + ` THEN 'reclaimed' ELSE 'claimed' END, NULL, attempts + 1,
                         CASE WHEN status = ` + store.SQLRunning + ` THEN claimed_by ELSE '' END, '', ?)
         ELSE history_note END`

// sqliteClaim claims by workflow name (FailSafe); sqliteClaimPinned by
// (workflow, version) pair (PinToStart); the Limited forms obey the limits.
const (
	sqlitePickByName    = `workflow IN (SELECT value FROM json_each(?))`
	sqlitePickByVersion = `EXISTS (SELECT 1 FROM json_each(?) k
	      WHERE json_extract(k.value, '$.w') = workflow AND json_extract(k.value, '$.v') = version)`
)

var (
	sqliteClaim              = sqliteClaimWhere(sqlitePickByName, false)
	sqliteClaimPinned        = sqliteClaimWhere(sqlitePickByVersion, false)
	sqliteClaimLimited       = sqliteClaimWhere(sqlitePickByName, true)
	sqliteClaimLimitedPinned = sqliteClaimWhere(sqlitePickByVersion, true)
)

func (s *Store) ClaimRun(ctx context.Context, names []string, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	namesJSON, _ := json.Marshal(names)
	return s.claimWith(ctx, sqliteClaim, false, string(namesJSON), now, lease, token, worker)
}

func (s *Store) ClaimPinned(ctx context.Context, keys []store.VersionKey, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	keysJSON, _ := json.Marshal(keys)
	return s.claimWith(ctx, sqliteClaimPinned, false, string(keysJSON), now, lease, token, worker)
}

func (s *Store) claimWith(ctx context.Context, sql string, limited bool, pick string, now time.Time, lease time.Duration, token, worker string) (c store.Claimed, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return store.Claimed{}, false, task.As(err)
	}
	caller := ctx.Done()
	err = s.do(ctx, write{run: func(ctx context.Context) error {
		if store.Stopped(caller) {
			return store.ErrClaimCancelled
		}
		var err error
		c, ok, err = s.claimOn(ctx, sql, limited, pick, now, lease, token, worker)
		return err
	}})
	if err != nil {
		return store.Claimed{}, false, err
	}
	return c, ok, nil
}

// claimOn is claimWith on the database or the transaction ctx carries.
func (s *Store) claimOn(ctx context.Context, sql string, limited bool, pick string, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	s.hook("claim", sql)
	cond := []any{ms(now), ms(now.Add(-lease)), ms(now), pick}
	if limited {
		cond = append(cond, ms(now), ms(now.Add(-lease)), ms(now.Add(-lease)))
	}
	args := append([]any{ms(now), ms(now), ms(now.Add(lease)), token, worker, ms(now)}, cond...)
	rs, err := s.d.Query(ctx, sql, append(args, cond...)...)
	if err != nil {
		return store.Claimed{}, false, err
	}
	defer rs.Close()
	if !rs.Next() {
		return store.Claimed{}, false, rs.Err()
	}
	c := store.Claimed{Now: now}
	var journal string
	if err := rs.Scan(&c.ID, &c.Workflow, &c.Version, &c.Input, &c.Attempts, &c.LastError, &c.TraceContext, &journal); err != nil {
		return store.Claimed{}, false, err
	}
	if c.Journal, err = sqliteJournalJSON(journal); err != nil {
		return store.Claimed{}, false, fmt.Errorf("durable: read the journal of run %q returned by its claim: %w", c.ID, err)
	}
	c.JournalRead = true
	return c, true, rs.Err()
}

// sqliteJournalJSON decodes the journal the claim returns as JSON.
func sqliteJournalJSON(text string) ([]store.JournalEntry, error) {
	var rows [][5]json.RawMessage
	if err := json.Unmarshal([]byte(text), &rows); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	out := make([]store.JournalEntry, len(rows))
	for i, r := range rows {
		var kind string
		var created int64
		for k, dest := range []any{&out[i].Seq, &out[i].StepID, &kind, &out[i].Result, &created} {
			if err := json.Unmarshal(r[k], dest); err != nil {
				return nil, fmt.Errorf("entry %d, field %d (%s): %w", i, k, r[k], err)
			}
		}
		out[i].Kind = store.EntryKind(kind)
		out[i].CreatedAt = store.FromMs(created)
	}
	slices.SortFunc(out, func(a, b store.JournalEntry) int { return a.Seq - b.Seq })
	return out, nil
}

func (s *Store) LoadJournal(ctx context.Context, runID string) ([]store.JournalEntry, error) {
	s.hook("journal", sqliteLoadJournal)
	return store.QueryAll(ctx, s.d, sqliteLoadJournal, []any{runID}, func(scan func(...any) error) (store.JournalEntry, error) {
		var e store.JournalEntry
		var kind string
		var created int64
		err := scan(&e.Seq, &e.StepID, &kind, &e.Result, &created)
		e.Kind = store.EntryKind(kind)
		e.CreatedAt = store.FromMs(created)
		return e, err
	})
}

// sqliteAppend inserts the journal row only while the lease holds (SQLite's
// single writer: nothing can take the run between the test and the insert).
const sqliteAppend = `
INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
SELECT id, ?, ?, ?, ?, ? FROM _sky_durable_runs WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning + sqliteBeforeDeadline

// sqliteRenewOnStep renews the lease after a journalled step, for an engine
// without heartbeats (store.Config.Beats false). With heartbeats the beat
// holds the lease, and the step writes the journal only: the renewal
// rewrote the run's row (input and output) and its page at every step
// (migration 0017, BenchmarkWALPages).
const sqliteRenewOnStep = `
UPDATE _sky_durable_runs SET claimed_at = ? WHERE id = ? AND lease_token = ?`

func (s *Store) AppendEntry(ctx context.Context, q *db.DB, f store.Fence, e store.JournalEntry, now time.Time) error {
	appendOne := func(ctx context.Context, q *db.DB) error {
		n, err := s.exec(ctx, q, "append", sqliteAppend, e.Seq, e.StepID, string(e.Kind), e.Result, ms(now), f.RunID, f.Token, ms(now))
		return store.LeaseChecked(n, err)
	}
	run := func(ctx context.Context) error {
		if s.beats {
			return appendOne(ctx, q)
		}
		return q.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			if err := appendOne(ctx, tx); err != nil {
				return err
			}
			_, err := s.exec(ctx, tx, "renew", sqliteRenewOnStep, ms(now), f.RunID, f.Token)
			return err
		})
	}
	if q != s.d {
		return run(ctx) // on the caller's transaction
	}
	return s.do(ctx, write{run: run})
}

func (s *Store) ConsumeSignal(ctx context.Context, f store.Fence, name string, e store.JournalEntry, accept func(payload, traceContext string) (string, error), now time.Time) (bool, error) {
	return store.ConsumeSQL{DB: s.d, Hook: s.hook, Lock: nil, Append: s.AppendEntry, Read: sqliteReadSignal, Mark: sqliteMarkDelivered}.
		ConsumeSignal(ctx, f, name, e, accept, now)
}

// sqliteSuspend records the suspension (what it waits for, and the time,
// the first parameters).
var sqliteSuspend = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("'suspended'", "NULL", "attempts", "?", "''", "?") + `,
       status = ` + store.SQLWaiting + `, attempts = 0, last_error = '', claimed_at = NULL, lease_token = NULL, updated_at = ?,
       waiting_signal = ?,
       wake_at = CASE
         WHEN ? IS NOT NULL AND EXISTS (
           SELECT 1 FROM _sky_durable_signals s
            WHERE s.run_id = _sky_durable_runs.id AND s.name = ? AND s.delivered = FALSE)
         THEN ?
         ELSE ? END
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning

func (s *Store) Suspend(ctx context.Context, f store.Fence, wakeAt time.Time, signal string, now time.Time) error {
	var sig any
	if signal != "" {
		sig = signal
	}
	wake := store.InfinityMs
	if !wakeAt.IsZero() {
		wake = ms(wakeAt)
	}
	n, err := s.exec(ctx, s.d, "suspend", sqliteSuspend, store.SuspendDetail(wakeAt, signal), ms(now), ms(now), sig, sig, sig, ms(now), wake, f.RunID, f.Token)
	return store.LeaseChecked(n, err)
}

var sqliteComplete = `
UPDATE _sky_durable_runs
   SET ` + sqliteDoneNote + `,
       status = ` + store.SQLDone + `, output = ?, last_error = '', claimed_at = NULL, lease_token = NULL,
       waiting_signal = NULL, updated_at = ?
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning + sqliteBeforeDeadline

func (s *Store) Complete(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	return s.do(ctx, write{
		run:   func(ctx context.Context) error { return s.complete(ctx, f, last, output, now) },
		after: func() { s.finished(ctx, f.RunID) },
	})
}

// complete is Complete on the database or the transaction ctx carries,
// without the done notification.
func (s *Store) complete(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	if last == nil {
		n, err := s.exec(ctx, s.d, "complete", sqliteComplete, ms(now), output, ms(now), f.RunID, f.Token, ms(now))
		return store.LeaseChecked(n, err)
	}
	return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if err := s.AppendEntry(ctx, tx, f, *last, now); err != nil {
			return err
		}
		n, err := s.exec(ctx, tx, "complete", sqliteComplete, ms(now), output, ms(now), f.RunID, f.Token, ms(now))
		return store.LeaseChecked(n, err)
	})
}

// CompleteAndClaim completes, then claims, in one transaction (two
// statements: SQLite has no round trip to save); a completion whose fence
// failed is rolled back alone (its savepoint) and the claim goes on.
func (s *Store) CompleteAndClaim(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time, next store.NextClaim) (store.Claimed, bool, error, error) {
	var c store.Claimed
	var ok bool
	var done error
	caller := ctx.Done()
	err := s.do(ctx, write{
		run: func(ctx context.Context) error {
			return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
				failed, err := savepoint(ctx, tx, func(ctx context.Context) error { return s.complete(ctx, f, last, output, now) })
				if done = err; failed || (err != nil && !errors.Is(err, store.ErrLeaseLost)) || store.Stopped(caller) {
					return err // a poller stopped while it waited claims nothing
				}
				sql, pick := sqliteClaim, any(next.Names)
				if next.Pinned {
					sql, pick = sqliteClaimPinned, next.Keys
				}
				pickJSON, _ := json.Marshal(pick)
				c, ok, err = s.claimOn(ctx, sql, false, string(pickJSON), now, next.Lease, next.Token, next.Worker)
				return err
			})
		},
		after: func() {
			if done == nil {
				s.finished(ctx, f.RunID)
			}
		},
	})
	if err != nil {
		return store.Claimed{}, false, nil, err
	}
	return c, ok, done, nil
}

// sqliteFail records the failure (its kind, the error, the step and the
// time: the first parameters).
var sqliteFail = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("?", "NULL", "attempts", "?", "?", "?") + `,
       status = ?, last_error = ?, wake_at = ?, claimed_at = NULL, lease_token = NULL,
       waiting_signal = NULL, updated_at = ?
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning

func (s *Store) Fail(ctx context.Context, f store.Fence, lastError, step string, backoff time.Duration, dead bool, now time.Time) error {
	status := store.StatusFailed
	if dead {
		status = store.StatusDead
	}
	n, err := s.exec(ctx, s.d, "fail", sqliteFail, string(status), lastError, step, ms(now),
		string(status), lastError, ms(now.Add(backoff)), ms(now), f.RunID, f.Token)
	if err = store.LeaseChecked(n, err); err == nil && dead {
		s.finished(ctx, f.RunID)
	}
	return err
}

var sqliteRelease = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("'released'", "NULL", "attempts", "''", "''", "?") + `,
       status = CASE WHEN last_error <> '' THEN ` + store.SQLFailed + ` ELSE ` + store.SQLWaiting + ` END, attempts = MAX(attempts - 1, 0),
       wake_at = ?, claimed_at = NULL, lease_token = NULL, updated_at = ?
 WHERE id = ? AND lease_token = ? AND status = ` + store.SQLRunning

func (s *Store) Release(ctx context.Context, f store.Fence, now time.Time) error {
	n, err := s.exec(ctx, s.d, "release", sqliteRelease, ms(now), ms(now), ms(now), f.RunID, f.Token)
	return store.LeaseChecked(n, err)
}

// sqlitePutSignal keeps the first delivery of a signal (one-shot per run
// and name): a repeat changes nothing, delivered or not, and so does a
// signal to a finished run.
const sqlitePutSignal = `
INSERT INTO _sky_durable_signals (run_id, name, payload, trace_context, delivered, created_at)
SELECT ?, ?, ?, NULLIF(?, ''), FALSE, ?
 WHERE NOT EXISTS (SELECT 1 FROM _sky_durable_runs WHERE id = ? AND status IN (` + store.SQLTerminal + `))
ON CONFLICT (run_id, name) DO NOTHING`

const sqliteWakeForSignal = `
UPDATE _sky_durable_runs SET wake_at = ?, updated_at = ?
 WHERE id = ? AND status = ` + store.SQLWaiting + ` AND waiting_signal = ?`

func (s *Store) PutSignal(ctx context.Context, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	return s.putSignal(ctx, sqlitePutSignal, "", runID, name, payload, traceContext, now)
}

// putSignal stores a signal with sql (sqlitePutSignal, sqliteReplaceSignal:
// run id, name, payload, trace context, time, run id) and wakes the run when
// it stored one, recording event (when not "") in the run's history.
func (s *Store) putSignal(ctx context.Context, sql string, event store.EventKind, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	stored := false
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		n, err := s.exec(ctx, tx, "signal", sql, runID, name, payload, traceContext, ms(now), runID)
		if err != nil || n == 0 {
			return err
		}
		stored = true
		if _, err = s.exec(ctx, tx, "signal", sqliteWakeForSignal, ms(now), ms(now), runID, name); err != nil || event == "" {
			return err
		}
		return s.recordEvent(ctx, tx, runID, event, store.ActorOf(ctx), name, "", now)
	})
	return stored, err
}

const sqliteRunColumns = `id, workflow, version, status, input, COALESCE(output, ''), attempts,
  wake_at, COALESCE(waiting_signal, ''), last_error, COALESCE(claimed_at, 0), claimed_by, created_at, updated_at,
  COALESCE(compacted_at, 0), COALESCE(deadline_at, 0), COALESCE(parent_id, ''), priority, COALESCE(limit_key, ''),
  COALESCE(forked_from, ''), COALESCE(fork_step, ''), key_queued`

const sqliteReadRun = `SELECT ` + sqliteRunColumns + ` FROM _sky_durable_runs WHERE id = ?`

func sqliteRunScanner(scan func(...any) error) (store.Run, error) {
	var r store.Run
	var status string
	var wake, claimedAt, created, updated, compacted, deadline int64
	err := scan(&r.ID, &r.Workflow, &r.Version, &status, &r.Input, &r.Output, &r.Attempts,
		&wake, &r.WaitingSignal, &r.LastError, &claimedAt, &r.ClaimedBy, &created, &updated, &compacted, &deadline, &r.ParentID, &r.Priority, &r.LimitKey,
		&r.ForkedFrom, &r.ForkStep, &r.KeyQueued)
	r.Status = store.Status(status)
	r.WakeAt, r.ClaimedAt, r.CreatedAt, r.UpdatedAt = store.FromMs(wake), store.FromMs(claimedAt), store.FromMs(created), store.FromMs(updated)
	r.CompactedAt, r.Deadline = store.FromMs(compacted), store.FromMs(deadline)
	return r, err
}

func (s *Store) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	s.hook("read", sqliteReadRun)
	runs, err := store.ScanRuns(ctx, s.d, sqliteReadRun, []any{runID}, sqliteRunScanner)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, store.ErrRunNotFound
	}
	return runs[0], nil
}

// listDialect is store.ListSQL's view of SQLite.
var listDialect = store.ListDialect{
	IndexedBy:    func(index string) string { return " INDEXED BY " + index },
	Time:         func(t time.Time) any { return ms(t) },
	IDIn:         func(sub string) string { return "IN (" + sub + ")" },
	Namespace:    `substr(id, 1, instr(id, char(31)) - 1)`,
	Namespaced:   `instr(id, char(31)) > 0`,
	Unnamespaced: `instr(id, char(31)) = 0`,
}

// searchDialect is store.SearchSQL's view of SQLite: the indexed finished
// runs from the trigram FTS5 table (migration 0013), matched as one quoted
// phrase (a substring: consecutive trigrams), case-insensitive; the
// finished runs still in the backlog (migration 0016) and the unfinished
// ones tested row by row with LIKE, case-insensitive for ASCII.
var searchDialect = store.SearchDialect{
	ListDialect: listDialect,
	// The gate is the outer loop of both reads (CROSS JOIN keeps it
	// outer): no row, no read.
	Finished: func(text, gate string) (string, []any) {
		live, args := sqliteSearchLike(text, "r.")
		return `id IN (SELECT x.run_id FROM (SELECT 1 WHERE ` + gate + `) g CROSS JOIN (
  SELECT d.run_id FROM _sky_durable_search_docs d WHERE d.doc IN
    (SELECT rowid FROM _sky_durable_search WHERE _sky_durable_search MATCH ?)
  UNION ALL
  SELECT r.id FROM _sky_durable_search_backlog b CROSS JOIN _sky_durable_runs r WHERE r.id = b.run_id AND ` + live + `) x)`,
			append([]any{`"` + strings.ReplaceAll(text, `"`, `""`) + `"`}, args...)
	},
	Live: func(text string) (string, []any) { return sqliteSearchLike(text, "") },
}

// sqliteSearchLike tests a run's id, input, output and last error (their
// names qualified by prefix) for text, row by row.
func sqliteSearchLike(text, prefix string) (string, []any) {
	p := store.LikePattern(text)
	var cond []string
	for _, c := range []string{"id", "input", "output", "last_error"} {
		cond = append(cond, prefix+c+` LIKE ? ESCAPE '\'`)
	}
	return "(" + strings.Join(cond, " OR ") + ")", []any{p, p, p, p}
}

// sqliteIndexSearch* are IndexSearch's statements, in one transaction: the
// highest document number, the backlog's first runs given the numbers
// above it, those documents written to the FTS5 table, their backlog rows
// deleted.
const (
	sqliteIndexSearchTop  = `SELECT COALESCE(MAX(doc), 0) FROM _sky_durable_search_docs`
	sqliteIndexSearchDocs = `
INSERT INTO _sky_durable_search_docs (run_id) SELECT run_id FROM _sky_durable_search_backlog LIMIT ?`
	sqliteIndexSearchWrite = `
INSERT INTO _sky_durable_search (rowid, id, input, output, last_error)
SELECT d.doc, r.id, r.input, COALESCE(r.output, ''), r.last_error
  FROM _sky_durable_search_docs d JOIN _sky_durable_runs r ON r.id = d.run_id
 WHERE d.doc > ?`
	sqliteIndexSearchDone = `
DELETE FROM _sky_durable_search_backlog WHERE run_id IN (SELECT run_id FROM _sky_durable_search_docs WHERE doc > ?)`
)

// IndexSearch moves up to limit runs from the search backlog into the FTS5
// index: one transaction, through group commit (it is a write like the
// pollers').
func (s *Store) IndexSearch(ctx context.Context, limit int) (int, error) {
	var moved int64
	err := s.do(ctx, write{run: func(ctx context.Context) error {
		return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			var top int64
			s.hook("index search", sqliteIndexSearchTop)
			if err := tx.QueryRow(ctx, sqliteIndexSearchTop).Scan(&top); err != nil {
				return err
			}
			var err error
			if moved, err = s.exec(ctx, tx, "index search", sqliteIndexSearchDocs, limit); err != nil || moved == 0 {
				return err
			}
			for _, sql := range []string{sqliteIndexSearchWrite, sqliteIndexSearchDone} {
				if _, err := s.exec(ctx, tx, "index search", sql, top); err != nil {
					return err
				}
			}
			return nil
		})
	}})
	if err != nil {
		return 0, fmt.Errorf("durable: indexing finished runs for search: %w", err)
	}
	return int(moved), nil
}

func (s *Store) ListRuns(ctx context.Context, f store.ListFilter) ([]store.Run, error) {
	sql, args := store.ListSQL(sqliteRunColumns, f, listDialect)
	if f.Search != "" {
		if err := store.CheckSearch(f.Search); err != nil {
			return nil, err
		}
		sql, args = store.SearchSQL(sqliteRunColumns, f, searchDialect)
	}
	s.hook("list", sql)
	return store.ScanRuns(ctx, s.d, sql, args, sqliteRunScanner)
}

var sqliteRetry = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote("'retried'", "?", "attempts", "''", "''", "?") + `,
       status = ` + store.SQLWaiting + `, attempts = 0, wake_at = ?, claimed_at = NULL, lease_token = NULL,
       waiting_signal = NULL, updated_at = ?
 WHERE id = ? AND status IN (` + store.SQLRetryable + `)`

func (s *Store) RetryRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "retry", sqliteRetry, store.ActorOf(ctx), ms(now), ms(now), ms(now), runID)
	return n == 1, err
}

const sqliteWake = `
UPDATE _sky_durable_runs SET wake_at = ?, updated_at = ? WHERE id = ? AND status = ` + store.SQLWaiting

func (s *Store) WakeRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "wake", sqliteWake, ms(now), ms(now), runID)
	return n == 1, err
}

var sqliteCancel = `
UPDATE _sky_durable_runs
   SET ` + sqliteNote(store.SQLCancelled, "?", "attempts", "''", "''", "?") + `,
       status = ` + store.SQLCancelled + `, claimed_at = NULL, lease_token = NULL, updated_at = ?
 WHERE id = ? AND status IN (` + store.SQLClaimable + `)`

// CancelRun cancels the run and, in the same transaction, its unfinished
// descendants (child runs, theirs, ...).
func (s *Store) CancelRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	var n int64
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		var err error
		if n, err = s.exec(ctx, tx, "cancel", sqliteCancel, store.ActorOf(ctx), ms(now), ms(now), runID); err != nil || n == 0 {
			return err
		}
		ids, _ := json.Marshal([]string{runID})
		_, err = s.exec(ctx, tx, "cancel", sqliteCancelChildren, string(ids), ms(now))
		return err
	})
	if err == nil && n == 1 {
		s.finished(ctx, runID)
	}
	return n == 1, err
}

const sqliteFinishedRun = `SELECT COUNT(*) FROM _sky_durable_runs WHERE id = ? AND status IN (` + store.SQLCompactable + `)`

const sqliteDeleteJournal = `DELETE FROM _sky_durable_journal WHERE run_id = ?`

const sqliteDeleteSignals = `DELETE FROM _sky_durable_signals WHERE run_id = ?`

const sqliteDeleteHistory = `DELETE FROM _sky_durable_history WHERE run_id = ?`

const sqliteStampCompacted = `UPDATE _sky_durable_runs SET compacted_at = ? WHERE id = ?`

func (s *Store) CompactRun(ctx context.Context, runID string, now time.Time) (bool, int64, error) {
	ok, total := false, int64(0)
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		var n int64
		s.hook("compact", sqliteFinishedRun)
		if err := tx.QueryRow(ctx, sqliteFinishedRun, runID).Scan(&n); err != nil || n == 0 {
			return err
		}
		ok = true
		for _, sql := range []string{sqliteDeleteJournal, sqliteDeleteSignals} {
			n, err := s.exec(ctx, tx, "compact", sql, runID)
			if err != nil {
				return err
			}
			total += n
		}
		// The history goes too, not counted: the rows are the journal's and the mailbox's.
		if _, err := s.exec(ctx, tx, "compact", sqliteDeleteHistory, runID); err != nil {
			return err
		}
		_, err := s.exec(ctx, tx, "compact", sqliteStampCompacted, ms(now), runID)
		return err
	})
	return ok, total, err
}

const sqliteSaveSnapshot = `
INSERT INTO _sky_durable_snapshot (id, seq, data, updated_at) VALUES (?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, data = excluded.data, updated_at = excluded.updated_at
 WHERE _sky_durable_snapshot.seq < excluded.seq`

func (s *Store) SaveSnapshot(ctx context.Context, id string, seq int64, data string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "snapshot", sqliteSaveSnapshot, id, seq, data, ms(now))
	return n == 1, err
}

func (s *Store) LoadSnapshot(ctx context.Context, id string) (int64, string, bool, error) {
	s.hook("snapshot", sqliteLoadSnapshot)
	return store.QuerySnapshot(ctx, s.d, sqliteLoadSnapshot, id)
}

func init() {
	store.Register(db.SQLite, func(d *db.DB, c store.Config) store.Store { return NewWith(d, c) })
}

// New makes the SQLite store over d; hook (nil: none) sees every statement
// sent. Its journalled steps renew the lease (a zero store.Config).
func New(d *db.DB, hook store.StatementHook) *Store {
	return NewWith(d, store.Config{Hook: hook})
}

// NewWith makes the SQLite store over d, configured by c.
func NewWith(d *db.DB, c store.Config) *Store {
	hook := c.Hook
	if hook == nil {
		hook = func(string, string) {}
	}
	s := &Store{d: d, hook: hook, beats: c.Beats}
	s.writes = store.NewGroupCommit(maxBatch, 1, s.writeBatch)
	return s
}
