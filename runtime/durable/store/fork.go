package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"skydurable/runtime/db"
	"skydurable/runtime/task"
)

// TimeTravel is what the store does for time travel (Engine.Fork,
// Engine.Rewind): each operation cuts a run's history at one journal
// position, in one transaction. Each dialect gives its statements (TimeTravelSQL)
// in its fork.go and runs them through TimeTravelSQL's methods.
type TimeTravel interface {
	// ForkRun inserts run f.NewID, due now, as a copy of run f.RunID cut
	// at f.Seq: the original's workflow, version, input, priority and
	// limit key; its journal entries before the cut, byte for byte (then
	// f.Set, when not nil); its mailbox, the signals of f.Consumed
	// consumed and every other one unconsumed, in their order; the events
	// of f.Events; and a copy (with its journal) of each finished child
	// started before the cut, as f.NewID's child under the same key. It
	// records forked_from and fork_step. It changes nothing and returns
	// ErrRunExists when f.NewID exists, and returns the id of a child
	// started before the cut that is not finished.
	ForkRun(ctx context.Context, f Fork, now time.Time) (unfinishedChild string, err error)
	// RewindRun cuts run c.RunID's own history at c.Seq, when it is in
	// one of the statuses rewind takes (OpRewind) and not compacted: its
	// journal from c.Seq on is deleted, its signals but those of
	// c.Consumed become unconsumed, its events but those of c.Events are
	// deleted, and it is waiting, due now, with no output, error, lease
	// or attempts. ok is false when the run is not so; unfinishedChild is
	// a child started after the cut that is not finished (nothing
	// changed).
	RewindRun(ctx context.Context, c Cut, now time.Time) (ok bool, unfinishedChild string, err error)
}

// Cut is a position in a run's journal, and what of its mailbox, events and
// children lies before it.
type Cut struct {
	RunID string
	// Seq is the first journal position cut off: entries with a smaller
	// seq are kept.
	Seq int
	// Step is the step id at the cut (recorded as a fork's fork_step).
	Step string
	// Consumed names the signals consumed before the cut.
	Consumed []string
	// Events are the event keys set before the cut and not after it.
	Events []string
	// Children are the child runs started before the cut: by id (each
	// Durable.startChild) and by group (each Durable.all).
	Children []string
	Groups   []string
}

// Fork is a Cut copied into a new run.
type Fork struct {
	Cut
	NewID string
	// Set, when not nil, is journalled after the copied entries: the
	// replaced result of the step at the cut.
	Set *JournalEntry
}

// ErrRunExists is what ForkRun returns when the new id is taken.
var ErrRunExists = task.New(task.Conflict, "durable: a run with that id exists")

// TimeTravelSQL is a dialect's statements of fork and rewind, with what
// runs them; its ForkRun and RewindRun are the one procedure both stores
// follow (a store's TimeTravel methods call them), so the stores differ
// only in their SQL. A statement marked (at) takes the time first, as At
// writes it; a list argument is one JSON array (JSONList).
type TimeTravelSQL struct {
	DB   *db.DB
	Hook StatementHook
	// At is a time argument in the dialect's encoding.
	At func(time.Time) any
	// Record writes one history event of a run in the transaction q.
	Record func(ctx context.Context, q *db.DB, runID string, kind EventKind, actor, detail, step string, now time.Time) error

	InsertFork        string // (at) new id, step, run id: the fork, no row when the new id exists
	ForkJournal       string // new id, run id, seq: the entries before the cut
	ForkSet           string // (at) new id, step id, kind, result, seq: the entry set at the cut
	ForkSignals       string // new id, consumed names, run id: the mailbox
	ForkEvents        string // new id, run id, event keys
	CutChildren       string // run id, child ids, groups: the children started before the cut (id, status)
	ForkChildren      string // new id, from, new id, finished ids: their copies
	ForkChildJournals string // new id, from, finished ids: their journals
	RewindLock        string // run id: the run's id when rewind takes it (locked where the dialect locks rows)
	RewindChild       string // run id, child ids, groups: the first unfinished child started after the cut
	RewindJournal     string // run id, seq
	RewindSignals     string // run id, consumed names
	RewindEvents      string // run id, event keys
	RecordPriorDone   string // run id: the done a run without history did not store
	ResetRun          string // (at) run id: waiting, due now, nothing of its attempts left
}

// TimeTravelDialect is what differs between databases in the statements
// of fork and rewind.
type TimeTravelDialect struct {
	// Clock is the CTE an (at) statement starts with: "WITH clock AS
	// (SELECT ... AS now)" over its first argument.
	Clock string
	// CreatedAt is a new run's created_at, of clock.now: to the
	// millisecond on every store (see ListSQL's tie-break).
	CreatedAt string
	// In is "column is in the JSON array ?" (one list argument).
	In func(column string) string
	// Text is a text argument where its type must be named (a || operand).
	Text string
	// Lock follows a read that locks the row it reads ("": the dialect
	// has one writer and needs none).
	Lock string
}

