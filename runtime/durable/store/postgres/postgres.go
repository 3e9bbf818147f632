package postgres

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Store is the PostgreSQL store. Every statement takes the clock as its
// first parameter: a time (the injected clock) or NULL, which means the
// database's clock_timestamp(), so all workers share one clock.
type Store struct {
	d    *db.DB
	hook store.StatementHook
	// claims, appends and completes group the statements of concurrent
	// pollers (postgres_batch.go).
	claims    *store.GroupCommit[claimRequest]
	appends   *store.GroupCommit[appendRequest]
	completes *store.GroupCommit[completeRequest]
	// completeClaims group PollWith's completions with their next claims.
	completeClaims *store.GroupCommit[completeClaimRequest]
	// doneInstalled says WatchDone found the done trigger (notify.go).
	doneInstalled atomic.Bool
	// floors are where the claims start reading each level (floors.go).
	floors claimFloors
}

func init() {
	// PostgreSQL renews the lease at every step whatever c.Beats says: the
	// renewal is also the row lock that fences the step's insert (pgAppend),
	// and the new row version by which a claim tells that its snapshot
	// missed a step (pgClaimWhere). A step that only locked the run (FOR
	// SHARE) would fence the insert but leave that gap open.
	store.Register(db.Postgres, func(d *db.DB, c store.Config) store.Store { return New(d, c.Hook) })
}

// New makes the PostgreSQL store over d; hook (nil: none) sees every
// statement sent.
func New(d *db.DB, hook store.StatementHook) *Store {
	if hook == nil {
		hook = func(string, string) {}
	}
	s := &Store{d: d, hook: hook}
	s.claims = store.NewGroupCommit(maxBatch, maxFlights, onGenericPlans(s.claimBatch))
	s.appends = store.NewGroupCommit(maxBatch, maxFlights, onGenericPlans(s.appendBatch))
	s.completes = store.NewGroupCommit(maxBatch, maxFlights, onGenericPlans(s.completeBatch))
	s.completeClaims = store.NewGroupCommit(maxBatch, maxFlights, onGenericPlans(s.completeClaimBatch))
	return s
}

// onGenericPlans runs a group commit's writes on their statements' generic
// plans (db.GenericPlan; starts run on theirs too): each shape of claim,
// journal append and completion (one run, or a batch of 2 to 64 rows; by
// name or pinned) is planned once per connection, not five times with its
// parameters first (milliseconds each for a claim under load), and its
// plan is the same either way (the plan tests check both kinds:
// TestClaimPlanSurvivesABurstAfterAnalyze,
// TestBatchedStatementsUseTheirIndexesOnPostgres). The count is
// TestHotStatementsArePlannedOnce's (runtime/durable).
func onGenericPlans[R any](write func(ctx context.Context, batch []R) []error) func(context.Context, []R) []error {
	return func(ctx context.Context, batch []R) []error { return write(db.GenericPlan(ctx), batch) }
}

// migrationFiles are the PostgreSQL store's numbered schema changes.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations are migrationFiles, read once (TestMigrationsLoad checks them).
var migrations, migrationsErr = store.LoadMigrations(migrationFiles, "migrations")

// migrator applies the migrations; the advisory lock serialises the Setup
// of many processes started at once.
func (s *Store) migrator() store.Migrator {
	return store.Migrator{
		Migrations: migrations,
		CreateTable: `CREATE TABLE IF NOT EXISTS ` + store.VersionTable + ` (
  version    INT PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
)`,
		TableExists: `SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '` + store.VersionTable + `'`,
		Lock:        `SELECT pg_advisory_xact_lock(7362201555)`,
		Hook:        s.hook,
		LoadErr:     migrationsErr,
	}
}

// Setup migrates the schema to the newest version (store.Migrator.Setup),
// with a hint when the search index's extension is missing.
func (s *Store) Setup(ctx context.Context) error {
	return extensionHint(s.migrator().Setup(ctx, s.d))
}

// extensionHint says how to install pg_trgm when a set-up failed on it:
// migration 0015 creates it for the search index, and a role that may not
// create objects in the database cannot; or, when the extension is there
// but its operator class is not found, how to reach it.
func extensionHint(err error) error {
	if err != nil && strings.Contains(err.Error(), "gin_trgm_ops") {
		return fmt.Errorf("%w; hint: pg_trgm is installed in a schema that is not on this role's search_path: add that schema "+
			"to the search_path (ALTER ROLE … SET search_path = public, that_schema) or build the search index beforehand "+
			"naming it (docs/durable.md, Search), then set-up succeeds", err)
	}
	if err == nil || !strings.Contains(err.Error(), "pg_trgm") {
		return err
	}
	return fmt.Errorf("%w; hint: the run search index (migration 0015) needs the PostgreSQL extension pg_trgm, "+
		"which this role cannot create: a superuser or the database's owner runs CREATE EXTENSION pg_trgm; in this database once, "+
		"then set-up succeeds (a server without the extension needs its contrib package, e.g. postgresql-contrib)", err)
}

func (s *Store) SchemaVersion(ctx context.Context) (int, int, error) {
	return s.migrator().Versions(ctx, s.d)
}

// DatabaseClock is true: a zero now is the database's clock_timestamp()
// (pgClock).
func (s *Store) DatabaseClock() bool { return true }

// pgCreatedAt is a new run's created_at: the clock to the millisecond, as
// SQLite keeps it, so runs started within one millisecond list in id order
// (the listing's tie-break, store.ListSQL) on both stores, not in
// microsecond order here and id order there.
const pgCreatedAt = `date_trunc('milliseconds', clock.now)`

// pgClock is the CTE every statement starts with.
const pgClock = `WITH ` + pgClockCTE

// pgClockCTE is pgClock's CTE, for a statement that starts WITH RECURSIVE.
const pgClockCTE = `clock AS (SELECT COALESCE(CAST(? AS TIMESTAMPTZ), clock_timestamp()) AS now)`

// clockArg is the first parameter of every statement: the injected time or
// NULL for the database clock.
func clockArg(now time.Time) any {
	if now.IsZero() {
		return nil
	}
	return now
}

func (s *Store) exec(ctx context.Context, q *db.DB, op, sql string, args ...any) (int64, error) {
	s.hook(op, sql)
	return q.Exec(ctx, sql, args...)
}

