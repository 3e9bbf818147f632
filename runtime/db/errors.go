package db

import (
	"context"
	"database/sql"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"skydurable/runtime/task"
)

// ErrNoRows is the cause of the NotFound error QueryRow's Scan returns when
// the query produced no row: errors.Is(err, db.ErrNoRows) holds.
var ErrNoRows = errors.New("no rows in result set")

// errClosed is what every call on a closed DB returns.
func errClosed(d Dialect) error {
	return &task.Error{Kind: task.Unavailable,
		Message: d.String() + ": database is closed; hint: the DB was closed (Close) before this call",
		Cause:   net.ErrClosed}
}

func noRows(d Dialect, sqlText string) error {
	return &task.Error{Kind: task.NotFound,
		Message: d.String() + ": no row returned by " + quoteSQL(sqlText), Cause: ErrNoRows}
}

// quoteSQL shortens sql to one line for an error message.
func quoteSQL(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return "`" + s + "`"
}

// mapError is THE mapping from driver errors to Sky error kinds. The result
// is a *task.Error whose Cause is err; its message names the driver, the
// driver's text and the SQL.
func mapError(d Dialect, sqlText string, err error) error {
	if err == nil {
		return nil
	}
	var te *task.Error
	if errors.As(err, &te) {
		return err
	}
	kind, hint := classify(err)
	msg := d.String() + ": " + err.Error()
	if sqlText != "" {
		msg += " in " + quoteSQL(sqlText)
	}
	if hint != "" {
		msg += "; hint: " + hint
	}
	return &task.Error{Kind: kind, Message: msg, Cause: err}
}

func classify(err error) (task.Kind, string) {
	switch {
	case errors.Is(err, pgx.ErrNoRows), errors.Is(err, sql.ErrNoRows), errors.Is(err, ErrNoRows):
		return task.NotFound, ""
	case errors.Is(err, context.DeadlineExceeded):
		return task.Timeout, "the statement ran past its context deadline"
	case errors.Is(err, context.Canceled):
		return task.Unavailable, "the context was cancelled"
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return classifyPostgres(pgErr)
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		return classifySQLite(liteErr)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, sql.ErrConnDone), pgconn.SafeToRetry(err):
		return task.Unavailable, "the database server is unreachable or the connection was lost; retry later"
	}
	text := err.Error()
	switch {
	case strings.Contains(text, "closed pool"), strings.Contains(text, "conn closed"),
		strings.Contains(text, "database is closed"):
		return task.Unavailable, "the connection pool is closed"
	case strings.Contains(text, "tx is closed"), errors.Is(err, sql.ErrTxDone):
		return task.InvalidInput, "the transaction already ended; use the *DB only inside its transaction function"
	case strings.Contains(text, "cannot encode"), strings.Contains(text, "unable to encode"),
		strings.Contains(text, "failed to encode"):
		return task.InvalidInput, "an argument does not fit the column's type"
	}
	return task.Unexpected, ""
}

func classifyPostgres(e *pgconn.PgError) (task.Kind, string) {
	switch {
	case e.Code == "23505":
		return task.Conflict, "a row with this key already exists"
	case strings.HasPrefix(e.Code, "23"):
		return task.InvalidInput, "the row violates a constraint"
	case e.Code == "40001", e.Code == "40P01":
		return task.Unavailable, "a concurrent transaction conflicted; retry the transaction"
	case e.Code == "0A000" && strings.Contains(e.Message, "cached plan"):
		return task.Unavailable, "the table's schema changed under a prepared statement; retry"
	case e.Code == "26000", e.Code == "42P05":
		return task.Unavailable, "a prepared statement vanished or already exists: is a transaction pooler (PgBouncer) in between? Set " + EnvPooler + "=transaction"
	case e.Code == "57014":
		return task.Timeout, "the statement was cancelled"
	case strings.HasPrefix(e.Code, "08"), strings.HasPrefix(e.Code, "57P"), strings.HasPrefix(e.Code, "53"):
		return task.Unavailable, "the database server is unavailable; retry later"
	case e.Code == "42P01":
		return task.InvalidInput, "the table does not exist; did the schema set-up run?"
	case e.Code == "42703":
		return task.InvalidInput, "the column does not exist; check its spelling"
	case e.Code == "42601":
		return task.InvalidInput, "check the SQL syntax"
	case e.Code == "25P02":
		return task.InvalidInput, "an earlier statement in this transaction failed; roll it back"
	case e.Code == "3D000":
		return task.NotFound, "the database does not exist"
	case e.Code == "28000", e.Code == "28P01", e.Code == "42501":
		return task.PermissionDenied, "check the user's credentials and grants"
	case strings.HasPrefix(e.Code, "42"), strings.HasPrefix(e.Code, "22"):
		return task.InvalidInput, ""
	}
	return task.Unexpected, ""
}

func classifySQLite(e *sqlite.Error) (task.Kind, string) {
	code := e.Code()
	switch code {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return task.Conflict, "a row with this key already exists"
	}
	switch code & 0xff {
	case sqlite3.SQLITE_CONSTRAINT:
		return task.InvalidInput, "the row violates a constraint"
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return task.Unavailable, "the database is locked by another writer; retry"
	case sqlite3.SQLITE_INTERRUPT:
		return task.Timeout, "the statement was interrupted (context cancelled or past its deadline)"
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		return task.Io, "check the database file, its directory and the disk"
	case sqlite3.SQLITE_READONLY:
		return task.PermissionDenied, "the database file is read-only"
	case sqlite3.SQLITE_RANGE, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG:
		return task.InvalidInput, ""
	case sqlite3.SQLITE_ERROR:
		text := e.Error()
		switch {
		case strings.Contains(text, "no such table"):
			return task.InvalidInput, "the table does not exist; did the schema set-up run?"
		case strings.Contains(text, "no such column"), strings.Contains(text, "has no column"):
			return task.InvalidInput, "the column does not exist; check its spelling"
		case strings.Contains(text, "syntax error"), strings.Contains(text, "incomplete input"):
			return task.InvalidInput, "check the SQL syntax"
		}
		return task.InvalidInput, ""
	}
	return task.Unexpected, ""
}

// Rejected reports whether err is the database refusing a statement (a
// PostgreSQL error response, an SQLite error code): the statement did not
// take effect, and an autocommitted one changed nothing. Any other error
// (a lost connection, a failure reading the result on the client side)
// leaves open whether an autocommitted statement committed.
func Rejected(err error) bool {
	var pgErr *pgconn.PgError
	var liteErr *sqlite.Error
	return errors.As(err, &pgErr) || errors.As(err, &liteErr)
}
