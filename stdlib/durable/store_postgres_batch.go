package durable

import (
	"context"
	"encoding/json"
	"time"

	"skydurable/runtime/db"
)

// Group commit on PostgreSQL (groupcommit.go): journal appends and run
// completions that the pollers of one Engine make at the same time share a
// statement and a commit. A batch of one uses the single-run statement
// (pgAppend, pgComplete), so a lone run costs what it did unbatched; a batch
// of several passes its rows as one JSON parameter and learns, per row,
// whether the lease held and the row was written. A row the batch could not
// write for another reason (a duplicate journal entry), or every row of a
// batch that failed as a whole, is written again alone, so it gets exactly
// the error (or success) it would have had unbatched and no request fails
// for another's fault.

// maxBatch bounds the rows of one batched statement; maxFlights bounds the
// batches of one kind in flight at once (a write that finds fewer waits for
// none).
const (
	maxBatch   = 64
	maxFlights = 2
)

// appendRequest is one journal append waiting for its batch.
type appendRequest struct {
	f   fence
	e   JournalEntry
	now time.Time
}

// completeRequest is one run completion waiting for its batch, with the
// body's last step when it is still to be journalled.
type completeRequest struct {
	f      fence
	last   *JournalEntry
	output string
	now    time.Time
}

// batchRow is a row of a batch's JSON parameter: the request's fence and
// time (null: the database clock) and its payload.
type batchRow struct {
	RunID  string     `json:"run_id"`
	Token  string     `json:"token"`
	At     *time.Time `json:"at"`
	Seq    int        `json:"seq,omitempty"`
	StepID string     `json:"step_id,omitempty"`
	Kind   string     `json:"kind,omitempty"`
	Result string     `json:"result,omitempty"`
	Output *string    `json:"output,omitempty"`
}

func rowTime(now time.Time) *time.Time {
	if now.IsZero() {
		return nil
	}
	return &now
}

// pgAppendBatch is pgAppend for many runs: the INSERT takes only the rows
// whose lease the UPDATE renewed; the result says, per row, whether the
// lease held (leased) and whether the entry was inserted.
const pgAppendBatch = pgClock + `,
v AS (
  SELECT * FROM json_to_recordset(CAST(? AS JSON))
    AS v(run_id TEXT, token TEXT, at TIMESTAMPTZ, seq INT, step_id TEXT, kind TEXT, result TEXT)),
lease AS (
  UPDATE _sky_durable_runs r SET claimed_at = COALESCE(v.at, clock.now), updated_at = COALESCE(v.at, clock.now)
    FROM v, clock
   WHERE r.id = v.run_id AND r.lease_token = v.token AND r.status = 'running'
  RETURNING v.run_id, v.token),
ins AS (
  INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
  SELECT v.run_id, v.seq, v.step_id, v.kind, v.result, COALESCE(v.at, clock.now)
    FROM v JOIN lease ON lease.run_id = v.run_id AND lease.token = v.token, clock
  ON CONFLICT DO NOTHING
  RETURNING run_id, seq)
SELECT v.run_id, v.token, lease.run_id IS NOT NULL, ins.run_id IS NOT NULL
  FROM v
  LEFT JOIN lease ON lease.run_id = v.run_id AND lease.token = v.token
  LEFT JOIN ins ON ins.run_id = v.run_id AND ins.seq = v.seq`

func (s *pgStore) appendBatch(ctx context.Context, batch []appendRequest) []error {
	errs := make([]error, len(batch))
	alone := func(i int) {
		r := batch[i]
		errs[i] = s.appendOne(ctx, s.d, r.f, r.e, r.now)
	}
	if len(batch) == 1 {
		alone(0)
		return errs
	}
	rows := make([]batchRow, len(batch))
	for i, r := range batch {
		rows[i] = batchRow{RunID: r.f.runID, Token: r.f.token, At: rowTime(r.now),
			Seq: r.e.Seq, StepID: r.e.StepID, Kind: string(r.e.Kind), Result: r.e.Result}
	}
	out, err := s.batchOutcomes(ctx, "append", pgAppendBatch, rows)
	for i, r := range batch {
		o, ok := out[r.f]
		switch {
		case err != nil || !ok || (o.leased && !o.written):
			alone(i)
		case !o.leased:
			errs[i] = errLeaseLost
		}
	}
	return errs
}

