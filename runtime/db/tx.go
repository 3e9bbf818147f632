package db

import (
	"context"
	"sync"

	"skydurable/runtime/task"
)

// txState is one open transaction shared by the *DB values bound to it.
// Statements on it are serialised by mu (a driver transaction is one
// connection and cannot run two statements at once).
type txState struct {
	dialect Dialect
	pool    *pool
	mu      sync.Mutex
	conn    txConn
	done    bool
	commit  bool // how it ended, once done
}

func (s *txState) do(fn func(executor) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return task.Errorf(task.InvalidInput,
			"%s: the transaction has already ended; hint: use a transaction's *DB only inside its function", s.dialect)
	}
	return fn(s.conn)
}

// finish commits or rolls back once; later calls are no-ops, except that
// committing a transaction that was rolled back (by Close, say) fails.
func (s *txState) finish(ctx context.Context, commit bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		if commit && !s.commit {
			if s.pool.closed.Load() {
				return errClosed(s.dialect)
			}
			return task.Errorf(task.InvalidInput, "%s: cannot commit: the transaction was already rolled back", s.dialect)
		}
		return nil
	}
	s.done, s.commit = true, commit
	s.pool.mu.Lock()
	delete(s.pool.open, s)
	s.pool.mu.Unlock()
	if commit {
		s.pool.obs.emit(Event{Kind: Commit})
		return s.conn.commit(ctx)
	}
	s.pool.obs.emit(Event{Kind: Rollback})
	return s.conn.rollback(ctx)
}

// ambient is a transaction carried by a context for one pool: either an
// already open one (WithTransaction) or a lazy one (WithLazyTx).
type ambient struct {
	pool   *pool
	open   *txState
	lazy   *LazyTx
	parent *ambient
}

type ambientKey struct{}

func ambientFor(ctx context.Context, p *pool) *ambient {
	a, _ := ctx.Value(ambientKey{}).(*ambient)
	for ; a != nil; a = a.parent {
		if a.pool == p {
			return a
		}
	}
	return nil
}

func (a *ambient) state(ctx context.Context) (*txState, error) {
	if a.open != nil {
		return a.open, nil
	}
	return a.lazy.begin(ctx)
}

func withAmbient(ctx context.Context, a *ambient) context.Context {
	a.parent, _ = ctx.Value(ambientKey{}).(*ambient)
	return context.WithValue(ctx, ambientKey{}, a)
}

// WithTransaction runs fn inside a transaction: it commits when fn returns
// nil and rolls back when fn fails or panics. fn receives a *DB bound to the
// transaction and a context that carries it, so calls on the same pool with
// that context also join it. On a *DB already bound to a transaction (or
// under a context carrying one for this pool) fn joins that transaction
// instead, and the outer owner decides commit or rollback.
func (d *DB) WithTransaction(ctx context.Context, fn func(ctx context.Context, tx *DB) error) (err error) {
	if d.p.closed.Load() {
		return errClosed(d.p.dialect)
	}
	if d.tx != nil {
		return fn(ctx, d)
	}
	if amb := ambientFor(ctx, d.p); amb != nil {
		st, err := amb.state(ctx)
		if err != nil {
			return err
		}
		return fn(ctx, &DB{p: d.p, tx: st})
	}
	st, err := d.begin(ctx)
	if err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			// Roll back with a context that outlives a cancelled caller.
			_ = st.finish(context.WithoutCancel(ctx), false)
		}
	}()
	txCtx := withAmbient(ctx, &ambient{pool: d.p, open: st})
	if err := fn(txCtx, &DB{p: d.p, tx: st}); err != nil {
		return err
	}
	committed = true
	if err := st.finish(ctx, true); err != nil {
		return mapError(d.p.dialect, "COMMIT", err)
	}
	return nil
}

func (d *DB) begin(ctx context.Context) (*txState, error) {
	if d.p.closed.Load() {
		return nil, errClosed(d.p.dialect)
	}
	conn, err := d.p.be.begin(ctx)
	if err != nil {
		return nil, mapError(d.p.dialect, "BEGIN", err)
	}
	d.p.obs.emit(Event{Kind: Begin})
	st := &txState{dialect: d.p.dialect, pool: d.p, conn: conn}
	d.p.mu.Lock()
	if d.p.open == nil {
		d.p.open = map[*txState]struct{}{}
	}
	d.p.open[st] = struct{}{}
	d.p.mu.Unlock()
	if d.p.closed.Load() { // Close ran while we were beginning
		_ = st.finish(context.WithoutCancel(ctx), false)
		return nil, errClosed(d.p.dialect)
	}
	return st, nil
}

// LazyTx is an ambient transaction begun by the first statement that runs
// under its context. See WithLazyTx.
type LazyTx struct {
	db       *DB
	mu       sync.Mutex
	st       *txState
	finished bool
}

// WithLazyTx returns a context carrying a lazy transaction on d's pool. Any
// Exec, Query, QueryRow, QueryMaps, ExecRaw or WithTransaction on a *DB of
// that pool, called with the returned context (or one derived from it), runs
// inside ONE transaction, begun by the first such call; calls from parallel
// goroutines are serialised. The caller ends it with Commit or Rollback.
func WithLazyTx(ctx context.Context, d *DB) (context.Context, *LazyTx) {
	l := &LazyTx{db: d}
	if d.tx != nil {
		// Already inside a transaction: the lazy one is that one.
		l.st = d.tx
	}
	return withAmbient(ctx, &ambient{pool: d.p, lazy: l}), l
}

func (l *LazyTx) begin(ctx context.Context) (*txState, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.finished {
		return nil, task.Errorf(task.InvalidInput,
			"%s: the lazy transaction has already been committed or rolled back; hint: start a new one with WithLazyTx", l.db.p.dialect)
	}
	if l.st == nil {
		st, err := l.db.begin(ctx)
		if err != nil {
			return nil, err
		}
		l.st = st
	}
	return l.st, nil
}

// Started reports whether a statement has begun the transaction.
func (l *LazyTx) Started() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.st != nil
}

// Tx returns the *DB bound to the transaction, beginning it now if needed.
func (l *LazyTx) Tx(ctx context.Context) (*DB, error) {
	st, err := l.begin(ctx)
	if err != nil {
		return nil, err
	}
	return &DB{p: l.db.p, tx: st}, nil
}

// Commit commits the transaction if it was begun; it is a no-op otherwise.
// Afterwards statements under the lazy context fail.
func (l *LazyTx) Commit(ctx context.Context) error { return l.end(ctx, true) }

// Rollback rolls the transaction back if it was begun; it is a no-op
// otherwise (and after Commit). Afterwards statements under the lazy context fail.
func (l *LazyTx) Rollback(ctx context.Context) error { return l.end(ctx, false) }

func (l *LazyTx) end(ctx context.Context, commit bool) error {
	l.mu.Lock()
	st := l.st
	l.finished = true
	l.mu.Unlock()
	if st == nil || st == l.db.tx {
		return nil
	}
	if err := st.finish(ctx, commit); err != nil {
		verb := "ROLLBACK"
		if commit {
			verb = "COMMIT"
		}
		return mapError(l.db.p.dialect, verb, err)
	}
	return nil
}