// pgNewRun is the CTE of the run a start inserts, after the clock: its
// parameters are insertArgs'.
const pgNewRun = `
new AS (SELECT CAST(? AS TEXT) AS id, CAST(? AS TEXT) AS workflow, CAST(? AS INT) AS version, CAST(? AS TEXT) AS input,
               NULLIF(CAST(? AS TEXT), '') AS trace_context, CAST(? AS BIGINT) AS deadline_ms, CAST(? AS INT) AS priority,
               CAST(? AS TEXT) AS limit_key)`

// pgInsertRun starts a run. A run with a perKey key queues behind its
// key's head when the key has one (_sky_durable_key_queued, migration
// 0014): due 'infinity' until the head leaves.
const pgInsertRun = pgClock + `,` + pgNewRun + `,
queue AS (SELECT CASE WHEN new.limit_key IS NULL THEN FALSE ELSE _sky_durable_key_queued(new.workflow, new.limit_key) END AS queued
            FROM new)
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, trace_context, deadline_at, priority, limit_key, key_queued)
SELECT new.id, new.workflow, new.version, ` + store.SQLWaiting + `, new.input, 0, CASE WHEN queue.queued THEN 'infinity' ELSE clock.now END, '',
       ` + pgCreatedAt + `, clock.now, new.trace_context, clock.now + new.deadline_ms * INTERVAL '1 millisecond', new.priority, new.limit_key,
       queue.queued
  FROM clock, new, queue
ON CONFLICT (id) DO NOTHING`

// insertArgs are the arguments of pgInsertRun for r; the claim floors
// learn of the run (claimFloors.started).
func (s *Store) insertArgs(r store.NewRun, now time.Time) []any {
	s.floors.started(r.Priority, now)
	return []any{clockArg(now), r.ID, r.Workflow, r.Version, r.Input, r.TraceContext, store.DeadlineMs(r.Deadline), r.Priority, r.LimitKeyArg()}
}

func (s *Store) InsertRun(ctx context.Context, r store.NewRun, now time.Time) (bool, string, error) {
	// One round trip when the id is new.
	n, err := s.exec(db.GenericPlan(ctx), s.d, "start", pgInsertRun, s.insertArgs(r, now)...)
	if err != nil || n == 1 {
		return n == 1, "", err
	}
	existing, err := s.existingWorkflow(ctx, r.ID)
	return false, existing, err
}

const pgRunWorkflow = `SELECT workflow FROM _sky_durable_runs WHERE id = ?`

// existingWorkflow reads the workflow of the run a start found under id.
func (s *Store) existingWorkflow(ctx context.Context, id string) (string, error) {
	var existing string
	s.hook("start", pgRunWorkflow)
	err := s.d.QueryRow(ctx, pgRunWorkflow, id).Scan(&existing)
	return existing, err
}

// pgInsertClaimed starts a run already claimed (InsertClaimedRun,
// durable.RunNow): the row a first claim of pgInsertRun's leaves (see
// "claimed" in pgClaimStatement: running, attempt 1, the lease, no history
// counted), one statement on the primary key and no claim scan. Unlike the
// claim's, its commit is synchronous (pgClock, not pgClaimClock): it is
// also the start, which a caller is told of and a later Start of the id
// must find after a server crash. A claimed run raises no wake-up hint
// (pgHintTrigger: claimed_at is set); after a crash of its process it is
// due at its lease's end, as any claimed run. It returns the clock reading
// the claim used.
const pgInsertClaimed = pgClock + `,` + pgNewRun + `,
lease AS (SELECT CAST(? AS BIGINT) * INTERVAL '1 millisecond' AS span, CAST(? AS TEXT) AS token, CAST(? AS TEXT) AS worker)
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at, trace_context,
                               deadline_at, priority, limit_key, claimed_at, lease_token, claimed_by)
SELECT new.id, new.workflow, new.version, ` + store.SQLRunning + `, new.input, 1, clock.now + lease.span, '', ` + pgCreatedAt + `, clock.now,
       new.trace_context, clock.now + new.deadline_ms * INTERVAL '1 millisecond', new.priority, new.limit_key,
       clock.now, lease.token, lease.worker
  FROM clock, new, lease
ON CONFLICT (id) DO NOTHING
RETURNING claimed_at`

// InsertClaimedRun runs pgInsertClaimed: one round trip and one commit
// when the id is new, two round trips when it exists (as InsertRun).
func (s *Store) InsertClaimedRun(ctx context.Context, r store.NewRun, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, string, error) {
	var at time.Time
	s.hook("start+claim", pgInsertClaimed)
	err := s.d.QueryRow(db.GenericPlan(ctx), pgInsertClaimed, append(s.insertArgs(r, now), lease.Milliseconds(), token, worker)...).Scan(&at)
	if err == nil {
		return r.ClaimedAt(at), true, "", nil
	}
	if !errors.Is(err, db.ErrNoRows) {
		return store.Claimed{}, false, "", err
	}
	existing, err := s.existingWorkflow(ctx, r.ID)
	return store.Claimed{}, false, existing, err
}

// pgClaimClock is pgClock for the claim, whose transaction also commits
// without waiting for its WAL flush (synchronous_commit off, for this
// transaction only). That is safe: a claim lost in a server crash leaves
// the run as it was before it (due, claimable) and nothing that depends on
// the claim survives either, since every later write of the claimant (its
// journal rows, synchronous commits) flushes the WAL up to and past the
// claim's commit record first. It spares each claim the wait for a disk
// flush, one of the commits on a run's critical path.
const pgClaimClock = `WITH clock AS (
  SELECT COALESCE(CAST(? AS TIMESTAMPTZ), clock_timestamp()) AS now,
         set_config('synchronous_commit', 'off', true) AS commit_mode)`

// pgClaimKey is a run's place in the claim order (lowest first), the
// leading column of the claim index (migration 0017): its priority (higher
// first) and, within a priority, two levels: the runs already started and
// waiting again (resumed after a sleep or a signal, retried), then the
// others (not yet started, or running: claimable once their lease ended).
// A run not yet started has no attempt and no history (every suspension,
// failure and claim after the first is in its history). So a burst of
// starts queues behind the work in progress instead of ahead of it: a run
// that slept finishes before the burst's runs begin, and the runs in flight
// stay few. The running runs share the fresh runs' level, due at their
// lease's end: a lost worker's run is reclaimed in that order, never
// starved by a steady stream of starts, and the row version every run
// leaves behind there when it moves on (its wake_at the lease's end) sorts
// after the due fresh runs, where a claim stops before reaching it. The
// expression is the index's word for word (the planner matches it).
func pgClaimKey(alias string) string {
	return "(CASE WHEN " + alias + ".status = " + store.SQLRunning + " OR (" + alias + ".attempts = 0 AND " + alias +
		".history_count = 0) THEN 1 ELSE 0 END - 2 * CAST(" + alias + ".priority AS BIGINT))"
}

