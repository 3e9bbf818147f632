package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/task"
)

// Group commit on PostgreSQL (store.GroupCommit): claims, journal appends and
// run completions that the pollers of one Engine make at the same time share
// a statement and a commit. A batch of one uses the single-run statement
// (pgClaim, pgAppend, pgComplete), so a lone run costs what it did
// unbatched; a batch of n writes its rows as a VALUES list of batchSize(n)
// rows (so the planner knows the row count and looks each run up by its
// primary key; a JSON parameter would be planned as 100 rows, and the
// generic plan would hash-join them with every live run) and learns which
// rows' leases held; a batched claim has a literal LIMIT for the same
// reason. A row the database refuses (a journal position or step already
// taken) fails the whole batch, and then every row of a batch the database
// rejected as a whole (so nothing of it committed) is written again alone,
// so it gets exactly the error (or success) it would have had unbatched and
// no request fails for another's fault. (An INSERT ... ON CONFLICT DO
// NOTHING that let the other rows through cost every journal row a
// speculative insertion: a probe of both unique indexes first and a WAL
// record more, for a refusal that is a bug or a step id used twice.) A batch that
// failed otherwise (a lost connection: it may have committed) reports that
// error to every request in it, as an unbatched write would.

// maxBatch bounds the rows of one batched statement; maxFlights bounds the
// batches of one kind in flight at once (a write that finds fewer waits for
// none). One: a write that finds a batch of its kind in flight waits for it
// and goes in the next, so the next batch holds every poller that came in
// the meantime. With PollWith's completions and claims batched too, that
// cut the server's CPU per workflow by about a third against two flights
// (docs/benchmarks.md, "One flight"); a lone poller still writes at once.
const (
	maxBatch   = 64
	maxFlights = 1
)

// appendRequest is one journal append waiting for its batch.
type appendRequest struct {
	f   store.Fence
	e   store.JournalEntry
	now time.Time
}

// completeRequest is one run completion waiting for its batch, with the
// body's last step when it is still to be journalled.
type completeRequest struct {
	f      store.Fence
	last   *store.JournalEntry
	output string
	now    time.Time
}

// batchSQL builds, once per kind and row count, a batched statement: v is a
// VALUES list of n rows of the given typed columns.
var batchSQL sync.Map // batchKey -> string

type batchKey struct {
	kind string
	n    int
}

// valuesCTE is "v AS (SELECT * FROM (VALUES (...), ...) AS v(cols))" for n
// rows of columns (name and SQL type, in pairs).
func valuesCTE(n int, columns ...string) string {
	var row, names []string
	for i := 0; i < len(columns); i += 2 {
		names = append(names, columns[i])
		row = append(row, "CAST(? AS "+columns[i+1]+")")
	}
	rows := make([]string, n)
	for i := range rows {
		rows[i] = "(" + strings.Join(row, ", ") + ")"
	}
	return "v AS (SELECT * FROM (VALUES " + strings.Join(rows, ", ") + ") AS v(" + strings.Join(names, ", ") + "))"
}

// batchSize is the row count of the statement that carries n rows: the
// next power of two, so each kind has 6 statements (2 to 64 rows), each
// prepared and planned once per connection, not 63. The rows beyond n are
// NULL and match no run.
func batchSize(n int) int {
	size := 2
	for size < n {
		size *= 2
	}
	return size
}

// padded appends the NULL rows of width columns that fill args (one
// leading clock argument, then n rows) to batchSize(n) rows.
func padded(args []any, n, width int) []any {
	return append(args, make([]any, (batchSize(n)-n)*width)...)
}

func batchStatement(kind string, n int, build func(n int) string) string {
	k := batchKey{kind, n}
	if sql, ok := batchSQL.Load(k); ok {
		return sql.(string)
	}
	sql, _ := batchSQL.LoadOrStore(k, build(n))
	return sql.(string)
}

// timeArg is a row's time: the injected clock's, or NULL for the
// database's.
func timeArg(now time.Time) any {
	if now.IsZero() {
		return nil
	}
	return now
}

