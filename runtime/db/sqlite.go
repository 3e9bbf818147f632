package db

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"skydurable/runtime/task"
)

// SQLite connection settings. The busy timeout only matters for readers
// meeting a checkpoint and for other processes writing the same file; writers
// of this process queue on the single writer connection.
const (
	sqliteBusyTimeoutMS = 10000
	sqliteReaders       = 4
)

// sqliteBackend sends every write and every transaction to one writer
// connection (transactions BEGIN IMMEDIATE) and plain reads to a pool of
// query-only connections, so writers never race each other for the lock.
type sqliteBackend struct {
	path    string
	writer  *sql.DB
	readers *sql.DB
	// memory: ":memory:", one connection that reads and writes (a second
	// connection would open a second, empty database).
	memory bool
}

// openSQLiteMemory opens ":memory:": a private database that lives while
// its one connection does, which the pool keeps open until Close. The
// durable engine refuses such a database (RefuseInMemory).
func openSQLiteMemory(ctx context.Context) (backend, error) {
	d, err := sql.Open("sqlite", ":memory:?_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		return nil, task.Errorf(task.Io, "sqlite: cannot open :memory:: %w", err)
	}
	d.SetMaxOpenConns(1)
	d.SetMaxIdleConns(1)
	d.SetConnMaxLifetime(0)
	d.SetConnMaxIdleTime(0)
	if err := d.PingContext(ctx); err != nil {
		d.Close()
		return nil, mapError(SQLite, "", err)
	}
	return &sqliteBackend{path: ":memory:", writer: d, readers: d, memory: true}, nil
}

func openSQLite(ctx context.Context, dsn string, readOnly bool) (backend, error) {
	path := strings.TrimPrefix(strings.TrimSpace(dsn), "file:")
	if path == ":memory:" {
		return openSQLiteMemory(ctx)
	}
	if strings.HasPrefix(path, ":memory:") || strings.Contains(path, "mode=memory") {
		return nil, task.Errorf(task.InvalidInput,
			"sqlite: %q is an in-memory database with URI parameters, which are not supported; give "+
				"\":memory:\" (one private database, gone when it is closed) or a file path such as .skydata/app.db", dsn)
	}
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, task.Errorf(task.InvalidInput,
			"sqlite: %q is not a usable database file path; give a plain file path such as .skydata/app.db "+
				"(URI parameters are not supported)", dsn)
	}
	if readOnly {
		// The file must exist: mode=ro never creates it.
		if _, err := os.Stat(path); err != nil {
			return nil, task.Errorf(task.NotFound, "sqlite: cannot open %q read-only: %w", path, err)
		}
	} else if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, task.Errorf(task.Io, "sqlite: cannot create the directory of %q: %w", path, err)
		}
	}
	base := path + "?" + url.Values{
		"_pragma": {"busy_timeout(" + strconv.Itoa(sqliteBusyTimeoutMS) + ")", "foreign_keys(1)", "synchronous(NORMAL)"},
	}.Encode()
	writerParams := "&_pragma=journal_mode(WAL)&_txlock=immediate"
	if readOnly {
		// A URI filename: SQLite reads mode=ro from it.
		base = "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&" + strings.TrimPrefix(base[len(path):], "?")
		writerParams = ""
	}
	writer, err := sql.Open("sqlite", base+writerParams)
	if err != nil {
		return nil, task.Errorf(task.Io, "sqlite: cannot open %q: %w", path, err)
	}
	writer.SetMaxOpenConns(1)
	writer.SetMaxIdleConns(1)
	writer.SetConnMaxLifetime(0)
	writer.SetConnMaxIdleTime(0)
	if err := writer.PingContext(ctx); err != nil {
		writer.Close()
		return nil, mapError(SQLite, "", err)
	}
	readers, err := sql.Open("sqlite", base+"&_pragma=query_only(1)")
	if err != nil {
		writer.Close()
		return nil, task.Errorf(task.Io, "sqlite: cannot open %q: %w", path, err)
	}
	readers.SetMaxOpenConns(sqliteReaders)
	readers.SetMaxIdleConns(sqliteReaders)
	readers.SetConnMaxIdleTime(0)
	return &sqliteBackend{path: path, writer: writer, readers: readers}, nil
}