// NewTimeTravelSQL builds the statements of fork and rewind in dialect d;
// the store adds what runs them (DB, Hook, At, Record) and its
// RecordPriorDone.
func NewTimeTravelSQL(d TimeTravelDialect) TimeTravelSQL {
	return TimeTravelSQL{
		InsertFork: d.Clock + `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, attempts, wake_at, last_error, created_at, updated_at,
                               priority, limit_key, forked_from, fork_step)
SELECT ?, o.workflow, o.version, ` + SQLWaiting + `, o.input, 0, clock.now, '', ` + d.CreatedAt + `, clock.now, o.priority, o.limit_key, o.id, ?
  FROM _sky_durable_runs o, clock
 WHERE o.id = ?
ON CONFLICT (id) DO NOTHING`,
		ForkJournal: `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, j.step_id, j.kind, j.result, j.created_at, j.seq FROM _sky_durable_journal j WHERE j.run_id = ? AND j.seq < ?`,
		ForkSet: d.Clock + `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ?, ?, ?, ?, clock.now, ? FROM clock`,
		ForkSignals: `
INSERT INTO _sky_durable_signals (run_id, name, payload, delivered, created_at)
SELECT ?, s.name, s.payload, s.delivered AND ` + d.In("s.name") + `, s.created_at
  FROM _sky_durable_signals s WHERE s.run_id = ?`,
		ForkEvents: `
INSERT INTO _sky_durable_events (run_id, key, value, updated_at)
SELECT ?, e.key, e.value, e.updated_at FROM _sky_durable_events e WHERE e.run_id = ? AND ` + d.In("e.key"),
		// The children started before the cut: by id (startChild) or
		// group (all), on the parent index.
		CutChildren: `
SELECT c.id, c.status FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND (` + d.In("c.id") + ` OR ` + d.In("c.child_group") + `)
 ORDER BY c.created_at, c.id`,
		// A copied child's id is the fork's id followed by the child's
		// "/key" (substr from the character after the original's id).
		ForkChildren: `
INSERT INTO _sky_durable_runs (id, workflow, version, status, input, output, attempts, wake_at, waiting_signal, last_error,
                               created_at, updated_at, parent_id, child_group, priority, limit_key, forked_from)
SELECT ` + d.Text + ` || substr(c.id, ?), c.workflow, c.version, c.status, c.input, c.output, c.attempts, c.wake_at,
       c.waiting_signal, c.last_error, c.created_at, c.updated_at, ?, c.child_group, c.priority, c.limit_key, c.id
  FROM _sky_durable_runs c WHERE ` + d.In("c.id") + `
ON CONFLICT (id) DO NOTHING`,
		ForkChildJournals: `
INSERT INTO _sky_durable_journal (run_id, step_id, kind, result, created_at, seq)
SELECT ` + d.Text + ` || substr(j.run_id, ?), j.step_id, j.kind, j.result, j.created_at, j.seq
  FROM _sky_durable_journal j WHERE ` + d.In("j.run_id"),
		RewindLock: `
SELECT r.id FROM _sky_durable_runs r
 WHERE r.id = ? AND r.status IN (` + SQLRewindable + `) AND r.compacted_at IS NULL` + d.Lock,
		// The first unfinished child started after the cut: a child of
		// the run not among those started before it.
		RewindChild: `
SELECT c.id FROM _sky_durable_runs c
 WHERE c.parent_id = ? AND c.status NOT IN (` + SQLUnclaimable + `)
   AND NOT (` + d.In("c.id") + ` OR COALESCE(` + d.In("c.child_group") + `, FALSE))
 ORDER BY c.created_at, c.id
 LIMIT 1`,
		RewindJournal: `DELETE FROM _sky_durable_journal WHERE run_id = ? AND seq >= ?`,
		RewindSignals: `
UPDATE _sky_durable_signals SET delivered = FALSE
 WHERE run_id = ? AND delivered AND NOT (` + d.In("name") + `)`,
		RewindEvents: `DELETE FROM _sky_durable_events WHERE run_id = ? AND NOT (` + d.In("key") + `)`,
		ResetRun: d.Clock + `
UPDATE _sky_durable_runs
   SET status = ` + SQLWaiting + `, output = NULL, attempts = 0, wake_at = clock.now, waiting_signal = NULL, last_error = '',
       claimed_at = NULL, lease_token = NULL, updated_at = clock.now
  FROM clock
 WHERE id = ?`,
	}
}

