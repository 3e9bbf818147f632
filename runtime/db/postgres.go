package db

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"skydurable/runtime/task"
)

// defaultPostgresPoolSize is used when the DSN does not set pool_max_conns.
const defaultPostgresPoolSize = 10

// DefaultConnectTimeout bounds each new PostgreSQL connection (dial, TLS
// and startup) when neither the DSN's connect_timeout nor
// PGCONNECT_TIMEOUT sets it: a server that accepts and never answers fails
// the open or the pool's next connection after this long instead of
// stalling it for minutes.
const DefaultConnectTimeout = 10 * time.Second

// SetDefaultConnectTimeout gives cfg, parsed from dsn, the
// DefaultConnectTimeout unless dsn's connect_timeout or PGCONNECT_TIMEOUT
// sets one (for connections made outside a pool, such as a listener's).
func SetDefaultConnectTimeout(cfg *pgconn.Config, dsn string) {
	if !strings.Contains(dsn, "connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
}

// checkHost refuses a postgres:// URL that names no host (and no host=
// parameter, and no PGHOST): pgx would quietly connect to libpq's default
// socket or localhost, which is rarely what a DATABASE_URL such as
// "postgres://" meant.
func checkHost(dsn string) error {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return nil
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Host != "" || u.Query().Get("host") != "" || os.Getenv("PGHOST") != "" {
		return nil // a parse error is ParseConfig's to report
	}
	shown := dsn
	if _, secret := u.User.Password(); secret {
		shown = u.Redacted()
	}
	return task.Errorf(task.InvalidInput,
		"postgres: the URL %q names no host; hint: name it, e.g. postgres://user@localhost:5432/dbname (or ?host=/run/postgresql for a Unix socket)", shown)
}

// Type OIDs read specially: json and jsonb keep their text verbatim, a date
// reads as YYYY-MM-DD.
const (
	oidJSON  = 114
	oidJSONB = 3802
	oidDate  = 1082
)

// postgresBackend is a pgx connection pool.
type postgresBackend struct {
	pool *pgxpool.Pool
	// pooled is true when a transaction pooler stands between the pool and
	// the server: no session state (LISTEN) survives a statement.
	pooled bool
	// dsn is the connection string d was opened with (DB.Listener).
	dsn string
}

func openPostgres(ctx context.Context, dsn string, opts Options) (backend, error) {
	if err := checkHost(dsn); err != nil {
		return nil, err
	}
	pooler := opts.Pooler.Resolve(dsn)
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx's parse errors already hide the password.
		return nil, task.Errorf(task.InvalidInput,
			"postgres: cannot parse the connection string: %w; hint: use postgres://user@host:5432/dbname", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = defaultPostgresPoolSize
	}
	SetDefaultConnectTimeout(&cfg.ConnConfig.Config, dsn)
	if _, set := cfg.ConnConfig.RuntimeParams["statement_timeout"]; opts.StatementTimeout > 0 && !set && pooler == PoolerNone {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(opts.StatementTimeout.Milliseconds(), 10)
	}
	applyPooler(cfg, pooler)
	where := cfg.ConnConfig.Host + ":" + strconv.Itoa(int(cfg.ConnConfig.Port)) + "/" + cfg.ConnConfig.Database
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, task.Errorf(task.Unavailable, "postgres: cannot create a pool for %s: %w", where, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		kind := task.Unavailable
		if k, _ := classify(err); k == task.NotFound || k == task.PermissionDenied || k == task.Timeout {
			kind = k
		}
		// Only a timeout is "does not answer": a refused port or a server's
		// own refusal (no such database, bad password) comes back at once.
		failure := "cannot connect to the server at " + where
		if isConnectTimeout(err) {
			failure = "the server at " + where + " does not answer"
			if t := cfg.ConnConfig.ConnectTimeout; t > 0 {
				failure += " within " + t.String() + " (connect_timeout)"
			}
		}
		// pgconn puts each address it tried on a line of its own; the
		// message stays one line, as every error sky prints does.
		cause := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
		return nil, &task.Error{Kind: kind, Cause: err,
			Message: "postgres: " + failure + ": " + cause + "; hint: " + connectHint(err, cfg.ConnConfig.Database)}
	}
	return &postgresBackend{pool: pool, pooled: pooler == PoolerTransaction, dsn: dsn}, nil
}

// connectHint is the fix for a failed connection attempt, by its cause: a
// database the server does not have, a login it refuses, a host name that
// does not resolve; else the server is down or elsewhere.
func connectHint(err error, database string) string {
	var pgErr *pgconn.PgError
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "3D000":
		return fmt.Sprintf("create the database (CREATE DATABASE %q) or fix its name in the URL", database)
	case errors.As(err, &pgErr) && (pgErr.Code == "28P01" || pgErr.Code == "28000"):
		return "check the user and password of the URL (or PGPASSWORD), and that pg_hba.conf lets it in"
	case errors.As(err, &dnsErr):
		return "check the host name of the URL"
	}
	return "is PostgreSQL running and does the database exist?"
}

