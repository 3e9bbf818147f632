package db

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"skydurable/runtime/task"
)

// Dialect says which SQL engine a *DB talks to.
type Dialect int

// The supported dialects.
const (
	Postgres Dialect = iota
	SQLite
)

// String is the driver name accepted by Open ("postgres" or "sqlite").
func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return "unknown"
}

// executor runs statements on a pool or on one transaction. Errors it returns
// are raw driver errors; DB maps them in one place (errors.go).
type executor interface {
	exec(ctx context.Context, st *statement, args []any) (int64, error)
	query(ctx context.Context, st *statement, args []any) (rawRows, error)
	execRaw(ctx context.Context, sql string) (int64, error)
}

// backend is one open pool of connections of a dialect.
type backend interface {
	executor
	begin(ctx context.Context) (txConn, error)
	// schemaChanged is told that a statement altered or dropped objects,
	// so cached prepared statements may no longer fit.
	schemaChanged()
	close() error
}

// txConn is one open transaction. Its query results are fully buffered.
type txConn interface {
	executor
	commit(ctx context.Context) error
	rollback(ctx context.Context) error
}

// pool is what every *DB opened by one Open call (and every transaction-bound
// *DB derived from it) shares.
type pool struct {
	dialect Dialect
	be      backend
	closed  atomic.Bool
	obs     observer

	mu   sync.Mutex
	open map[*txState]struct{} // transactions not yet ended, rolled back by Close
	// listeners are the Listeners by listening URL (listen.go); life ends
	// at Close, and with it their sessions.
	listeners map[string]*Listener
	life      context.Context
	end       context.CancelFunc
}

// closeTimeout bounds the rollback of transactions still open at Close.
const closeTimeout = 5 * time.Second

// DB is a handle on a database. A DB returned by Open talks to the pool; a DB
// passed to a WithTransaction function (or returned by LazyTx.Tx) is bound to
// that transaction. A DB is safe for concurrent use.
type DB struct {
	p  *pool
	tx *txState
}

// Open connects to a database. driver is "postgres" (dsn is a PostgreSQL URL
// or key=value string; pool size from pool_max_conns, else 10) or "sqlite"
// (dsn is a file path, parent directories are created). Open checks the
// database answers before returning. It is OpenWith with the default
// Options (PoolerAuto).
func Open(ctx context.Context, driver, dsn string) (*DB, error) {
	return OpenWith(ctx, driver, dsn, Options{})
}

// OpenWith is Open with opts: opts.Pooler says whether a transaction pooler
// (PgBouncer) stands between the pool and PostgreSQL.
func OpenWith(ctx context.Context, driver, dsn string, opts Options) (*DB, error) {
	var (
		be  backend
		err error
		d   Dialect
	)
	switch strings.ToLower(strings.TrimSpace(driver)) {
	case "postgres", "postgresql", "pg":
		d = Postgres
		be, err = openPostgres(ctx, dsn, opts)
	case "sqlite", "sqlite3":
		d = SQLite
		be, err = openSQLite(ctx, dsn, opts.ReadOnly)
	default:
		return nil, task.Errorf(task.InvalidInput,
			"db: unknown driver %q; accepted drivers are \"postgres\" and \"sqlite\"", driver)
	}
	if err != nil {
		return nil, err
	}
	life, end := context.WithCancel(context.Background())
	return &DB{p: &pool{dialect: d, be: be, life: life, end: end}}, nil
}

// Dialect reports which SQL engine d talks to.
func (d *DB) Dialect() Dialect { return d.p.dialect }

// InMemory reports whether d is an in-memory SQLite database (":memory:"),
// which lives only as long as this process's one connection to it.
func (d *DB) InMemory() bool {
	b, ok := d.p.be.(*sqliteBackend)
	return ok && b.memory
}

// RefuseInMemory is the error for giving what needs a lasting database (the
// durable engine: its journal must survive the process) an in-memory one,
// or nil when d is not in memory.
func (d *DB) RefuseInMemory(who string) error {
	if !d.InMemory() {
		return nil
	}
	return task.Errorf(task.InvalidInput,
		"%s: the database is SQLite \":memory:\", which the durable engine cannot use (its runs and journal "+
			"must outlive the process); give a file path such as .skydata/app.db, and in tests use "+
			"Std.Durable.Test (DurableTest.run), which gives each test a fresh database file", who)
}

// Close closes the pool (from any DB sharing it), rolling back transactions
// still open. Afterwards every call fails with an Unavailable "database is
// closed" error. Closing twice is a no-op.
func (d *DB) Close() error {
	if d.p.closed.Swap(true) {
		return nil
	}
	d.p.end()
	d.p.mu.Lock()
	open := make([]*txState, 0, len(d.p.open))
	for st := range d.p.open {
		open = append(open, st)
	}
	d.p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	for _, st := range open {
		_ = st.finish(ctx, false)
	}
	if err := d.p.be.close(); err != nil {
		return mapError(d.p.dialect, "", err)
	}
	return nil
}

// InTransaction reports whether d is bound to a transaction.
func (d *DB) InTransaction() bool { return d.tx != nil }

// JoinsTransaction reports whether a statement on d with ctx would run
// inside a transaction: d is bound to one, or ctx carries one (open or lazy,
// begun or not) for d's pool.
func (d *DB) JoinsTransaction(ctx context.Context) bool {
	return d.tx != nil || ambientFor(ctx, d.p) != nil
}