// pgClaimLevels is the CTE of the claim key levels to read, lowest first,
// each with the lowest due time worth reading (lo); it follows the floors
// CTE (the statement's parameter, claimFloors in floors.go).
//
// Without floors (NULL), it is a loose index scan of the claim index: one
// index probe per level, each giving the level's first live entry (a
// recursive CTE yields its rows in the order it makes them), lo -infinity.
// The claim reads the due runs of one level after another (a LATERAL range
// scan of the same index, bounded by the clock like the due index),
// stopping at the first level that has a claimable one, so it orders by
// claim key then due time without reading the backlog, and an empty poll
// costs one probe per level and reads no waiting run. Each probe's first
// entry (first) is the level's earliest live due time: the statement
// returns them (rows of part 3) and the store keeps them as the floors.
//
// With floors (a JSON array of {k, lo}, by k), the levels are those, and
// each level's range starts at its lo: index entries below it are skipped
// without a read. They are row versions no transaction sees any more but
// the server may not remove yet (a long transaction holds the xmin
// horizon): without floors each probe and each range scan reads every one
// of them, from the level's start, before the first live run.
var pgClaimLevels = `
floors AS (SELECT CAST(? AS JSON) AS f),
levels AS (
  WITH RECURSIVE l(k, first) AS (
    (SELECT ` + pgClaimKey("x") + `, x.wake_at FROM _sky_durable_runs x WHERE x.status NOT IN (` + store.SQLDueIndexExcludes + `) ORDER BY 1, 2 LIMIT 1)
    UNION ALL
    SELECT n.k, n.first FROM l CROSS JOIN LATERAL (
      SELECT ` + pgClaimKey("x") + ` AS k, x.wake_at AS first FROM _sky_durable_runs x
       WHERE x.status NOT IN (` + store.SQLDueIndexExcludes + `) AND ` + pgClaimKey("x") + ` > l.k
       ORDER BY 1, 2 LIMIT 1) n)
  SELECT l.k, CAST('-infinity' AS TIMESTAMPTZ) AS lo, l.first FROM l WHERE (SELECT f FROM floors) IS NULL
  UNION ALL
  SELECT j.k, j.lo, NULL FROM json_to_recordset((SELECT f FROM floors)) AS j(k BIGINT, lo TIMESTAMPTZ))`

// pgClaimFloorRows are a claim statement's rows of part 3 (a level and its
// earliest live due time or the clock, the earlier, in the seq and
// created_at columns) and its row of part 4 (the floors were read), when
// it ran without floors.
const pgClaimFloorRows = `
UNION ALL
SELECT 3, '', '', '', 0, '', 0, '', clock.now, FALSE, v.k, '', '', '', LEAST(v.first, clock.now), ''
  FROM levels v, clock WHERE (SELECT f FROM floors) IS NULL
UNION ALL
SELECT 4, '', '', '', 0, '', 0, '', clock.now, FALSE, 0, '', '', '', clock.now, '' FROM clock WHERE (SELECT f FROM floors) IS NULL`

// pgClaimWhere builds the claim statement: it picks the first claimable run
// in claim order (pgClaimKey: highest priority, started before not yet
// started), then most overdue, matching pick (a predicate on r reading one JSON parameter)
// with SKIP LOCKED, leases it and reads its journal, in one statement (one
// round trip, also for an empty poll). The due index (wake_at) drives the
// scan: the time is an uncorrelated scalar subquery, which PostgreSQL
// evaluates once (an InitPlan) and uses as the index bound, so an empty poll
// reads no waiting run (a join with the clock CTE would filter every waiting
// run instead).
//
// The scan must also be in index order, stopping at the first claimable
// run: a bitmap scan of the due index followed by a sort reads every due run
// for each claim, so a backlog of n due runs costs O(n) per claim. The
// planner picks that plan when it expects one or two due runs, and a
// pooled connection keeps the plan it made after five executions. Hence the
// status test is written NOT IN the statuses a run leaves the queue in:
// without statistics (a new or never-analyzed table, a burst of starts)
// PostgreSQL estimates `status IN (3 values)` at 1.5% of the table, which
// made the claim's estimate one row and its plan the sort, but `NOT IN` at
// 98.5%; with statistics both read the same frequencies.
//
// Rows of part 0 are the claimed runs, rows of part 1 their journal rows
// in sequence order; every row names its run and its lease token, and each
// part fills the other part's columns with placeholders.
//
// A batch of n > 1 makes the statement claim up to n runs (LIMIT n, a
// literal: a LIMIT parameter gets a generic plan that sorts every due run)
// and lease them with the tokens of a JSON array, one each (group commit of
// the claims of concurrent pollers, postgres_batch.go).
//
// Is the journal read here complete? Every journal write of the previous
// lease holder updates the run row in the same transaction (pgAppend renews
// the lease), and the statement reads the journal in its snapshot, taken when
// it started. A holder's write that committed before that is seen; one still
// in flight when we reach the row holds the row lock, so SKIP LOCKED skips
// the run. The gap is a write committing after our snapshot but before we
// lock the row: READ COMMITTED then re-checks the new row version, which may
// still be claimable (say, its lease renewed by a clock far behind ours), and
// we would claim it while our snapshot misses that write's journal row. The
// statement detects exactly that case: the locked row version (picked.xmin)
// differs from the one in our snapshot. Then fresh is false and the engine
// reads the journal again (LoadJournal) after the claim committed, when the
// old holder's token no longer matches and it cannot write any more.
func pgClaimWhere(pick string, n int) string {
	return pgClaimStatement(pgClaimClock, "", "", pick, n)
}