// pgAppendBatch is pgAppend for n runs (a HOT update of claimed_at too):
// the INSERT takes only the rows whose lease the UPDATE renewed; the result
// names the runs whose lease held (the INSERT, which nothing reads, runs
// all the same: a data-modifying CTE always does).
//
// Like the single-run statements they fence by id and lease token alone
// (see pgAppend): with status = 'running' tested too, the planner read the
// whole due index (every waiting run) and hash-joined it when few runs were
// running (TestFencedWritesUseTheKey).
func pgAppendBatch(n int) string {
	return pgClock + `,
` + valuesCTE(n, "run_id", "TEXT", "token", "TEXT", "at", "TIMESTAMPTZ", "seq", "INT", "step_id", "TEXT", "kind", "TEXT", "result", "TEXT") + `,
lease AS (
  UPDATE _sky_durable_runs r SET claimed_at = COALESCE(v.at, clock.now)
    FROM v, clock
   WHERE r.id = v.run_id AND r.lease_token = v.token
     AND (r.deadline_at IS NULL OR r.deadline_at > COALESCE(v.at, clock.now))
  RETURNING v.run_id, v.token),
ins AS (
  INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
  SELECT v.run_id, v.seq, v.step_id, v.kind, v.result, COALESCE(v.at, clock.now)
    FROM v JOIN lease ON lease.run_id = v.run_id AND lease.token = v.token, clock)
SELECT run_id, token FROM lease`
}

func (s *Store) appendBatch(ctx context.Context, batch []appendRequest) []error {
	return writeBatch(ctx, s, "append", pgAppendBatch, 7, batch,
		func(r appendRequest) store.Fence { return r.f },
		func(r appendRequest) []any {
			return []any{r.f.RunID, r.f.Token, timeArg(r.now), r.e.Seq, r.e.StepID, string(r.e.Kind), r.e.Result}
		},
		func(r appendRequest) error { return s.appendOne(ctx, s.d, r.f, r.e, r.now) })
}

// writeBatch writes a batch of journal appends or completions: one request
// alone with its single-run statement; several as one statement of kind
// (built by build for a row count, width arguments per request), whose
// outcome settles each request: written, lease lost, or written again alone
// (the database rejected the whole batch).
func writeBatch[R any](ctx context.Context, s *Store, kind string, build func(n int) string, width int, batch []R,
	fenceOf func(R) store.Fence, row func(R) []any, alone func(R) error) []error {
	errs := make([]error, len(batch))
	if len(batch) == 1 {
		errs[0] = alone(batch[0])
		return errs
	}
	args := []any{nil}
	for _, r := range batch {
		args = append(args, row(r)...)
	}
	args = padded(args, len(batch), width)
	held, err := s.heldFences(ctx, kind, batchStatement(kind, batchSize(len(batch)), build), args)
	for i, r := range batch {
		switch {
		case err != nil && !db.Rejected(err):
			errs[i] = err // it may have committed: writing it alone could duplicate it
		case err != nil:
			errs[i] = alone(r)
		case !held[fenceOf(r)]:
			errs[i] = store.ErrLeaseLost
		}
	}
	return errs
}

// pgCompleteBatch is pgCompleteWith for n runs (a row without step_id
// journals nothing); it returns the fences that held. A journal row that
// cannot be inserted fails the whole statement, which then runs alone per
// run.
func pgCompleteBatch(n int) string {
	return pgClock + `,
` + pgDoneBatch(n) + `
SELECT run_id, token FROM done`
}

// pgDoneBatch are the CTEs, after the clock, that complete the n runs of
// v under their fences (done: the fences that held, with the run's
// history), record the completions and journal the last steps;
// completeRow gives a request's row of v.
func pgDoneBatch(n int) string {
	return valuesCTE(n, "run_id", "TEXT", "token", "TEXT", "at", "TIMESTAMPTZ", "output", "TEXT", "seq", "INT", "step_id", "TEXT", "kind", "TEXT", "result", "TEXT") + `,
done AS (
  UPDATE _sky_durable_runs r
     SET status = ` + store.SQLDone + `, output = v.output, last_error = '', claimed_at = NULL, lease_token = NULL,
         waiting_signal = NULL, updated_at = COALESCE(v.at, clock.now), history_count = r.history_count + ` + pgDoneCount + `
    FROM v, clock
   WHERE r.id = v.run_id AND r.lease_token = v.token
     AND (r.deadline_at IS NULL OR r.deadline_at > COALESCE(v.at, clock.now))
  RETURNING v.run_id, v.token, r.id, r.history_count, r.claimed_by, r.attempts, COALESCE(v.at, clock.now) AS at),
done_history AS (
  ` + pgRecord(`done s WHERE s.history_count > 0`, `s.at`, store.SQLDone, `s.claimed_by`, `s.attempts`, `''`, `''`) + `),
` + pgTrim("done_trim", "done") + `,
ins AS (
  INSERT INTO _sky_durable_journal (run_id, seq, step_id, kind, result, created_at)
  SELECT v.run_id, v.seq, v.step_id, v.kind, v.result, COALESCE(v.at, clock.now)
    FROM v JOIN done ON done.run_id = v.run_id AND done.token = v.token, clock
   WHERE v.step_id IS NOT NULL)`
}

