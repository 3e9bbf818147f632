// Package db is Sky's database layer: one *DB over PostgreSQL (pgx/v5 pool)
// and SQLite (modernc.org/sqlite, pure Go), with the same calls on both.
//
// Guarantees:
//
//   - Callers write `?` placeholders on both drivers. For PostgreSQL they are
//     rewritten to $1..$n, skipping quoted strings, quoted identifiers,
//     dollar-quoted bodies and comments; rewrites are cached. A wrong argument
//     count fails before reaching the server, naming both counts and the SQL.
//     (The jsonb `?` operators therefore cannot be written; use
//     jsonb_exists and friends.)
//   - Every returned error is a *task.Error whose Cause is the driver error;
//     the mapping to Sky error kinds lives in errors.go (unique violation is
//     Conflict, bad SQL is InvalidInput, a lost server or a closed DB is
//     Unavailable, a deadline is Timeout, no row is NotFound wrapping
//     ErrNoRows).
//   - SQLite runs in WAL mode with foreign keys on and synchronous=NORMAL;
//     the writer keeps its temporary data (savepoints' sub-journals) in
//     memory.
//     All writes and all transactions go through ONE writer connection
//     (transactions begin IMMEDIATE), plain SELECTs go to a small pool of
//     read-only connections, so concurrent writers queue in Go instead of
//     failing with SQLITE_BUSY.
//   - time.Time arguments are sent as UTC text in TimeLayout (fixed width,
//     so text order is time order): SQLite stores that text, PostgreSQL
//     parses it into a TIMESTAMPTZ/TIMESTAMP/DATE column (microsecond
//     precision) and a TEXT column holds the same text as on SQLite. Scanning
//     into *time.Time accepts either form; times read are in UTC.
//   - WithTransaction commits when its function returns nil and rolls back
//     otherwise (also on panic). The context it passes on carries the
//     transaction, so calls on the same pool made with that context join it,
//     as does a nested WithTransaction.
//   - WithLazyTx gives an ambient transaction that is begun only by the first
//     statement run under its context; statements from parallel goroutines
//     are serialised. The durable engine uses it to commit a step's own
//     writes atomically with the step's journal row.
//
// On SQLite a write made on the pool (with a context that does not carry
// the transaction) while the same goroutine holds a transaction waits for
// that transaction to end: inside a transaction use its *DB or its context.
//
// SQLite TEMP tables live on one connection: create and use them inside
// one transaction (which runs on the writer connection).
//
// On PostgreSQL, statements are prepared and cached per connection; after an
// ALTER or DROP run through a DB its pool's connections are recycled, and a
// stale cached plan (schema changed by another process) is retried once for
// an autocommitted Exec, otherwise reported as a retryable Unavailable.
//
// Notifications: DB.Listener is one LISTEN session per database (per
// listening URL) per process that serves every subscriber, opened by the
// first and closed with the last, reopened when dropped; on SQLite it is
// in-process (Listener.Notify).
//
// Query results inside a transaction are read fully before the call returns
// (so the transaction's connection is free for the next statement); outside a
// transaction rows stream and must be closed.
//
// It may import runtime/task, the two drivers (pgx, modernc.org/sqlite) and
// the standard library; it is where the drivers live.
package db