// Exec runs a statement and reports the number of rows it affected.
func (d *DB) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	st, conv, err := d.prepare(sql, args)
	if err != nil {
		return 0, err
	}
	var n int64
	err = d.run(ctx, Event{SQL: sql, Args: args, Writes: true}, func(ex executor) error {
		var e error
		n, e = ex.exec(ctx, st, conv)
		return e
	})
	if err == nil && st.reshape {
		d.p.be.schemaChanged()
	}
	return n, d.wrap(sql, err)
}

// Query runs a statement that returns rows. Outside a transaction the rows
// stream and the caller must Close them; inside one they are already read.
func (d *DB) Query(ctx context.Context, sql string, args ...any) (Rows, error) {
	st, conv, err := d.prepare(sql, args)
	if err != nil {
		return nil, err
	}
	var raw rawRows
	err = d.run(ctx, Event{SQL: sql, Args: args, Writes: st.writes}, func(ex executor) error {
		var e error
		raw, e = ex.query(ctx, st, conv)
		return e
	})
	if err != nil {
		return nil, d.wrap(sql, err)
	}
	return &rows{raw: raw, dialect: d.p.dialect, sql: sql}, nil
}

// QueryRow runs a statement and keeps its first row. Scan on the result fails
// with a NotFound error wrapping ErrNoRows when there was no row.
func (d *DB) QueryRow(ctx context.Context, sql string, args ...any) Row {
	rs, err := d.Query(ctx, sql, args...)
	if err != nil {
		return &row{err: err}
	}
	defer rs.Close()
	r := rs.(*rows)
	if !r.Next() {
		if err := r.Err(); err != nil {
			return &row{err: err}
		}
		return &row{err: noRows(d.p.dialect, sql)}
	}
	vals, err := r.raw.Values()
	if err != nil {
		return &row{err: d.wrap(sql, err)}
	}
	return &row{vals: vals, cols: r.Columns(), sql: sql}
}

// QueryMaps runs a query and returns every row as a map from column name to
// the value's text (Sky's Db.query). NULL reads as "". Integers are decimal,
// floats their shortest form, booleans "1"/"0" on both drivers (as SQLite
// stores them), times TimeLayout, PostgreSQL dates YYYY-MM-DD and json/jsonb
// their text.
func (d *DB) QueryMaps(ctx context.Context, sql string, args ...any) ([]map[string]string, error) {
	rs, err := d.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	r := rs.(*rows)
	cols := r.Columns()
	out := []map[string]string{}
	for r.Next() {
		vals, err := r.raw.Values()
		if err != nil {
			return nil, d.wrap(sql, err)
		}
		m := make(map[string]string, len(cols))
		for i, c := range cols {
			m[c] = textOf(normalize(vals[i]))
		}
		out = append(out, m)
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ExecRaw runs a script of one or more statements without arguments (schema
// set-up, migrations) and reports the total rows affected.
func (d *DB) ExecRaw(ctx context.Context, sql string) (int64, error) {
	var n int64
	err := d.run(ctx, Event{SQL: sql, Writes: true}, func(ex executor) error {
		var e error
		n, e = ex.execRaw(ctx, sql)
		return e
	})
	if err == nil && parseStatement(d.p.dialect, sql).reshape {
		d.p.be.schemaChanged()
	}
	return n, d.wrap(sql, err)
}

// prepare parses sql (cached), checks the argument count and converts the
// arguments for the driver.
func (d *DB) prepare(sql string, args []any) (*statement, []any, error) {
	if d.p.closed.Load() {
		return nil, nil, errClosed(d.p.dialect)
	}
	st := parseStatement(d.p.dialect, sql)
	if st.params != len(args) {
		return nil, nil, task.Errorf(task.InvalidInput,
			"%s: the SQL has %d placeholder(s) but %d argument(s) were given in %s; hint: write one `?` per argument",
			d.p.dialect, st.params, len(args), quoteSQL(sql))
	}
	conv, err := convertArgs(d.p.dialect, args)
	if err != nil {
		return nil, nil, err
	}
	return st, conv, nil
}

// run picks where a statement goes: the transaction d is bound to, the
// ambient transaction of ctx for this pool, or the pool itself. On SQLite a
// lazy transaction not yet begun is begun by the first write only: a read
// before it goes to a reader connection, so a step that reads and then waits
// on something slow does not hold SQLite's single write lock meanwhile. ev
// describes the statement to the pool's observer.
func (d *DB) run(ctx context.Context, ev Event, fn func(executor) error) error {
	writes := ev.Writes
	if d.p.closed.Load() {
		return errClosed(d.p.dialect)
	}
	st := d.tx
	if st == nil {
		if amb := ambientFor(ctx, d.p); amb != nil && (writes || d.p.dialect != SQLite || amb.open != nil || amb.lazy.Started()) {
			var err error
			if st, err = amb.state(ctx); err != nil {
				return err
			}
		}
	}
	ev.InTx = st != nil
	d.p.obs.emit(ev)
	if st == nil {
		return fn(d.p.be)
	}
	return st.do(fn)
}

func (d *DB) wrap(sql string, err error) error {
	if err == nil {
		return nil
	}
	return mapError(d.p.dialect, sql, err)
}
