package db

import (
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"skydurable/runtime/task"
)

// Pooler says what stands between the engine's pool and PostgreSQL. Through
// a transaction pooler (PgBouncer's pool_mode = transaction) consecutive
// statements of one client connection may run on different server
// connections, so nothing may outlive a transaction on the server: no
// named prepared statements (pgx's default statement cache), no session
// settings, no LISTEN.
type Pooler string

// The poolers Options.Pooler and SKY_DB_POOLER accept.
const (
	// PoolerAuto (the default) is PoolerTransaction when the URL's port is
	// PgBouncer's default, 6432, and PoolerNone otherwise.
	PoolerAuto Pooler = ""
	// PoolerNone: a direct connection (or a session pooler, which is the
	// same for the client). Statements are prepared once per connection
	// and cached.
	PoolerNone Pooler = "none"
	// PoolerSession: a pooler in session mode; the same as PoolerNone.
	PoolerSession Pooler = "session"
	// PoolerTransaction: a pooler in transaction mode. Statements go in
	// pgx's exec mode: the extended protocol with the unnamed statement,
	// parse, bind and execute in one round trip, nothing cached on the
	// server.
	PoolerTransaction Pooler = "transaction"
)

// EnvPooler names the environment variable Db.connect and `sky durable`
// read the pooler from.
const EnvPooler = "SKY_DB_POOLER"

// pgBouncerPort is PgBouncer's default listening port.
const pgBouncerPort = 6432

// ParsePooler reads a pooler setting ("" is PoolerAuto).
func ParsePooler(s string) (Pooler, error) {
	switch p := Pooler(strings.ToLower(strings.TrimSpace(s))); p {
	case PoolerAuto, PoolerNone, PoolerSession, PoolerTransaction:
		return p, nil
	}
	return "", task.Errorf(task.InvalidInput,
		"%s=%q is not a pooler mode; hint: use transaction (PgBouncer pool_mode = transaction), session or none", EnvPooler, s)
}

// Resolve turns PoolerAuto into PoolerTransaction or PoolerNone for the
// PostgreSQL URL dsn (by its first host's port); other values are returned
// as they are.
func (p Pooler) Resolve(dsn string) Pooler {
	if p != PoolerAuto {
		return p
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err == nil && cfg.Port == pgBouncerPort {
		return PoolerTransaction
	}
	return PoolerNone
}

// Options tune OpenWith.
type Options struct {
	// Pooler is what stands between the pool and PostgreSQL (ignored for
	// SQLite).
	Pooler Pooler
	// StatementTimeout, when positive, makes PostgreSQL cancel any
	// statement that runs longer (the statement_timeout parameter, sent
	// when each connection starts). A statement_timeout in the DSN wins;
	// it is not sent through a pooler (PoolerTransaction or
	// PoolerSession), which may refuse startup parameters: set it on the
	// role there (ALTER ROLE ... SET statement_timeout). Ignored for SQLite.
	StatementTimeout time.Duration
	// ReadOnly opens a SQLite file read-only (mode=ro): no write, no
	// journal-mode change, no directory created, so a file the process may
	// not write (or a copy taken for inspection) can be read. A write is a
	// PermissionDenied error. Ignored for PostgreSQL.
	ReadOnly bool
}

// applyPooler configures cfg for pooler (already resolved).
func applyPooler(cfg *pgxpool.Config, pooler Pooler) {
	if pooler != PoolerTransaction {
		return
	}
	cc := cfg.ConnConfig
	cc.DefaultQueryExecMode = pgx.QueryExecModeExec
	cc.StatementCacheCapacity = 0
	cc.DescriptionCacheCapacity = 0
}
