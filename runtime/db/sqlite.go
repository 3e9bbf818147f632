package db

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"skydurable/runtime/task"
)

// SQLite connection settings. The busy timeout only matters for readers
// meeting a checkpoint and for other processes writing the same file; writers
// of this process queue on the single writer connection.
const (
	sqliteBusyTimeoutMS = 10000
	sqliteReaders       = 4
	// sqlitePrepared bounds each pool's held statements (preparedStatements);
	// statements past it are parsed on each call.
	sqlitePrepared = 1000
	// The checkpointer runs after sqliteCheckpointCommits writer commits
	// (about 1,000 pages of log at the durable engine's 7 or so pages a
	// commit, SQLite's own threshold), or sqliteCheckpointIdle after the
	// last one it saw; the writer checkpoints itself only past
	// sqliteWriterCheckpointPages, a net for when the checkpointer falls
	// behind (SQLite's default is 1,000).
	sqliteCheckpointCommits     = 150
	sqliteCheckpointIdle        = time.Second
	sqliteWriterCheckpointPages = 10000
)

// The checkpointer. In WAL mode a commit appends its pages to the log, and
// by default the commit that takes the log past 1,000 pages copies the log
// into the database file and, with synchronous=NORMAL, waits for its
// fsyncs: one run in 35 or so of a workflow called one at a time waited
// about 10 ms for it (docs/benchmarks.md, "SQLite: checkpoints off the
// writer"). So a writable file database checkpoints in the background: a
// goroutine with a connection of its own runs PRAGMA
// wal_checkpoint(PASSIVE) (it waits for no reader or writer, and copies
// what no reader still needs) every sqliteCheckpointCommits writer
// commits, and sqliteCheckpointIdle after writes that did not reach that
// many. The log stays as short as before (a long one makes every page read
// search a longer WAL index), and the writer checkpoints itself only past
// sqliteWriterCheckpointPages. Other processes on the file keep SQLite's
// default.
type checkpointer struct {
	conn    *sql.DB
	writes  atomic.Int64 // writer commits so far
	wake    chan struct{}
	done    chan struct{}
	stopped sync.WaitGroup
}

func startCheckpointer(conn *sql.DB) *checkpointer {
	c := &checkpointer{conn: conn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.stopped.Add(1)
	go func() {
		defer c.stopped.Done()
		idle := time.NewTicker(sqliteCheckpointIdle)
		defer idle.Stop()
		var seen int64
		for {
			select {
			case <-c.done:
				return
			case <-c.wake:
			case <-idle.C:
			}
			if w := c.writes.Load(); w != seen {
				seen = w
				// A failure (the file busy with another process's
				// checkpoint) is tried again at the next turn; the
				// writer's own checkpoint is the net.
				_, _ = c.conn.Exec("PRAGMA wal_checkpoint(PASSIVE)")
			}
		}
	}()
	return c
}

// wrote notes a writer commit (nil: no checkpointer).
func (c *checkpointer) wrote() {
	if c != nil && c.writes.Add(1)%sqliteCheckpointCommits == 0 {
		select {
		case c.wake <- struct{}{}:
		default: // a turn is due already
		}
	}
}

func (c *checkpointer) stop() error {
	if c == nil {
		return nil
	}
	close(c.done)
	c.stopped.Wait()
	return c.conn.Close()
}

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
	// written and read hold the statements prepared on writer and readers.
	written, read preparedStatements
	// checkpoints is the background checkpointer of a writable file
	// database (nil: none).
	checkpoints *checkpointer
}

// preparedStatements holds one pool's statements prepared, by their text:
// SQLite parses and plans a statement when it is prepared, which for the
// engine's longer statements (the claim) costs more than running them, and
// database/sql prepares a statement again on every call unless it is held.
// A *sql.Stmt prepares itself once on each connection it meets; SQLite
// prepares it again itself when the schema changed.
type preparedStatements struct {
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
	// missed are statements a transaction ran unprepared: it holds the
	// writer's only connection, so they are prepared by the next call that
	// waits for that connection anyway (prepareMissed).
	missed []*statement
}

// held returns st's held statement, or nil.
func (p *preparedStatements) held(st *statement) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stmts[st.text]
}

// get returns st prepared on pool, preparing it on first use; nil (run it
// unprepared) for a statement that changes the schema, or once the pool
// holds sqlitePrepared statements. It holds no lock while it prepares: that
// waits for a connection, which a transaction may hold.
func (p *preparedStatements) get(ctx context.Context, pool *sql.DB, st *statement) (*sql.Stmt, error) {
	if s := p.held(st); s != nil || st.reshape {
		return s, nil
	}
	p.mu.Lock()
	full := len(p.stmts) >= sqlitePrepared
	p.mu.Unlock()
	if full {
		return nil, nil
	}
	s, err := pool.PrepareContext(ctx, st.text)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if other, ok := p.stmts[st.text]; ok { // prepared meanwhile by another call
		s.Close()
		return other, nil
	}
	if p.stmts == nil {
		p.stmts = map[string]*sql.Stmt{}
	}
	p.stmts[st.text] = s
	return s, nil
}