// completeWidth is the number of columns of a row of pgDoneBatch's v.
const completeWidth = 8

// completeRow is a completion's row of pgDoneBatch's v.
func completeRow(f store.Fence, last *store.JournalEntry, output string, now time.Time) []any {
	if last != nil {
		return []any{f.RunID, f.Token, timeArg(now), output, last.Seq, last.StepID, string(last.Kind), last.Result}
	}
	return []any{f.RunID, f.Token, timeArg(now), output, nil, nil, nil, nil}
}

func (s *Store) completeBatch(ctx context.Context, batch []completeRequest) []error {
	return writeBatch(ctx, s, "complete", pgCompleteBatch, completeWidth, batch,
		func(r completeRequest) store.Fence { return r.f },
		func(r completeRequest) []any { return completeRow(r.f, r.last, r.output, r.now) },
		func(r completeRequest) error { return s.completeOne(ctx, r.f, r.last, r.output, r.now) })
}

// heldFences runs a batched write and reads its rows: the (run id, token)
// fences that held, whose rows it wrote.
func (s *Store) heldFences(ctx context.Context, op, sql string, args []any) (map[store.Fence]bool, error) {
	s.hook(op, sql)
	held := map[store.Fence]bool{}
	_, err := store.QueryAll(ctx, s.d, sql, args, func(scan func(...any) error) (struct{}, error) {
		var f store.Fence
		err := scan(&f.RunID, &f.Token)
		held[f] = true
		return struct{}{}, err
	})
	return held, err
}

// AppendEntry journals e: inside a transaction (q bound to one, or ctx
// carrying one) alone, on the transaction; otherwise through group commit.
func (s *Store) AppendEntry(ctx context.Context, q *db.DB, f store.Fence, e store.JournalEntry, now time.Time) error {
	if q != s.d || q.JoinsTransaction(ctx) {
		return s.appendOne(ctx, q, f, e, now)
	}
	return s.appends.Do(ctx, appendRequest{f: f, e: e, now: now})
}

// Complete marks the run done through group commit (or alone when ctx
// carries a transaction).
func (s *Store) Complete(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time) error {
	if s.d.JoinsTransaction(ctx) {
		return s.completeOne(ctx, f, last, output, now)
	}
	return s.completes.Do(ctx, completeRequest{f: f, last: last, output: output, now: now})
}

// claimRequest is one poller's claim waiting for its batch: the single-run
// and the batched statement, their pick parameter, and the lease to take.
type claimRequest struct {
	// single is the statement of a lone claim; pinned picks the batched
	// statement by (workflow, version) instead of by workflow name.
	single        string
	pinned        bool
	pick          string
	now           time.Time
	lease         time.Duration
	token, worker string
	// out receives the claimed run, if any; done is the poller's
	// ctx.Done(): a poller gone by the time its batch is written claims
	// nothing.
	out  *claimOutcome
	done <-chan struct{}
}

type claimOutcome struct {
	c  store.Claimed
	ok bool
}

// claim leases a due run through group commit: the claims of concurrent
// pollers share one statement, which claims up to one run per poller (each
// with its own token); a poller left without a run finds none due, as it
// would have alone.
func (s *Store) claim(ctx context.Context, r claimRequest) (store.Claimed, bool, error) {
	if s.d.JoinsTransaction(ctx) {
		return s.claimOne(ctx, r)
	}
	if err := ctx.Err(); err != nil {
		return store.Claimed{}, false, task.As(err)
	}
	r.out, r.done = &claimOutcome{}, ctx.Done()
	err := s.claims.Do(ctx, r)
	return r.out.c, r.out.ok, err
}