// pgClaimStatement is the claim statement after head (the WITH clause up to
// and including the clock CTE, and any CTEs to run before the claim), with
// the extra condition also on the run to pick and extra rows (UNION ALL ...)
// in the result. It records the claim in the run's history (pgClaimHistory,
// CTEs after "claimed": keep changes to the pick apart from them).
func pgClaimStatement(head, also, extra, pick string, n int) string {
	batch := n > 1
	limit, token, source := "1", "?", "picked"
	if batch {
		limit, token, source = strconv.Itoa(n), "tokens.token", "numbered"
	}
	sql := head + `,
lease AS (SELECT CAST(? AS BIGINT) * INTERVAL '1 millisecond' AS span),` + pgClaimLevels + `,
picked AS (
  SELECT c.id, c.locked, c.wake_at, c.k, c.workflow, c.limit_key FROM levels CROSS JOIN LATERAL (
  SELECT r.id, r.xmin AS locked, r.wake_at, ` + pgClaimKey("r") + ` AS k, r.workflow, r.limit_key FROM _sky_durable_runs r
   WHERE (` + pgClaimKey("r") + `, r.wake_at) >= (levels.k, levels.lo) AND (` + pgClaimKey("r") + `, r.wake_at) <= (levels.k, (SELECT now FROM clock))
     AND r.status NOT IN (` + store.SQLDueIndexExcludes + `)` + also + `
     AND (r.claimed_at IS NULL OR r.claimed_at < (SELECT now FROM clock) - (SELECT span FROM lease))
     AND ` + pick + `
   ORDER BY ` + pgClaimKey("r") + `, r.wake_at
   LIMIT ` + limit + `
   FOR UPDATE OF r SKIP LOCKED) c
  LIMIT ` + limit + `)`
	from := "picked, clock, lease"
	if batch {
		sql += `,
numbered AS (SELECT p.id, p.locked, row_number() OVER (ORDER BY p.k, p.wake_at, p.id) AS n FROM picked p),
tokens AS (SELECT t.token, t.n FROM json_array_elements_text(CAST(? AS JSON)) WITH ORDINALITY AS t(token, n))`
		from = "numbered JOIN tokens ON tokens.n = numbered.n, clock, lease"
	}
	return sql + `,
claimed AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLRunning + `, attempts = r.attempts + 1, claimed_at = clock.now, updated_at = clock.now,
         wake_at = clock.now + lease.span,
         lease_token = ` + token + `, claimed_by = ?, waiting_signal = NULL,
         history_count = r.history_count + CASE WHEN r.attempts > 0 OR r.history_count > 0 THEN 1 ELSE 0 END
    FROM ` + from + `
   WHERE r.id = ` + source + `.id` + pgClaimBeforeDeadline + `
  RETURNING r.id, r.lease_token, r.workflow, r.version, r.input, r.attempts, r.last_error, clock.now, ` + source + `.locked,
            r.trace_context, r.history_count, r.claimed_by)` + pgClaimHistory + `
SELECT 0 AS part, c.id, c.lease_token, c.workflow, c.version, c.input, c.attempts, c.last_error, c.now,
       COALESCE(c.locked = (SELECT s.xmin FROM _sky_durable_runs s WHERE s.id = c.id), FALSE) AS fresh,
       0 AS seq, '' AS step_id, '' AS kind, '' AS result, c.now AS created_at,
       COALESCE(c.trace_context, '') AS trace_context
  FROM claimed c
UNION ALL
SELECT 1, c.id, c.lease_token, '', 0, '', 0, '', c.now, FALSE, j.seq, j.step_id, j.kind, j.result, j.created_at, ''
  FROM claimed c JOIN _sky_durable_journal j ON j.run_id = c.id` + extra + pgClaimFloorRows + `
ORDER BY part, seq`
}

// pgCompleteClaim completes a run (journalling its last step when withLast)
// and claims the next one in one statement (PollWith, MaxRuns > 1): one
// round trip and one commit instead of two. The commit is synchronous, for
// the completion. The run being completed is never the one picked. A row of
// part 2 says the completion's fence held.
func pgCompleteClaim(pick string, withLast bool) string {
	head := pgClock + `,
` + pgDone
	if withLast {
		head += `,
last AS (
  INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
  SELECT done.id, ?, ?, ?, ?, clock.now FROM done, clock)`
	}
	extra := `