// JSONList is the JSON array of ss ("[]" for none), a list argument.
func JSONList(ss []string) string {
	if len(ss) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ss)
	return string(b)
}

// errUnfinished rolls back a fork an unfinished child refused; ForkRun
// reports the child instead.
var errUnfinished = errors.New("durable: a child started before the cut is unfinished")

// exec runs one statement in q, through the hook.
func (t TimeTravelSQL) exec(ctx context.Context, q *db.DB, op, sql string, args ...any) error {
	t.Hook(op, sql)
	_, err := q.Exec(ctx, sql, args...)
	return err
}

// ids runs a query of one id column in q, through the hook.
func (t TimeTravelSQL) ids(ctx context.Context, q *db.DB, op, sql string, args ...any) ([]string, error) {
	t.Hook(op, sql)
	return QueryStrings(ctx, q, sql, args)
}

// ForkRun is TimeTravel.ForkRun over t's statements.
func (t TimeTravelSQL) ForkRun(ctx context.Context, f Fork, now time.Time) (string, error) {
	var unfinished string
	err := t.DB.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		t.Hook("fork", t.InsertFork)
		n, err := tx.Exec(ctx, t.InsertFork, t.At(now), f.NewID, f.Step, f.RunID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrRunExists
		}
		var finished []string
		if unfinished, finished, err = t.cutChildren(ctx, tx, f.Cut); err != nil {
			return err
		}
		if unfinished != "" {
			return errUnfinished
		}
		if err := t.exec(ctx, tx, "fork", t.ForkJournal, f.NewID, f.RunID, f.Seq); err != nil {
			return err
		}
		if f.Set != nil {
			if err := t.exec(ctx, tx, "fork", t.ForkSet, t.At(now), f.NewID, f.Set.StepID, string(f.Set.Kind), f.Set.Result, f.Set.Seq); err != nil {
				return err
			}
		}
		if err := t.exec(ctx, tx, "fork", t.ForkSignals, f.NewID, JSONList(f.Consumed), f.RunID); err != nil {
			return err
		}
		if err := t.exec(ctx, tx, "fork", t.ForkEvents, f.NewID, f.RunID, JSONList(f.Events)); err != nil {
			return err
		}
		if err := t.Record(ctx, tx, f.NewID, EventForked, ActorOf(ctx), f.RunID, f.Step, now); err != nil {
			return err
		}
		if len(finished) == 0 {
			return nil
		}
		from := utf8.RuneCountInString(f.RunID) + 1
		if err := t.exec(ctx, tx, "fork", t.ForkChildren, f.NewID, from, f.NewID, JSONList(finished)); err != nil {
			return err
		}
		return t.exec(ctx, tx, "fork", t.ForkChildJournals, f.NewID, from, JSONList(finished))
	})
	if errors.Is(err, errUnfinished) {
		return unfinished, nil
	}
	return "", err
}

// cutChildren reads the children started before c: the first unfinished
// one, or else all of them.
func (t TimeTravelSQL) cutChildren(ctx context.Context, tx *db.DB, c Cut) (unfinished string, finished []string, err error) {
	if len(c.Children) == 0 && len(c.Groups) == 0 {
		return "", nil, nil
	}
	t.Hook("fork", t.CutChildren)
	kids, err := QueryAll(ctx, tx, t.CutChildren, []any{c.RunID, JSONList(c.Children), JSONList(c.Groups)},
		func(scan func(...any) error) (ChildState, error) {
			var k ChildState
			var status string
			err := scan(&k.ID, &status)
			k.Status = Status(status)
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

// RewindRun is TimeTravel.RewindRun over t's statements.
func (t TimeTravelSQL) RewindRun(ctx context.Context, c Cut, now time.Time) (bool, string, error) {
	var ok bool
	var child string
	err := t.DB.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		ids, err := t.ids(ctx, tx, "rewind", t.RewindLock, c.RunID)
		if err != nil || len(ids) == 0 {
			return err
		}
		kids, err := t.ids(ctx, tx, "rewind", t.RewindChild, c.RunID, JSONList(c.Children), JSONList(c.Groups))
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
			{t.RewindJournal, []any{c.RunID, c.Seq}},
			{t.RewindSignals, []any{c.RunID, JSONList(c.Consumed)}},
			{t.RewindEvents, []any{c.RunID, JSONList(c.Events)}},
			{t.RecordPriorDone, []any{c.RunID}},
			{t.ResetRun, []any{t.At(now), c.RunID}},
		} {
			if err := t.exec(ctx, tx, "rewind", st.sql, st.args...); err != nil {
				return err
			}
		}
		if err := t.Record(ctx, tx, c.RunID, EventRewound, ActorOf(ctx), "", c.Step, now); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return ok, child, err
}