// claimKind is what the claims of one batched statement share: how they
// pick runs (by name, or pinned to versions, and the pick's JSON), the
// lease and the worker.
type claimKind struct {
	pinned       bool
	pick, worker string
	lease        time.Duration
}

// writeByClaimKind writes a batch of claims grouped by their claimKind
// (kindOf; false leaves a request out), the kinds in the order of their
// first request: a kind of one request with alone, others with many (one
// statement). When the database rejected that statement (nothing of it
// committed) each of its requests is written again alone; another failure
// (it may have committed) is each request's error.
func writeByClaimKind[R any](batch []R, errs []error, kindOf func(i int, r R) (claimKind, bool), alone func(i int), many func(k claimKind, idx []int) error) {
	groups := map[claimKind][]int{}
	var order []claimKind
	for i, r := range batch {
		k, ok := kindOf(i, r)
		if !ok {
			continue
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	for _, k := range order {
		idx := groups[k]
		if len(idx) == 1 {
			alone(idx[0])
			continue
		}
		if err := many(k, idx); err != nil {
			for _, i := range idx {
				if db.Rejected(err) {
					alone(i)
				} else {
					errs[i] = err
				}
			}
		}
	}
}

// claimBatch runs the claims of a batch, one statement per kind of claim
// (its statement, pick, lease and worker); a statement that fails is run
// again alone per claim.
func (s *Store) claimBatch(ctx context.Context, batch []claimRequest) []error {
	errs := make([]error, len(batch))
	kindOf := func(i int, r claimRequest) (claimKind, bool) {
		if store.Stopped(r.done) {
			errs[i] = store.ErrClaimCancelled
			return claimKind{}, false
		}
		return claimKind{r.pinned, r.pick, r.worker, r.lease}, true
	}
	alone := func(i int) {
		r := batch[i]
		r.out.c, r.out.ok, errs[i] = s.claimOne(ctx, r)
	}
	writeByClaimKind(batch, errs, kindOf, alone, func(k claimKind, idx []int) error {
		first := batch[idx[0]]
		tokens := make([]string, len(idx))
		for j, i := range idx {
			tokens[j] = batch[i].token
		}
		// LIMIT batchSize may pick (and briefly lock) more runs than
		// there are tokens; only as many as there are tokens are claimed.
		size := batchSize(len(idx))
		sql := batchStatement("claim", size, func(n int) string { return pgClaimWhere(pgPickByName, n) })
		if k.pinned {
			sql = batchStatement("claim pinned", size, func(n int) string { return pgClaimWhere(pgPickByVersion, n) })
		}
		runs, err := s.claimRows(ctx, sql, clockArg(first.now), k.lease.Milliseconds(), s.floors.param(first.now), k.pick, jsonText(tokens), k.worker)
		if err != nil {
			return err // when it may have committed, the runs it leased stay so until their lease expires
		}
		byToken := make(map[string]store.Claimed, len(runs))
		for _, run := range runs {
			byToken[run.token] = run.c
		}
		for _, i := range idx {
			r := batch[i]
			r.out.c, r.out.ok = byToken[r.token]
		}
		return nil
	})
	return errs
}

// completeClaimRequest is one CompleteAndClaim waiting for its batch: the
// completion, the claim to make after it, and where its outcome goes.
type completeClaimRequest struct {
	f      store.Fence
	last   *store.JournalEntry
	output string
	now    time.Time
	next   store.NextClaim
	// out receives the claimed run, if any, and the completion's outcome;
	// done is the poller's ctx.Done(): a poller gone by the time its batch
	// is written has its run completed but claims none.
	out  *completeClaimOutcome
	done <-chan struct{}
}

type completeClaimOutcome struct {
	c    store.Claimed
	ok   bool
	done error
}

// pgCompleteClaimBatch is pgCompleteClaim for n pollers: it completes the
// runs of v (pgDoneBatch) and claims up to n others, one per token of the
// JSON array, in one statement and one synchronous commit. A row of part
// 2 names each completion whose fence held.
func pgCompleteClaimBatch(pick string, n int) string {
	extra := `
UNION ALL
SELECT 2, d.run_id, d.token, '', 0, '', 0, '', clock.now, FALSE, 0, '', '', '', clock.now, '' FROM done d, clock`
	return pgClaimStatement(pgClock+`,
`+pgDoneBatch(n), `
     AND r.id NOT IN (SELECT v.run_id FROM v WHERE v.run_id IS NOT NULL)`, extra, pick, n)
}

// CompleteAndClaim completes f's run and claims the next due one through
// group commit (alone when ctx carries a transaction): the completions and
// claims of concurrent pollers share one statement (pgCompleteClaimBatch).
func (s *Store) CompleteAndClaim(ctx context.Context, f store.Fence, last *store.JournalEntry, output string, now time.Time, next store.NextClaim) (store.Claimed, bool, error, error) {
	if s.d.JoinsTransaction(ctx) {
		return s.completeClaimOne(ctx, f, last, output, now, next)
	}
	r := completeClaimRequest{f: f, last: last, output: output, now: now, next: next, out: &completeClaimOutcome{}, done: ctx.Done()}
	err := s.completeClaims.Do(ctx, r)
	return r.out.c, r.out.ok, r.out.done, err
}

// completeClaimBatch writes a batch of CompleteAndClaim requests, one
// statement per kind of claim (its pick, lease and worker); a kind with one
// request, or a statement the database rejected as a whole (so nothing of
// it committed), is written alone per request.
func (s *Store) completeClaimBatch(ctx context.Context, batch []completeClaimRequest) []error {
	errs := make([]error, len(batch))
	alone := func(i int) {
		r := batch[i]
		if store.Stopped(r.done) {
			// Its poller stopped while it waited: complete its run, claim
			// nothing for it (see claimBatch).
			err := s.completeOne(ctx, r.f, r.last, r.output, r.now)
			if errors.Is(err, store.ErrLeaseLost) {
				r.out.done, err = err, nil
			}
			errs[i] = err
			return
		}
		r.out.c, r.out.ok, r.out.done, errs[i] = s.completeClaimOne(ctx, r.f, r.last, r.output, r.now, r.next)
	}
	kindOf := func(_ int, r completeClaimRequest) (claimKind, bool) {
		k := claimKind{pinned: r.next.Pinned, worker: r.next.Worker, lease: r.next.Lease}
		if k.pinned {
			k.pick = jsonText(r.next.Keys)
		} else {
			k.pick = jsonText(r.next.Names)
		}
		return k, true
	}
	writeByClaimKind(batch, errs, kindOf, alone, func(k claimKind, idx []int) error {
		first := batch[idx[0]]
		args := []any{clockArg(first.now)}
		tokens := []string{}
		for _, i := range idx {
			r := batch[i]
			args = append(args, completeRow(r.f, r.last, r.output, r.now)...)
			if !store.Stopped(r.done) {
				tokens = append(tokens, r.next.Token)
			}
		}
		args = padded(args, len(idx), completeWidth)
		args = append(args, k.lease.Milliseconds(), s.floors.param(first.now), k.pick, jsonText(tokens), k.worker)
		size := batchSize(len(idx))
		sql := batchStatement("complete+claim", size, func(n int) string { return pgCompleteClaimBatch(pgPickByName, n) })
		if k.pinned {
			sql = batchStatement("complete+claim pinned", size, func(n int) string { return pgCompleteClaimBatch(pgPickByVersion, n) })
		}
		runs, notes, err := s.claimRowsOp(ctx, s.d, "complete+claim", sql, args...)
		if err != nil {
			return err
		}
		completed := make(map[store.Fence]bool, len(notes))
		for _, n := range notes {
			completed[n.f] = true
		}
		byToken := make(map[string]store.Claimed, len(runs))
		for _, run := range runs {
			byToken[run.token] = run.c
		}
		for _, i := range idx {
			r := batch[i]
			if !completed[r.f] {
				r.out.done = store.ErrLeaseLost
			}
			if !store.Stopped(r.done) {
				r.out.c, r.out.ok = byToken[r.next.Token]
			}
		}
		return nil
	})
	return errs
}