UNION ALL
SELECT 2, d.id, '', '', 0, '', 0, '', clock.now, FALSE, 0, '', '', '', clock.now, '' FROM done d, clock`
	return pgClaimStatement(head, `
     AND r.id <> CAST(? AS TEXT)`, extra, pick, 1)
}

var (
	pgCompleteClaimByName    = [2]string{pgCompleteClaim(pgPickByName, false), pgCompleteClaim(pgPickByName, true)}
	pgCompleteClaimByVersion = [2]string{pgCompleteClaim(pgPickByVersion, false), pgCompleteClaim(pgPickByVersion, true)}
)

// completeClaimOne runs pgCompleteClaim for one run.
func (s *Store) completeClaimOne(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time, next store.NextClaim) (store.Claimed, bool, error, error) {
	sqls := pgCompleteClaimByName
	pick, _ := json.Marshal(next.Names)
	if next.Pinned {
		sqls = pgCompleteClaimByVersion
		pick, _ = json.Marshal(next.Keys)
	}
	args := []any{clockArg(now), output, f.RunID, f.Token}
	sql := sqls[0]
	if last != nil {
		sql = sqls[1]
		args = append(args, last.Seq, last.StepID, string(last.Kind), last.Result)
	}
	args = append(args, next.Lease.Milliseconds(), s.floors.param(now), f.RunID, string(pick), next.Token, next.Worker)
	runs, completed, err := s.claimRowsOp(ctx, s.d, "complete+claim", sql, args...)
	if err != nil {
		return store.Claimed{}, false, nil, err
	}
	var done error
	if completed == nil {
		done = store.ErrLeaseLost
	}
	if len(runs) == 0 {
		return store.Claimed{}, false, done, nil
	}
	return runs[0].c, true, done, nil
}

// pgClaim claims by workflow name (FailSafe); pgClaimPinned by (workflow,
// version) pair (PinToStart); the Batch forms claim for several pollers.
const (
	pgPickByName    = `r.workflow IN (SELECT jsonb_array_elements_text(CAST(? AS JSONB)))`
	pgPickByVersion = `(r.workflow, r.version) IN (SELECT k.w, k.v FROM jsonb_to_recordset(CAST(? AS JSONB)) AS k(w TEXT, v INT))`
)

var (
	pgClaim       = pgClaimWhere(pgPickByName, 1)
	pgClaimPinned = pgClaimWhere(pgPickByVersion, 1)
)

func (s *Store) ClaimRun(ctx context.Context, names []string, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	namesJSON, _ := json.Marshal(names)
	return s.claim(ctx, claimRequest{single: pgClaim, pick: string(namesJSON), now: now, lease: lease, token: token, worker: worker})
}

func (s *Store) ClaimPinned(ctx context.Context, keys []store.VersionKey, now time.Time, lease time.Duration, token, worker string) (store.Claimed, bool, error) {
	keysJSON, _ := json.Marshal(keys)
	return s.claim(ctx, claimRequest{single: pgClaimPinned, pinned: true, pick: string(keysJSON), now: now, lease: lease, token: token, worker: worker})
}

// claimOne claims one run with the single-run statement.
func (s *Store) claimOne(ctx context.Context, r claimRequest) (store.Claimed, bool, error) {
	runs, err := s.claimRows(ctx, r.single, clockArg(r.now), r.lease.Milliseconds(), s.floors.param(r.now), r.pick, r.token, r.worker)
	if err != nil || len(runs) == 0 {
		return store.Claimed{}, false, err
	}
	return runs[0].c, true, nil
}

// claimedRun is a run a claim statement leased, with the lease's token.
type claimedRun struct {
	token string
	c     store.Claimed
}

// claimRows runs a claim statement and reads its runs, in the order of
// their rows, each with its journal when the claim could read it whole.
func (s *Store) claimRows(ctx context.Context, sql string, args ...any) ([]claimedRun, error) {
	runs, _, err := s.claimRowsOp(ctx, s.d, "claim", sql, args...)
	return runs, err
}

// claimNote is a claim statement's row of part 2 (a completion's fence
// held, a refusal, a rate limit's next token): the run and token it names
// (a completion's), the clock and the time the row carries in its
// created_at column.
type claimNote struct {
	f       store.Fence
	now, at time.Time
}

// claimRowsOp is claimRows on q (the pool or a transaction) for a
// statement that may also return rows of part 2 (notes).
func (s *Store) claimRowsOp(ctx context.Context, q *db.DB, op, sql string, args ...any) (runs []claimedRun, notes []claimNote, err error) {
	s.hook(op, sql)
	rs, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rs.Close()
	at := map[string]int{}
	var first map[int64]time.Time // rows of part 3, only from a claim without floors
	var read *time.Time
	for rs.Next() {
		var part int
		var run claimedRun
		var e store.JournalEntry
		var kind string
		if err := rs.Scan(&part, &run.c.ID, &run.token, &run.c.Workflow, &run.c.Version, &run.c.Input, &run.c.Attempts, &run.c.LastError, &run.c.Now,
			&run.c.JournalRead, &e.Seq, &e.StepID, &kind, &e.Result, &e.CreatedAt, &run.c.TraceContext); err != nil {
			return nil, nil, err
		}
		switch part {
		case 2:
			notes = append(notes, claimNote{f: store.Fence{RunID: run.c.ID, Token: run.token}, now: run.c.Now, at: e.CreatedAt})
			continue
		case 3:
			if first == nil {
				first = map[int64]time.Time{}
			}
			first[int64(e.Seq)] = e.CreatedAt
			continue
		case 4:
			read = &run.c.Now
			continue
		}
		if part == 0 {
			at[run.c.ID] = len(runs)
			runs = append(runs, run)
			continue
		}
		if i, ok := at[run.c.ID]; ok {
			e.Kind = store.EntryKind(kind)
			runs[i].c.Journal = append(runs[i].c.Journal, e)
		}
	}
	if err := rs.Err(); err != nil {
		return nil, nil, err
	}
	if read != nil {
		s.floors.learn(*read, first)
	}
	for i := range runs {
		if !runs[i].c.JournalRead {
			runs[i].c.Journal = nil
		}
	}
	return runs, notes, nil
}

const pgLoadJournal = `SELECT seq, step_id, kind, result, created_at FROM _sky_durable_journal WHERE run_id = ? ORDER BY seq`

func (s *Store) LoadJournal(ctx context.Context, runID string) ([]store.JournalEntry, error) {
	s.hook("journal", pgLoadJournal)
	return store.QueryAll(ctx, s.d, pgLoadJournal, []any{runID}, func(scan func(...any) error) (store.JournalEntry, error) {
		var e store.JournalEntry
		var kind string
		err := scan(&e.Seq, &e.StepID, &kind, &e.Result, &e.CreatedAt)
		e.Kind = store.EntryKind(kind)
		return e, err
	})
}

// The fence: every write of a lease holder matches its run by id and lease
// token only. Only a claim sets a token (a fresh random value, with status
// running) and every way out of running clears it, so the token implies the
// status. The statements do not test status = 'running' as well: with
// statistics saying few runs are running, PostgreSQL then preferred the
// (status, created_at, id) index to the primary key and read every
// 'running' entry, dead ones too, on each write (TestFencedWritesUseTheKey).
//
// pgAppend renews the lease and inserts the journal row in one statement:
// the INSERT reads from the UPDATE, so a lost lease inserts nothing. The
// renewal writes claimed_at only, which no index holds, so PostgreSQL
// updates the row in place (HOT) and writes no index entry: updated_at is
// in the finished index (migration 0008), and writing it too put a new
// entry in each of the run's indexes at every step
// (TestJournalledStepIsAHotUpdate). updated_at moves with the run's state.
const pgAppend = pgClock + `,
lease AS (
  UPDATE _sky_durable_runs r SET claimed_at = clock.now
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?` + pgBeforeDeadline + `
  RETURNING r.id)
INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
SELECT lease.id, ?, ?, ?, ?, clock.now FROM lease, clock`

// appendOne journals one entry on q (the pool or a transaction).
func (s *Store) appendOne(ctx context.Context, q *db.DB, f store.Fence, e store.JournalEntry, now time.Time) error {
	n, err := s.exec(ctx, q, "append", pgAppend, clockArg(now), f.RunID, f.Token, e.Seq, e.StepID, string(e.Kind), e.Result)
	return store.LeaseChecked(n, err)
}

const pgLockRun = `SELECT id FROM _sky_durable_runs WHERE id = ? AND lease_token = ? FOR UPDATE`

const pgReadSignal = `SELECT payload, COALESCE(trace_context, '') FROM _sky_durable_signals WHERE run_id = ? AND name = ? AND delivered = FALSE`

const pgMarkDelivered = `UPDATE _sky_durable_signals SET delivered = TRUE WHERE run_id = ? AND name = ?`

func (s *Store) ConsumeSignal(ctx context.Context, f store.Fence, name string, e store.JournalEntry, accept func(payload, traceContext string) (string, error), now time.Time) (bool, error) {
	return store.ConsumeSQL{DB: s.d, Hook: s.hook, Lock: s.lockRun, Append: s.appendOne, Read: pgReadSignal, Mark: pgMarkDelivered}.
		ConsumeSignal(ctx, f, name, e, accept, now)
}

func (s *Store) lockRun(ctx context.Context, tx *db.DB, f store.Fence) error {
	s.hook("lock", pgLockRun)
	rs, err := tx.Query(ctx, pgLockRun, f.RunID, f.Token)
	if err != nil {
		return err
	}
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		return store.ErrLeaseLost
	}
	return nil
}

// pgSuspend parks the run. When it waits for a signal that is already
// stored, it is due at once (the signal arrived while it was running).
// It records the suspension, with what it waits for (the last parameter).
var pgSuspend = pgClock + `,
parked AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLWaiting + `, attempts = 0, last_error = '', claimed_at = NULL, lease_token = NULL, updated_at = clock.now,
         waiting_signal = CAST(? AS TEXT), history_count = r.history_count + 1,
         wake_at = CASE
           WHEN CAST(? AS TEXT) IS NOT NULL AND EXISTS (
             SELECT 1 FROM _sky_durable_signals s WHERE s.run_id = r.id AND s.name = CAST(? AS TEXT) AND s.delivered = FALSE)
           THEN clock.now
           ELSE COALESCE(CAST(? AS TIMESTAMPTZ), 'infinity') END
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?
  RETURNING r.id, r.history_count, r.claimed_by),
` + pgParkedHistory

// pgParkedHistory ends a statement whose CTE "parked" suspended a run:
// it records the suspension, with what it waits for (a parameter).
var pgParkedHistory = pgTrim("trimmed", "parked") + `
` + pgRecord(`parked s`, `clock.now`, `'suspended'`, `s.claimed_by`, pgPriorAttempts, `CAST(? AS TEXT)`, `''`)

func (s *Store) Suspend(ctx context.Context, f store.Fence, wakeAt time.Time, signal string, now time.Time) error {
	var sig, wake any
	if signal != "" {
		sig = signal
	}
	if !wakeAt.IsZero() {
		wake = wakeAt
	}
	detail := store.SuspendDetail(wakeAt, signal)
	if signal == "" {
		n, err := s.exec(ctx, s.d, "suspend", pgSuspend, clockArg(now), sig, sig, sig, wake, f.RunID, f.Token, detail)
		return store.LeaseChecked(n, err)
	}
	// Waiting for a signal: lock the run row first, so a Signal committing
	// concurrently is either seen by the EXISTS (it committed before the
	// lock was granted) or sees waiting_signal set (it runs after us).
	return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if err := s.lockRun(ctx, tx, f); err != nil {
			return err
		}
		n, err := s.exec(ctx, tx, "suspend", pgSuspend, clockArg(now), sig, sig, sig, wake, f.RunID, f.Token, detail)
		return store.LeaseChecked(n, err)
	})
}

// pgComplete marks a run done (and records it: pgDoneHistory); the rows
// it reports are the runs it completed.
var pgComplete = pgClock + `,
` + pgDone + `
SELECT id FROM done`

// pgDone is the CTE that completes a run (output, id, token) under its
// fence, returning its id, and the CTEs recording the completion.
var pgDone = `done AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLDone + `, output = ?, last_error = '', claimed_at = NULL, lease_token = NULL,
         waiting_signal = NULL, updated_at = clock.now, history_count = r.history_count + ` + pgDoneCount + `
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?` + pgBeforeDeadline + `
  RETURNING r.id, r.history_count, r.claimed_by, r.attempts)` + pgDoneHistory

// pgCompleteWith is pgComplete that also journals the body's last step: the
// INSERT reads from the UPDATE, so a lost lease writes nothing.
var pgCompleteWith = pgClock + `,
` + pgDone + `
INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
SELECT done.id, ?, ?, ?, ?, clock.now FROM done, clock`

// completeOne marks one run done, journalling last (when not nil) in the
// same statement.
func (s *Store) completeOne(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	if last == nil {
		n, err := s.exec(ctx, s.d, "complete", pgComplete, clockArg(now), output, f.RunID, f.Token)
		return store.LeaseChecked(n, err)
	}
	n, err := s.exec(ctx, s.d, "complete", pgCompleteWith, clockArg(now), output, f.RunID, f.Token,
		last.Seq, last.StepID, string(last.Kind), last.Result)
	return store.LeaseChecked(n, err)
}

// pgFail records a failed attempt (status failed or dead, the event of
// that name with the error and the step: the last parameter).
var pgFail = pgClock + `,
failed AS (
  UPDATE _sky_durable_runs r
     SET status = ?, last_error = ?, wake_at = clock.now + CAST(? AS BIGINT) * INTERVAL '1 millisecond',
         claimed_at = NULL, lease_token = NULL, waiting_signal = NULL, updated_at = clock.now, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?
  RETURNING r.id, r.history_count, r.claimed_by, r.attempts, r.status, r.last_error),
` + pgTrim("trimmed", "failed") + `
` + pgRecord(`failed s`, `clock.now`, `s.status`, `s.claimed_by`, `s.attempts`, `s.last_error`, `CAST(? AS TEXT)`)

func (s *Store) Fail(ctx context.Context, f store.Fence, lastError, step string, backoff time.Duration, dead bool, now time.Time) error {
	status := store.StatusFailed
	if dead {
		status = store.StatusDead
	}
	n, err := s.exec(ctx, s.d, "fail", pgFail, clockArg(now), string(status), lastError, backoff.Milliseconds(), f.RunID, f.Token, step)
	return store.LeaseChecked(n, err)
}

// pgRelease gives a run back (recording it released by its worker).
var pgRelease = pgClock + `,
released AS (
  UPDATE _sky_durable_runs r
     SET status = CASE WHEN r.last_error <> '' THEN ` + store.SQLFailed + ` ELSE ` + store.SQLWaiting + ` END, attempts = GREATEST(r.attempts - 1, 0),
         wake_at = clock.now, claimed_at = NULL, lease_token = NULL, updated_at = clock.now, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ? AND r.lease_token = ?
  RETURNING r.id, r.history_count, r.claimed_by),