// pgCompleteBatch is pgCompleteWith for many runs (a row without step_id
// journals nothing); it returns the fences that held. A journal row that
// cannot be inserted fails the whole statement, which then runs alone per
// run.
const pgCompleteBatch = pgClock + `,
v AS (
  SELECT * FROM json_to_recordset(CAST(? AS JSON))
    AS v(run_id TEXT, token TEXT, at TIMESTAMPTZ, output TEXT, seq INT, step_id TEXT, kind TEXT, result TEXT)),
done AS (
  UPDATE _sky_durable_runs r
     SET status = 'done', output = v.output, last_error = '', claimed_at = NULL, lease_token = NULL,
         waiting_signal = NULL, updated_at = COALESCE(v.at, clock.now)
    FROM v, clock
   WHERE r.id = v.run_id AND r.lease_token = v.token AND r.status = 'running'
  RETURNING v.run_id, v.token),
ins AS (
  INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
  SELECT v.run_id, v.seq, v.step_id, v.kind, v.result, COALESCE(v.at, clock.now)
    FROM v JOIN done ON done.run_id = v.run_id AND done.token = v.token, clock
   WHERE v.step_id IS NOT NULL)
SELECT run_id, token, TRUE, TRUE FROM done`

func (s *pgStore) completeBatch(ctx context.Context, batch []completeRequest) []error {
	errs := make([]error, len(batch))
	alone := func(i int) {
		r := batch[i]
		errs[i] = s.completeOne(ctx, r.f, r.last, r.output, r.now)
	}
	if len(batch) == 1 {
		alone(0)
		return errs
	}
	rows := make([]batchRow, len(batch))
	for i, r := range batch {
		rows[i] = batchRow{RunID: r.f.runID, Token: r.f.token, At: rowTime(r.now), Output: &r.output}
		if e := r.last; e != nil {
			rows[i].Seq, rows[i].StepID, rows[i].Kind, rows[i].Result = e.Seq, e.StepID, string(e.Kind), e.Result
		}
	}
	out, err := s.batchOutcomes(ctx, "complete", pgCompleteBatch, rows)
	for i, r := range batch {
		if err != nil {
			alone(i)
		} else if _, ok := out[r.f]; !ok {
			errs[i] = errLeaseLost
		}
	}
	return errs
}

// batchOutcome is what a batched statement reports for one row.
type batchOutcome struct{ leased, written bool }

// batchOutcomes runs a batched statement and reads its (run id, token,
// leased, written) rows.
func (s *pgStore) batchOutcomes(ctx context.Context, op, sql string, rows []batchRow) (map[fence]batchOutcome, error) {
	param, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	s.hook(op, sql)
	out := make(map[fence]batchOutcome, len(rows))
	_, err = queryAll(ctx, s.d, sql, []any{nil, string(param)}, func(scan func(...any) error) (struct{}, error) {
		var f fence
		var o batchOutcome
		err := scan(&f.runID, &f.token, &o.leased, &o.written)
		out[f] = o
		return struct{}{}, err
	})
	return out, err
}

// appendEntry journals e: inside a transaction (q bound to one, or ctx
// carrying one) alone, on the transaction; otherwise through group commit.
func (s *pgStore) appendEntry(ctx context.Context, q *db.DB, f fence, e JournalEntry, now time.Time) error {
	if q != s.d || q.JoinsTransaction(ctx) {
		return s.appendOne(ctx, q, f, e, now)
	}
	return s.appends.do(ctx, appendRequest{f: f, e: e, now: now})
}

// complete marks the run done through group commit (or alone when ctx
// carries a transaction).
func (s *pgStore) complete(ctx context.Context, f fence, last *JournalEntry, output string, now time.Time) error {
	if s.d.JoinsTransaction(ctx) {
		return s.completeOne(ctx, f, last, output, now)
	}
	return s.completes.do(ctx, completeRequest{f: f, last: last, output: output, now: now})
}