// isConnectTimeout reports whether a failed connection attempt gave up
// waiting (connect_timeout or the caller's deadline).
func isConnectTimeout(err error) bool {
	var netErr net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) ||
		strings.Contains(err.Error(), "timeout")
}

func (b *postgresBackend) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	run := b.execPlain
	if genericPlan(ctx) && !b.pooled {
		run = b.execGeneric
	}
	n, err := run(ctx, st, args)
	if isStalePlan(err) {
		// The statement did not run (autocommit) and pgx has dropped the
		// stale plan from this connection's cache: run it once more.
		n, err = run(ctx, st, args)
	}
	return n, err
}

func (b *postgresBackend) execPlain(ctx context.Context, st *statement, args []any) (int64, error) {
	tag, err := b.pool.Exec(ctx, st.text, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (b *postgresBackend) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	if genericPlan(ctx) && !b.pooled {
		return b.queryGeneric(ctx, st, args)
	}
	rs, err := b.pool.Query(ctx, st.text, args...)
	if err != nil {
		return nil, err
	}
	return newPgRows(rs), nil
}

func (b *postgresBackend) execRaw(ctx context.Context, script string) (int64, error) {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	return execScriptPg(ctx, conn.Conn().PgConn(), script)
}

func (b *postgresBackend) begin(ctx context.Context) (txConn, error) {
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return &postgresTx{tx: tx}, nil
}

// schemaChanged drops every pooled connection (each as it is released) so no
// connection keeps a prepared statement whose result shape changed; without
// it the next use on each connection fails with "cached plan must not change
// result type".
func (b *postgresBackend) schemaChanged() { b.pool.Reset() }

// isStalePlan reports PostgreSQL's error for a cached prepared statement
// whose result type changed under it (after ALTER/DROP elsewhere).
func isStalePlan(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "0A000" && strings.Contains(pgErr.Message, "cached plan")
}

func (b *postgresBackend) close() error {
	b.pool.Close()
	return nil
}

// execScriptPg runs a script through the simple protocol (which allows many
// statements) and sums the rows each statement affected.
func execScriptPg(ctx context.Context, c *pgconn.PgConn, script string) (int64, error) {
	results, err := c.Exec(ctx, script).ReadAll()
	if err != nil {
		return 0, err
	}
	var n int64
	for _, r := range results {
		if r.Err != nil {
			return 0, r.Err
		}
		n += r.CommandTag.RowsAffected()
	}
	return n, nil
}

// postgresTx is a pgx transaction.
type postgresTx struct {
	tx pgx.Tx
}

func (t *postgresTx) exec(ctx context.Context, st *statement, args []any) (int64, error) {
	tag, err := t.tx.Exec(ctx, st.text, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func (t *postgresTx) query(ctx context.Context, st *statement, args []any) (rawRows, error) {
	rs, err := t.tx.Query(ctx, st.text, args...)
	if err != nil {
		return nil, err
	}
	return readAll(newPgRows(rs))
}

func (t *postgresTx) execRaw(ctx context.Context, script string) (int64, error) {
	return execScriptPg(ctx, t.tx.Conn().PgConn(), script)
}

func (t *postgresTx) commit(ctx context.Context) error   { return t.tx.Commit(ctx) }
func (t *postgresTx) rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// pgRows adapts pgx.Rows to rawRows; json and jsonb columns keep their text.
type pgRows struct {
	rs   pgx.Rows
	cols []string
}

func newPgRows(rs pgx.Rows) *pgRows {
	fds := rs.FieldDescriptions()
	cols := make([]string, len(fds))
	for i, fd := range fds {
		cols[i] = fd.Name
	}
	return &pgRows{rs: rs, cols: cols}
}

func (r *pgRows) Next() bool        { return r.rs.Next() }
func (r *pgRows) Columns() []string { return r.cols }
func (r *pgRows) Err() error        { return r.rs.Err() }
func (r *pgRows) Close()            { r.rs.Close() }

func (r *pgRows) Values() ([]any, error) {
	vals, err := r.rs.Values()
	if err != nil {
		return nil, err
	}
	raw := r.rs.RawValues()
	for i, fd := range r.rs.FieldDescriptions() {
		if t, ok := vals[i].(time.Time); ok && fd.DataTypeOID == oidDate {
			vals[i] = t.Format(time.DateOnly)
			continue
		}
		if (fd.DataTypeOID != oidJSON && fd.DataTypeOID != oidJSONB) || i >= len(raw) || raw[i] == nil {
			continue
		}
		b := raw[i]
		if fd.DataTypeOID == oidJSONB && fd.Format == pgx.BinaryFormatCode && len(b) > 0 {
			b = b[1:] // jsonb binary format: a version byte, then the text
		}
		vals[i] = string(b)
	}
	return vals, nil
}