` + pgTrim("trimmed", "released") + `
` + pgRecord(`released s`, `clock.now`, `'released'`, `s.claimed_by`, pgPriorAttempts, `''`, `''`)

func (s *Store) Release(ctx context.Context, f store.Fence, now time.Time) error {
	n, err := s.exec(ctx, s.d, "release", pgRelease, clockArg(now), f.RunID, f.Token)
	return store.LeaseChecked(n, err)
}

const pgLockAnyRun = `SELECT id FROM _sky_durable_runs WHERE id = ? FOR UPDATE`

// pgPutSignal keeps the first delivery of a signal (one-shot per run and
// name): a repeat changes nothing, delivered or not, and so does a signal to
// a finished run.
const pgPutSignal = pgClock + `
INSERT INTO _sky_durable_signals (run_id, name, payload, trace_context, delivered, created_at)
SELECT ?, ?, ?, NULLIF(CAST(? AS TEXT), ''), FALSE, clock.now FROM clock
 WHERE NOT EXISTS (SELECT 1 FROM _sky_durable_runs f WHERE f.id = ? AND f.status IN (` + store.SQLTerminal + `))
ON CONFLICT (run_id, name) DO NOTHING`

// pgWakeForSignal makes a run parked on the signal due now. It also
// touches a run that is already due: a poll may have skipped it (SKIP
// LOCKED) while this transaction held its row, and the update's hint (the
// trigger of notify.go) makes the pollers look again once it commits.
const pgWakeForSignal = pgClock + `
UPDATE _sky_durable_runs r
   SET wake_at = CASE WHEN r.waiting_signal = CAST(? AS TEXT) THEN clock.now ELSE r.wake_at END, updated_at = clock.now
  FROM clock
 WHERE r.id = ? AND r.status IN (` + store.SQLFree + `)
   AND (r.waiting_signal = CAST(? AS TEXT) OR r.wake_at <= clock.now)`

func (s *Store) PutSignal(ctx context.Context, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	return s.putSignal(ctx, pgPutSignal, "", runID, name, payload, traceContext, now)
}

// putSignal stores a signal with sql (pgPutSignal, pgReplaceSignal: clock,
// run id, name, payload, trace context, run id) and wakes the run when it
// stored one, recording event (when not "") in the run's history.
func (s *Store) putSignal(ctx context.Context, sql string, event store.EventKind, runID, name, payload, traceContext string, now time.Time) (bool, error) {
	stored := false
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		// Lock the run row (if it exists) so a concurrent suspend either
		// sees this signal or is seen by the wake-up below.
		s.hook("signal", pgLockAnyRun)
		rs, err := tx.Query(ctx, pgLockAnyRun, runID)
		if err != nil {
			return err
		}
		rs.Close()
		n, err := s.exec(ctx, tx, "signal", sql, clockArg(now), runID, name, payload, traceContext, runID)
		if err != nil || n == 0 {
			return err
		}
		stored = true
		if _, err = s.exec(ctx, tx, "signal", pgWakeForSignal, clockArg(now), name, runID, name); err != nil || event == "" {
			return err
		}
		return s.recordEvent(ctx, tx, runID, event, store.ActorOf(ctx), name, "", now)
	})
	return stored, err
}

// pgRunColumns reads a run; 'infinity' reads as NULL (no wake time).
const pgRunColumns = `id, workflow, version, status, input, COALESCE(output, ''), attempts,
  CASE WHEN wake_at = 'infinity' THEN NULL ELSE wake_at END, COALESCE(waiting_signal, ''), last_error,
  claimed_at, claimed_by, created_at, updated_at, compacted_at, deadline_at, COALESCE(parent_id, ''), priority, COALESCE(limit_key, ''),
  COALESCE(forked_from, ''), COALESCE(fork_step, ''), key_queued`

const pgReadRun = `SELECT ` + pgRunColumns + ` FROM _sky_durable_runs WHERE id = ?`

func (s *Store) ReadRun(ctx context.Context, runID string) (store.Run, error) {
	s.hook("read", pgReadRun)
	runs, err := store.ScanRuns(ctx, s.d, pgReadRun, []any{runID}, pgRunScanner)
	if err != nil {
		return store.Run{}, err
	}
	if len(runs) == 0 {
		return store.Run{}, store.ErrRunNotFound
	}
	return runs[0], nil
}

func (s *Store) ListRuns(ctx context.Context, f store.ListFilter) ([]store.Run, error) {
	sql, args := store.ListSQL(pgRunColumns, f, listDialect)
	if f.Search != "" {
		if err := store.CheckSearch(f.Search); err != nil {
			return nil, err
		}
		sql, args = store.SearchSQL(pgRunColumns, f, searchDialect)
	}
	s.hook("list", sql)
	return store.ScanRuns(ctx, s.d, sql, args, pgRunScanner)
}

func pgRunScanner(scan func(...any) error) (store.Run, error) {
	var r store.Run
	var status string
	var wake, claimedAt, compactedAt, deadline *time.Time
	err := scan(&r.ID, &r.Workflow, &r.Version, &status, &r.Input, &r.Output, &r.Attempts,
		&wake, &r.WaitingSignal, &r.LastError, &claimedAt, &r.ClaimedBy, &r.CreatedAt, &r.UpdatedAt, &compactedAt, &deadline, &r.ParentID, &r.Priority, &r.LimitKey,
		&r.ForkedFrom, &r.ForkStep, &r.KeyQueued)
	r.Status = store.Status(status)
	if wake != nil {
		r.WakeAt = *wake
	}
	if claimedAt != nil {
		r.ClaimedAt = *claimedAt
	}
	if compactedAt != nil {
		r.CompactedAt = *compactedAt
	}
	if deadline != nil {
		r.Deadline = *deadline
	}
	return r, err
}

// pgRetrySets are the columns a retry sets (RetryRun, BulkAct).
const pgRetrySets = `status = ` + store.SQLWaiting + `, attempts = 0, wake_at = clock.now, claimed_at = NULL, lease_token = NULL,
       waiting_signal = NULL, updated_at = clock.now`

// pgRetry makes a failed or dead run due, recording it retried by the
// operator (the last parameter).
var pgRetry = pgClock + `,
retried AS (
  UPDATE _sky_durable_runs r
     SET ` + pgRetrySets + `, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ? AND r.status IN (` + store.SQLRetryable + `)
  RETURNING r.id, r.history_count),