// miss notes that a transaction ran st unprepared.
func (p *preparedStatements) miss(st *statement) {
	if st.reshape {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.missed) < sqlitePrepared {
		p.missed = append(p.missed, st)
	}
}

// prepareMissed prepares the statements transactions missed, on pool (the
// writer), before a call on it; one that fails to prepare stays unheld.
func (p *preparedStatements) prepareMissed(ctx context.Context, pool *sql.DB) {
	p.mu.Lock()
	missed := p.missed
	p.missed = nil
	p.mu.Unlock()
	for _, st := range missed {
		_, _ = p.get(ctx, pool, st)
	}
}

// close closes every held statement.
func (p *preparedStatements) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stmts {
		s.Close()
	}
	p.stmts = nil
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
	// temp_store(MEMORY) on the writer: its savepoints' sub-journals (a
	// savepoint per write in the durable store's shared transactions, see
	// runtime/durable/store/sqlite/groupcommit.go) stay in memory instead of
	// a temporary file written with a system call per page; they only undo
	// a savepoint inside a transaction, so crash safety is the WAL's as
	// before. Readers keep temporary files: their sorts can be large.
	writerParams := "&_pragma=journal_mode(WAL)&_pragma=temp_store(MEMORY)&_txlock=immediate" +
		"&_pragma=wal_autocheckpoint(" + strconv.Itoa(sqliteWriterCheckpointPages) + ")"
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
	b := &sqliteBackend{path: path, writer: writer, readers: readers}
	if !readOnly {
		conn, err := sql.Open("sqlite", base)
		if err != nil {
			writer.Close()
			readers.Close()
			return nil, task.Errorf(task.Io, "sqlite: cannot open %q: %w", path, err)
		}
		conn.SetMaxOpenConns(1)
		b.checkpoints = startCheckpointer(conn)
	}
	return b, nil
}

func (b *sqliteBackend) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	b.written.prepareMissed(ctx, b.writer)
	prepared, err := b.written.get(ctx, b.writer, st)
	if err != nil {
		return 0, err
	}
	var res sql.Result
	if prepared != nil {
		res, err = prepared.ExecContext(ctx, args...)
	} else {
		res, err = b.writer.ExecContext(ctx, st.text, args...)
	}
	if err != nil {
		return 0, err
	}
	b.checkpoints.wrote()
	return res.RowsAffected()
}

func (b *sqliteBackend) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	pool, held := b.readers, &b.read
	if st.writes || b.memory {
		pool, held = b.writer, &b.written
		held.prepareMissed(ctx, pool)
		b.checkpoints.wrote()
	}
	prepared, err := held.get(ctx, pool, st)
	if err != nil {
		return nil, err
	}
	var rs *sql.Rows
	if prepared != nil {
		rs, err = prepared.QueryContext(ctx, args...)
	} else {
		rs, err = pool.QueryContext(ctx, st.text, args...)
	}
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
	b.checkpoints.wrote()
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
	return &sqliteTx{conn: conn, tx: tx, held: &b.written, checkpoints: b.checkpoints}, nil
}

// schemaChanged is a no-op: SQLite re-prepares statements itself.
func (b *sqliteBackend) schemaChanged() {}

func (b *sqliteBackend) close() error {
	b.written.close()
	b.read.close()
	if b.memory {
		return b.writer.Close()
	}
	err0 := b.checkpoints.stop()
	err1 := b.readers.Close()
	err2 := b.writer.Close()
	return errors.Join(err2, err1, err0)
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

// sqliteTx is a transaction on the writer connection. It runs the writer's
// held statements; one not held yet cannot be prepared on the writer while
// the transaction has its only connection, so it runs unprepared and is
// noted as missed.
type sqliteTx struct {
	conn        *sql.Conn
	tx          *sql.Tx
	held        *preparedStatements
	checkpoints *checkpointer
}

// stmt returns st's held statement bound to the transaction, or nil.
func (t *sqliteTx) stmt(ctx context.Context, st *statement) *sql.Stmt {
	s := t.held.held(st)
	if s == nil {
		t.held.miss(st)
		return nil
	}
	return t.tx.StmtContext(ctx, s)
}

func (t *sqliteTx) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	var res sql.Result
	var err error
	if s := t.stmt(ctx, st); s != nil {
		res, err = s.ExecContext(ctx, args...)
	} else {
		res, err = t.tx.ExecContext(ctx, st.text, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (t *sqliteTx) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	var rs *sql.Rows
	var err error
	if s := t.stmt(ctx, st); s != nil {
		rs, err = s.QueryContext(ctx, args...)
	} else {
		rs, err = t.tx.QueryContext(ctx, st.text, args...)
	}
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
	t.checkpoints.wrote()
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