func (b *sqliteBackend) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	res, err := b.writer.ExecContext(ctx, st.text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (b *sqliteBackend) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	pool := b.readers
	if st.writes {
		pool = b.writer
	}
	rs, err := pool.QueryContext(ctx, st.text, args...)
	if err != nil {
		return nil, err
	}
	return newSQLRows(rs)
}

func (b *sqliteBackend) execRaw(ctx context.Context, script string) (int64, error) {
	conn, err := b.writer.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	return execScript(ctx, conn, script)
}

func (b *sqliteBackend) begin(ctx context.Context) (txConn, error) {
	conn, err := b.writer.Conn(ctx)
	if err != nil {
		return nil, err
	}
	// The transaction outlives the context of the call that began it (a lazy
	// transaction is begun by its first statement), so it must not be rolled
	// back when that context ends.
	tx, err := conn.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &sqliteTx{conn: conn, tx: tx}, nil
}

// schemaChanged is a no-op: SQLite re-prepares statements itself.
func (b *sqliteBackend) schemaChanged() {}

func (b *sqliteBackend) close() error {
	if b.memory {
		return b.writer.Close()
	}
	err1 := b.readers.Close()
	err2 := b.writer.Close()
	if err2 != nil {
		return err2
	}
	return err1
}

// execer is what *sql.Conn and *sql.Tx share.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// execScript runs a multi-statement script and counts the rows it changed
// with total_changes(), which SQLite keeps per connection.
func execScript(ctx context.Context, c execer, script string) (int64, error) {
	var before, after int64
	if err := c.QueryRowContext(ctx, "SELECT total_changes()").Scan(&before); err != nil {
		return 0, err
	}
	if _, err := c.ExecContext(ctx, script); err != nil {
		return 0, err
	}
	if err := c.QueryRowContext(ctx, "SELECT total_changes()").Scan(&after); err != nil {
		return 0, err
	}
	return after - before, nil
}

// sqliteTx is a transaction on the writer connection.
type sqliteTx struct {
	conn *sql.Conn
	tx   *sql.Tx
}

func (t *sqliteTx) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	res, err := t.tx.ExecContext(ctx, st.text, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *sqliteTx) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	rs, err := t.tx.QueryContext(ctx, st.text, args...)
	if err != nil {
		return nil, err
	}
	raw, err := newSQLRows(rs)
	if err != nil {
		return nil, err
	}
	return readAll(raw)
}

func (t *sqliteTx) execRaw(ctx context.Context, script string) (int64, error) {
	return execScript(ctx, t.tx, script)
}

func (t *sqliteTx) commit(context.Context) error {
	defer t.conn.Close()
	return t.tx.Commit()
}

func (t *sqliteTx) rollback(context.Context) error {
	defer t.conn.Close()
	return t.tx.Rollback()
}

// sqlRows adapts *sql.Rows to rawRows.
type sqlRows struct {
	rs   *sql.Rows
	cols []string
	vals []any
	ptrs []any
}

func newSQLRows(rs *sql.Rows) (*sqlRows, error) {
	cols, err := rs.Columns()
	if err != nil {
		rs.Close()
		return nil, err
	}
	r := &sqlRows{rs: rs, cols: cols, vals: make([]any, len(cols)), ptrs: make([]any, len(cols))}
	for i := range r.vals {
		r.ptrs[i] = &r.vals[i]
	}
	return r, nil
}

func (r *sqlRows) Next() bool        { return r.rs.Next() }
func (r *sqlRows) Columns() []string { return r.cols }
func (r *sqlRows) Err() error        { return r.rs.Err() }
func (r *sqlRows) Close()            { r.rs.Close() }

func (r *sqlRows) Values() ([]any, error) {
	if err := r.rs.Scan(r.ptrs...); err != nil {
		return nil, err
	}
	out := make([]any, len(r.vals))
	copy(out, r.vals)
	return out, nil
}