` + pgTrim("trimmed", "retried") + `
` + pgRecord(`retried s`, `clock.now`, `'retried'`, `CAST(? AS TEXT)`, pgPriorAttempts, `''`, `''`)

func (s *Store) RetryRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "retry", pgRetry, clockArg(now), runID, store.ActorOf(ctx))
	return n == 1, err
}

const pgWake = pgClock + `
UPDATE _sky_durable_runs r SET wake_at = clock.now, updated_at = clock.now
  FROM clock
 WHERE r.id = ? AND r.status = ` + store.SQLWaiting

func (s *Store) WakeRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "wake", pgWake, clockArg(now), runID)
	return n == 1, err
}

// listDialect is store.ListSQL's view of PostgreSQL.
var listDialect = store.ListDialect{
	IndexedBy:    func(string) string { return "" },
	Time:         func(t time.Time) any { return t },
	IDIn:         func(sub string) string { return "= ANY (ARRAY(" + sub + "))" },
	Namespace:    `split_part(id, chr(31), 1)`,
	Namespaced:   `strpos(id, chr(31)) > 0`,
	Unnamespaced: `strpos(id, chr(31)) < 1`,
}

// pgSearchMatch is a search's condition (store.SearchSQL) on both parts of
// the table: on the finished runs, the planner answers it from the trigram
// index _sky_durable_runs_search (migration 0015), a BitmapOr of its four
// columns (plans_test.go's wantIndex pins it); on the unfinished runs, it tests the rows the status index
// walk reads. Its four parameters are the same LIKE pattern.
const pgSearchMatch = `(id ILIKE ? OR input ILIKE ? OR output ILIKE ? OR last_error ILIKE ?)`

// searchDialect is store.SearchSQL's view of PostgreSQL.
var searchDialect = store.SearchDialect{
	ListDialect: listDialect,
	// The gate is a one-time filter of the index scan: not run when false.
	Finished: func(text, gate string) (string, []any) {
		cond, args := pgSearch(text)
		return gate + " AND " + cond, args
	},
	Live: pgSearch,
}

// IndexSearch has nothing to do: the trigram index (migration 0015) takes a
// run in the statement that finishes it.
func (s *Store) IndexSearch(context.Context, int) (int, error) { return 0, nil }

// pgSearch is pgSearchMatch for text, with its arguments.
func pgSearch(text string) (string, []any) {
	p := store.LikePattern(text)
	return pgSearchMatch, []any{p, p, p, p}
}

// pgCancelSets are the columns a cancel sets (CancelRun, BulkAct, the
// descendants of a run ended: pgCancelDescendants). A run queued behind its
// key's head leaves the queue in the same row version (key_queued; the
// trigger of migration 0018 would write it a second time).
const pgCancelSets = `status = ` + store.SQLCancelled + `, claimed_at = NULL, lease_token = NULL, updated_at = clock.now, key_queued = FALSE`

// pgCancel cancels a run that is not finished and, with it, its
// unfinished descendants (child runs, theirs, ...), in one statement,
// planned without JIT (withoutJIT).
// It records the run cancelled by the operator (the last parameter); its
// descendants' histories record nothing.
var pgCancel = `WITH RECURSIVE ` + pgClockCTE + `,
ended AS (
  UPDATE _sky_durable_runs r
     SET ` + pgCancelSets + `, history_count = r.history_count + 1
    FROM clock
   WHERE r.id = ? AND r.status IN (` + store.SQLClaimable + `)
  RETURNING r.id, r.history_count, r.attempts),
` + pgCancelDescendants + `,
` + pgTrim("trimmed", "ended") + `,
ended_history AS (
  ` + pgRecord(`ended s`, `clock.now`, store.SQLCancelled, `CAST(? AS TEXT)`, `s.attempts`, `''`, `''`) + `)
SELECT (SELECT COUNT(*) FROM ended)`

func (s *Store) CancelRun(ctx context.Context, runID string, now time.Time) (bool, error) {
	var n int64
	err := s.withoutJIT(ctx, func(ctx context.Context, tx *db.DB) error {
		s.hook("cancel", pgCancel)
		return tx.QueryRow(ctx, pgCancel, clockArg(now), runID, store.ActorOf(ctx)).Scan(&n)
	})
	return n == 1, err
}

const pgFinishedRun = `SELECT id FROM _sky_durable_runs WHERE id = ? AND status IN (` + store.SQLCompactable + `) FOR UPDATE`

const pgDeleteJournal = `DELETE FROM _sky_durable_journal WHERE run_id = ?`

const pgDeleteSignals = `DELETE FROM _sky_durable_signals WHERE run_id = ?`

const pgDeleteHistory = `DELETE FROM _sky_durable_history WHERE run_id = ?`

const pgStampCompacted = pgClock + `
UPDATE _sky_durable_runs r SET compacted_at = clock.now FROM clock WHERE r.id = ?`

func (s *Store) CompactRun(ctx context.Context, runID string, now time.Time) (bool, int64, error) {
	ok, total := false, int64(0)
	err := s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		s.hook("compact", pgFinishedRun)
		rs, err := tx.Query(ctx, pgFinishedRun, runID)
		if err != nil {
			return err
		}
		ok = rs.Next()
		rs.Close()
		if !ok {
			return nil
		}
		for _, sql := range []string{pgDeleteJournal, pgDeleteSignals} {
			n, err := s.exec(ctx, tx, "compact", sql, runID)
			if err != nil {
				return err
			}
			total += n
		}
		// The history goes too, not counted: the rows are the journal's and the mailbox's.
		if _, err := s.exec(ctx, tx, "compact", pgDeleteHistory, runID); err != nil {
			return err
		}
		_, err = s.exec(ctx, tx, "compact", pgStampCompacted, clockArg(now), runID)
		return err
	})
	return ok, total, err
}

const pgSaveSnapshot = pgClock + `
INSERT INTO _sky_durable_snapshot (id, seq, data, updated_at)
SELECT ?, ?, ?, clock.now FROM clock
ON CONFLICT (id) DO UPDATE SET seq = EXCLUDED.seq, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at
 WHERE _sky_durable_snapshot.seq < EXCLUDED.seq`

func (s *Store) SaveSnapshot(ctx context.Context, id string, seq int64, data string, now time.Time) (bool, error) {
	n, err := s.exec(ctx, s.d, "snapshot", pgSaveSnapshot, clockArg(now), id, seq, data)
	return n == 1, err
}

const pgLoadSnapshot = `SELECT seq, data FROM _sky_durable_snapshot WHERE id = ?`

func (s *Store) LoadSnapshot(ctx context.Context, id string) (int64, string, bool, error) {
	s.hook("snapshot", pgLoadSnapshot)
	return store.QuerySnapshot(ctx, s.d, pgLoadSnapshot, id)
}
